import { SECRETS, secretOrder, secretValueProblem, type SecretName } from "../credentials";
import { dryRunLine } from "../host/island-result";
import { scriptHash } from "../host/script-hash";
import { underTimeout, type TimeBound } from "../host/time-bound";
import { readinessView } from "../host/readiness";
import { weightsRecordView } from "../host/weights-record";
import type { DeploymentPlan, IslandPlan } from "../plan/deployment-plan";
import { heredocDelimiter, shq } from "../shell";
import { renderTemplate } from "../templates";
import { islandDir, runName } from "./names";
import { localSettings } from "./settings";
import { gpusNeeded, renderSupervisor } from "./supervisor";

/** Slack on top of the ready timeout for stopping an older run, starting and failing. */
const CREATE_SLACK_S = 120;
/** Room for create's cleanup after the SIGTERM of its bound: the logs' tails and at most 40 s of stopping. */
const CREATE_KILL_AFTER_S = 60;
/**
 * delete waits at most 40 s for the run to go. Both commands run under `timeout`
 * (host/time-bound.ts): local.Command's customTimeouts end only the provider's context, and
 * exec.CommandContext then kills the `/bin/sh -c` it started and nothing below it (pulumi-command
 * v1.2.1 provider/pkg/provider/local/commandOutputs.go run).
 */
const DELETE_BOUND = { seconds: 120, killAfter: 10 };

/** The environment variable a credential reaches the create command in (a secret input of local.Command). */
export const secretEnv = (name: SecretName) => `FLEET_SECRET_${SECRETS[name].file.toUpperCase()}`;

/**
 * The create command's environment for the configured credentials, each under its secretEnv name.
 * A value must be one line of text, as on SLURM (secretValueProblem); the error names the config
 * key, never the value.
 */
export function secretEnvironment(
  values: Partial<Record<SecretName, string>>,
  configKey: (name: SecretName) => string,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of secretOrder(Object.keys(values) as SecretName[])) {
    const problem = secretValueProblem(values[name]!);
    if (problem) throw new Error(`${configKey(name)} must be one non-empty line of text (it has ${problem})`);
    env[secretEnv(name)] = values[name]!;
  }
  return env;
}

/** Everything one island's local.Command needs. */
export interface LocalRun {
  runName: string;
  islandDir: string;
  /** `timeout ... bash -s`: the create script comes on stdin. */
  create: string;
  stdin: string;
  /** `timeout ... bash -c '<delete script>'`. */
  delete: string;
  /** The supervisor script the create writes and starts. */
  script: string;
  /** Hash of the supervisor script: a new hash means a new run (the old one is stopped first). */
  scriptHash: string;
  dryRun: boolean;
  bounds: { create: TimeBound; delete: TimeBound };
}

/** The create script's view (every value shell-quoted) and the supervisor's hash. */
function localCreateView(
  plan: DeploymentPlan,
  island: IslandPlan,
  secrets: readonly SecretName[],
): { view: object; script: string; scriptHash: string } {
  const t = localSettings(plan, "renderLocalRun");
  const name = runName(plan, island.index);
  const dir = islandDir(plan, island);
  const script = renderSupervisor(plan, island, secrets);
  const hash = scriptHash(name, script);
  const scriptName = `${name}.sh`;
  const ordered = secretOrder(secrets);
  const view = {
    runName: shq(name),
    island: island.name,
    islandDir: shq(dir),
    scriptName: shq(scriptName),
    scriptHash: hash,
    readyTimeout: t.ready_timeout,
    readyTimeoutKey: "local.ready_timeout",
    gpusNeeded: gpusNeeded(plan, island),
    cpu: t.device === "cpu",
    gpuList: t.gpus ? t.gpus.join(" ") : undefined,
    gpuSource: t.gpus ? "local.gpus" : "nvidia-smi -L",
    script: script.trimEnd(),
    scriptDelimiter: heredocDelimiter("FLEET_SCRIPT", script),
    dryRun: plan.dryRun,
    dryRunLine: shq(dryRunLine(plan, island, name, `${dir}/${scriptName}`)),
    hasSecrets: ordered.length > 0,
    secretFiles: ordered.map((s) => ({
      env: secretEnv(s),
      file: SECRETS[s].file,
      value: `"\${${secretEnv(s)}:?the credential is not in the environment}"`,
    })),
    nodes: island.nodes.map((n) => ({ index: n.index })),
    // The readiness partials read the key from its file in the island's folder (run.sh wrote it).
    ...readinessView(plan, island, name, ordered, `${dir}/secrets`, dir),
    weightRecords: [weightsRecordView(plan, dir)],
  };
  return { view, script, scriptHash: hash };
}

/**
 * The create and delete commands of one island on this machine (pure; the LocalIslandRun component
 * runs them). `generation` > 0: the run was gone and this create brings it back (host/presence.ts).
 */
export function renderLocalRun(
  plan: DeploymentPlan,
  island: IslandPlan,
  secrets: readonly SecretName[] = [],
  generation = 0,
): LocalRun {
  const t = localSettings(plan, "renderLocalRun");
  const { view, script, scriptHash: hash } = localCreateView(plan, island, secrets);
  const name = runName(plan, island.index);
  const dir = islandDir(plan, island);
  const del = renderTemplate("local/delete.sh.mustache", { runName: shq(name), islandDir: shq(dir) });
  const bounds = {
    create: { seconds: t.ready_timeout + CREATE_SLACK_S, killAfter: CREATE_KILL_AFTER_S },
    delete: DELETE_BOUND,
  };
  return {
    runName: name,
    islandDir: dir,
    create: underTimeout(bounds.create, "bash -s"),
    stdin: renderTemplate("local/create.sh.mustache", { ...view, generation }),
    delete: underTimeout(bounds.delete, `bash -c ${shq(del)}`),
    script,
    scriptHash: hash,
    dryRun: plan.dryRun,
    bounds,
  };
}
