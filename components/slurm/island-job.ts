import type { DeploymentPlan, IslandPlan } from "../plan/deployment-plan";
import { dryRunLine } from "../host/island-result";
import { scriptHash } from "../host/script-hash";
import { readinessView, STDERR_LINE_BOUND } from "../host/readiness";
import { weightsRecordView } from "../host/weights-record";

export { STDERR_LINE_BOUND };
import { islandDir, jobName, renderIslandScript } from "./sbatch";
import { secretsDir } from "./secret-files";
import type { SecretName } from "../credentials";
import { heredocDelimiter, loginShellArg, shq } from "../shell";
import { renderOneLine, renderTemplate } from "../templates";
import { boundedOnLogin, type LoginBound } from "./login-bound";
import { slurmSettings } from "./settings";

/** Slack on top of the pending and ready timeouts for cancelling stale jobs, submitting and failing. */
const CREATE_SLACK_S = 300;
/** The delete command gives up after 120 s of waiting; this leaves room for squeue and scancel. */
const DELETE_TIMEOUT_S = 300;

/** Room for create's own cleanup after the SIGTERM: the logs' tails, scancel, and at most 60 s of waiting. */
const CREATE_KILL_AFTER_S = 120;
/** delete has nothing to clean up after the SIGTERM. */
const DELETE_KILL_AFTER_S = 30;

/** Everything one island's remote.Command needs: the command strings and the replacement key. */
export interface IslandJob {
  jobName: string;
  islandDir: string;
  /**
   * The command sshd runs: `timeout ... bash -s` (see LoginBound). The create script comes on
   * stdin so no argument-length limit applies.
   */
  create: string;
  stdin: string;
  /** `timeout ... bash -c '<one line>'`, so it runs under any login shell (csh included). */
  delete: string;
  /** Hash of the submitted script: a new hash means a new job (the old one is cancelled first). */
  scriptHash: string;
  dryRun: boolean;
  /** The bounds `timeout` enforces on create (and update) and on delete. */
  bounds: { create: LoginBound; delete: LoginBound };
}

/** The create script: this template and its partials (templates/slurm/create/), one view for all. */
export const CREATE_TEMPLATE = "slurm/create.sh.mustache";

/** The create script's view (every value shell-quoted) and the hash of the sbatch script it submits. */
export function createScriptView(
  plan: DeploymentPlan,
  island: IslandPlan,
  secrets: readonly SecretName[] = [],
): { view: object; scriptHash: string } {
  const t = slurmSettings(plan, "renderIslandJob");
  const name = jobName(plan, island.index);
  const dir = islandDir(plan, island);
  const { script } = renderIslandScript(plan, island, secrets);
  const hash = scriptHash(name, script);
  const scriptName = `${name}.sbatch`;
  const view = {
    jobName: shq(name),
    island: island.name,
    islandDir: shq(dir),
    scriptName: shq(scriptName),
    comment: shq(`vllm-fleet:${hash}`),
    nodeCount: island.nodes.length,
    pendingTimeout: t.pending_timeout,
    readyTimeout: t.ready_timeout,
    pendingTimeoutKey: "slurm.pending_timeout",
    readyTimeoutKey: "slurm.ready_timeout",
    script: script.trimEnd(),
    scriptDelimiter: heredocDelimiter("FLEET_SCRIPT", script),
    dryRun: plan.dryRun,
    dryRunLine: shq(dryRunLine(plan, island, name, `${dir}/${scriptName}`)),
    ...readinessView(plan, island, name, secrets, secretsDir(dir), dir),
    weightRecords: [weightsRecordView(plan, dir)],
  };
  return { view, scriptHash: hash };
}

/**
 * The create and delete commands of one island's SLURM job (pure; the SlurmJob component runs them).
 * `secrets` names the configured credentials: the job reads them from their files, and with an API
 * key the readiness probes authenticate (the key goes to curl on a pipe, never on a command line).
 * `generation` > 0: the job was gone and this create brings it back (host/presence.ts).
 */
export function renderIslandJob(
  plan: DeploymentPlan,
  island: IslandPlan,
  secrets: readonly SecretName[] = [],
  generation = 0,
): IslandJob {
  const { view, scriptHash: hash } = createScriptView(plan, island, secrets);
  const t = slurmSettings(plan, "renderIslandJob");
  const name = jobName(plan, island.index);
  const dir = islandDir(plan, island);
  const stdin = renderTemplate(CREATE_TEMPLATE, { ...view, generation });
  const del = renderOneLine("slurm/delete.sh.mustache", {
    jobName: shq(name),
    islandDir: shq(dir),
    lineBound: STDERR_LINE_BOUND,
  });
  return jobCommands({
    jobName: name,
    islandDir: dir,
    stdin,
    deleteLine: del,
    scriptHash: hash,
    dryRun: plan.dryRun,
    pendingTimeout: t.pending_timeout,
    readyTimeout: t.ready_timeout,
  });
}

/**
 * A job's create and delete commands, each bounded on the login node: create by the pending and
 * ready timeouts plus slack, delete by a fixed bound. One island's job or a co-scheduled one.
 */
export function jobCommands(j: {
  jobName: string;
  islandDir: string;
  stdin: string;
  /** The delete script, one line (it runs under any login shell). */
  deleteLine: string;
  scriptHash: string;
  dryRun: boolean;
  pendingTimeout: number;
  readyTimeout: number;
}): IslandJob {
  const bounds = {
    create: { seconds: j.pendingTimeout + j.readyTimeout + CREATE_SLACK_S, killAfter: CREATE_KILL_AFTER_S },
    delete: { seconds: DELETE_TIMEOUT_S, killAfter: DELETE_KILL_AFTER_S },
  };
  return {
    jobName: j.jobName,
    islandDir: j.islandDir,
    create: boundedOnLogin(bounds.create, "bash -s"),
    stdin: j.stdin,
    delete: boundedOnLogin(bounds.delete, `bash -c ${loginShellArg(j.deleteLine)}`),
    scriptHash: j.scriptHash,
    dryRun: j.dryRun,
    bounds,
  };
}
