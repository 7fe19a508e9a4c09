import { parseIdleReleased, type IdleReleased } from "./activity-ledger";
import { runChecked, type Shell } from "./shell";

/*
 * What the fleet CLI learns of an island's job (SLURM) or run (local) from the target's scheduler
 * query (FleetSupport.scheduler, components/target.ts). States are SLURM's words, the lingua franca
 * of components/ops/status.ts: RUNNING, FAILED, ..., null for no job.
 */

/**
 * What the scheduler says about one island's job (SLURM) or run (local), gathered in one round
 * trip: on SLURM from squeue, then `scontrol show job`, then sacct (components/slurm/scheduler.ts);
 * locally from the run record (components/local/run-query.ts). Plus the node addresses of a running
 * job and the exit markers its processes leave (templates/host/keeper.sh.mustache).
 */
export interface JobReport {
  island: number;
  jobId: string | null;
  /** SLURM's JobState as reported (PENDING, RUNNING, FAILED, ...), null when no job is known. */
  state: string | null;
  reason: string | null;
  exitCode: string | null;
  source: "squeue" | "scontrol" | "sacct" | "job_id file" | "run record" | "none";
  hosts: string[];
  addrs: string[];
  /** Processes that exited during this attempt, for good (the keeper gave up): node index, process name, exit status. */
  exits: { node: number; name: string; code: number }[];
  /** Processes the keeper restarted during this attempt: how often, and the exit that caused the last restart. */
  restarts: ProcessRestarts[];
  /** Each of the job's nodes in node-index order with SLURM's state for it (sinfo: `down*`, `allocated`, ...). */
  nodeStates: { host: string; state: string }[];
  /** The revival generation the island's folder records (host/presence.ts); 0 when it has none. */
  generation: number;
  /** `pulumi destroy` ended the job (its delete left `destroyed` in the folder; a create removes it). */
  destroyed: boolean;
  /** The attempt's idle release (templates/host/activity.sh): when it ended the island, idle since when. */
  idleReleased?: IdleReleased;
}

/** A target's status query (FleetSupport.scheduler): the script for some islands, and its parser. */
export interface JobQuery {
  query(refs: IslandJobRef[]): string;
  parse(text: string, islands: number[]): Map<number, JobReport>;
}

/** Runs a target's status query for `refs` through `shell` in one round trip, and parses its records. */
export async function queryJobs(
  shell: Shell,
  scheduler: JobQuery,
  refs: IslandJobRef[],
): Promise<Map<number, JobReport>> {
  const stdout = await runChecked(shell, scheduler.query(refs), "the scheduler query");
  return scheduler.parse(
    stdout,
    refs.map((r) => r.island),
  );
}

/** What the query needs to find an island's job: its unique name, the island's directory, a job id if known. */
export interface IslandJobRef {
  island: number;
  jobName?: string;
  islandDir?: string;
  jobId?: string;
  /** The island's node count, where the plan says it. */
  nodeCount?: number;
  /** The GPUs the island holds as its plan says (`fleet cost` uses it where the scheduler counts none). */
  gpus?: number;
  /** A co-scheduled island's offset in its heterogeneous job (components/slurm/hetjob.ts); its job id reads `<leader>+<offset>`. */
  component?: number;
}

/** An island's report before the scheduler said anything about it: no job known. */
export const emptyReport = (island: number): JobReport => ({
  island,
  jobId: null,
  state: null,
  reason: null,
  exitCode: null,
  source: "none",
  hosts: [],
  addrs: [],
  exits: [],
  restarts: [],
  nodeStates: [],
  generation: 0,
  destroyed: false,
});

/** What `<name>.restarts` beside a process's log says (templates/host/keeper.sh.mustache). */
export interface ProcessRestarts {
  node: number;
  name: string;
  count: number;
  /** The last restart: when (epoch seconds) and the exit that caused it (a process of the group, its status). */
  last: { at: number; cause: string; code: number };
}

/**
 * A query record about the island's folder or a process's markers, as both host targets' queries
 * print them: `presence` (GENERATION, destroyed or kept: templates/host/presence.sh), `exit` (FILE,
 * STATUS), `restarts` (FILE, COUNT, the file's last line) and `idlereleased` (the marker's text). False for any other record.
 */
export function readMarkerRecord(kind: string, rest: string[], r: JobReport): boolean {
  if (kind === "presence") {
    r.generation = Number(rest[0]) || 0;
    r.destroyed = rest[1] === "destroyed";
    return true;
  }
  if (kind === "idlereleased") {
    r.idleReleased = parseIdleReleased(rest[0] ?? "");
    return true;
  }
  if (kind !== "exit" && kind !== "restarts") return false;
  const m = new RegExp(`/node_(\\d+)/([^/]+)\\.${kind}$`).exec(rest[0] ?? "");
  if (!m) return true;
  const [node, name] = [Number(m[1]), m[2]];
  if (kind === "exit") r.exits.push({ node, name, code: Number(rest[1] || NaN) });
  else {
    const [, at, cause, code] = (rest[2] ?? "").split(" ");
    r.restarts.push({
      node,
      name,
      count: Number(rest[1]),
      last: { at: Number(at), cause: cause ?? "", code: Number(code) },
    });
  }
  return true;
}

export type JobPhase = "queued" | "running" | "ended" | "failed" | "none";

/**
 * Every SLURM job state, mapped (the scheduler speaks first; raw strings never leak into statuses).
 * A job that ends by scancel is over (SHUTDOWN); one that ends by itself, or by the node, the clock
 * or the OOM killer, failed. A fleet never completes on its own, so COMPLETED is an ending too.
 */
export function jobPhase(state: string | null): JobPhase {
  if (state === null) return "none";
  if (/^(PENDING|REQUEUED|REQUEUE_HOLD|REQUEUE_FED|SUSPENDED|RESV_DEL_HOLD|SPECIAL_EXIT|STOPPED)$/.test(state))
    return "queued";
  if (/^(CONFIGURING|RUNNING|RESIZING|SIGNALING|STAGE_OUT|UPDATE_DB|POWER_UP_NODE)$/.test(state)) return "running";
  if (/^(COMPLETING|COMPLETED|CANCELLED)$/.test(state)) return "ended";
  if (/^(FAILED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|PREEMPTED|BOOT_FAIL|DEADLINE|REVOKED)$/.test(state)) return "failed";
  return "queued";
}
