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
  /** Processes that exited during this attempt: node index, process name, exit status. */
  exits: { node: number; name: string; code: number }[];
  /** Each of the job's nodes in node-index order with SLURM's state for it (sinfo: `down*`, `allocated`, ...). */
  nodeStates: { host: string; state: string }[];
}

/** What the query needs to find an island's job: its unique name, the island's directory, a job id if known. */
export interface IslandJobRef {
  island: number;
  jobName?: string;
  islandDir?: string;
  jobId?: string;
  /** The island's node count, where the plan says it. */
  nodeCount?: number;
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
  nodeStates: [],
});
