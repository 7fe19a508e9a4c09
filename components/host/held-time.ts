import { parseActivity, type ActivityEntry } from "./activity-ledger";

/*
 * What a target's accounting query (FleetSupport.cost, components/target.ts) learns of the jobs or
 * runs an island has had: when each held its GPUs, how many and who said so, and its activity
 * ledger. `fleet cost` (components/ops/cost.ts) turns them into GPU-hours; a job nothing answered
 * for carries why instead of numbers, never a guess.
 */

export interface HeldJob {
  /** The SLURM job id, or the local run's log folder (run_<date>_<pid>). */
  id: string;
  /** The island's job or run now (since the last `pulumi up`); the others are its past ones. */
  current: boolean;
  running: boolean;
  /** Epoch seconds the job started holding its GPUs (null: it never started, e.g. still queued). */
  start: number | null;
  /** Seconds it has held them (until now while it runs). */
  elapsed: number;
  gpus: number;
  /** Where the GPU count comes from: the scheduler's allocation, or the plan where the scheduler counts none. */
  gpuSource: string;
  /** Who said when it ran: sacct, scontrol, the run record and /proc. */
  seenBy: string;
  /** Its activity ledger's lines (every attempt of the job), or null where it has none. */
  activity: ActivityEntry[] | null;
}

/** A job or run the island had that no one answered for: its id and why, in place of hours. */
export interface UnseenJob {
  id: string;
  current: boolean;
  why: string;
}

export interface IslandHeld {
  island: number;
  jobs: HeldJob[];
  unseen: UnseenJob[];
  /** What the target cannot see at all (Kubernetes keeps no record of deleted pods), for the report to say. */
  notes?: string[];
}

/** Collects a query's `ledger\t<island>\t<job>\t<line>` records into one ledger per island and job. */
export class LedgerLines {
  private readonly lines = new Map<string, string[]>();
  add(island: number, job: string, line: string): void {
    const key = `${island}/${job}`;
    this.lines.set(key, [...(this.lines.get(key) ?? []), line]);
  }
  /** The job's ledger (its attempts' lines in time order), null when no attempt left one. */
  of(island: number, job: string): ActivityEntry[] | null {
    const lines = this.lines.get(`${island}/${job}`);
    if (!lines) return null;
    const entries = lines.flatMap((l) => parseActivity(l));
    return entries.sort((a, b) => a.at - b.at);
  }
}
