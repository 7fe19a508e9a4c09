import type { DeploymentPlan, IslandPlan } from "../plan/deployment-plan";
import { islandDir, jobName } from "./sbatch";
import { SECRETS, secretOrder, secretValueProblem, type SecretName } from "../credentials";
import { loginShellArg, shq } from "../shell";
import { renderOneLine } from "../templates";
import { boundedOnLogin, type LoginBound } from "./login-bound";

/** The island's secrets directory (0700) beside its script and logs; one 0600 file per secret. */
export const secretsDir = (islandDirectory: string) => `${islandDirectory}/secrets`;

/**
 * The command that puts an island's secrets on the cluster. The values arrive on its stdin (a
 * secret input, never logged) as `<file> <value>` lines; the command line itself holds no value.
 * Delete removes the directory, so nothing outlives `pulumi destroy`.
 */
export interface SecretFilesJob {
  create: string;
  delete: string;
  /** The bound `timeout` enforces on both (login-bound.ts). */
  bound: LoginBound;
}

/** Writing or removing a few small files: a minute is plenty, and there is nothing to clean up after. */
const SECRETS_BOUND: LoginBound = { seconds: 60, killAfter: 10 };

export function renderSecretFiles(
  plan: DeploymentPlan,
  island: IslandPlan,
  names: readonly SecretName[],
): SecretFilesJob {
  return renderSecretFilesIn(jobName(plan, island.index), islandDir(plan, island), names);
}

/** The secrets command of job `name` whose folder is `folder` (an island's, or a co-scheduled job's). */
export function renderSecretFilesIn(name: string, folder: string, names: readonly SecretName[]): SecretFilesJob {
  const files = secretOrder(names).map((n) => SECRETS[n].file);
  if (!files.length) throw new Error("internal error: renderSecretFiles needs at least one secret");
  const dir = secretsDir(folder);
  // Every known file is removed first, so a credential dropped from config leaves no file behind.
  const known = Object.values(SECRETS).map((s) => s.file);
  const script = renderOneLine("slurm/secrets.sh.mustache", {
    jobName: shq(name),
    secretsDir: shq(dir),
    known,
    filePattern: [files.join(" | ")],
    count: files.length,
  });
  const del = renderOneLine("slurm/secrets-delete.sh.mustache", {
    jobName: shq(name),
    secretsDir: shq(dir),
  });
  return {
    create: boundedOnLogin(SECRETS_BOUND, `bash -c ${loginShellArg(script)}`),
    delete: boundedOnLogin(SECRETS_BOUND, `bash -c ${loginShellArg(del)}`),
    bound: SECRETS_BOUND,
  };
}

/**
 * The stdin of the secrets command. A value must be one line of text: a newline would split it
 * and a NUL cannot pass through bash. The error names the config key, never the value.
 */
export function secretFilesPayload(
  values: Partial<Record<SecretName, string>>,
  configKey: (name: SecretName) => string,
): string {
  const lines: string[] = [];
  for (const name of secretOrder(Object.keys(values) as SecretName[])) {
    const v = values[name]!;
    const problem = secretValueProblem(v);
    if (problem) throw new Error(`${configKey(name)} must be one non-empty line of text (it has ${problem})`);
    lines.push(`${SECRETS[name].file} ${v}`);
  }
  return lines.map((l) => `${l}\n`).join("");
}
