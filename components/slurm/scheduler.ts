import { shq } from "../shell";
import { renderTemplate } from "../templates";

import { emptyReport, readMarkerRecord, type IslandJobRef, type JobReport } from "../host/job-report";
import { IDLE_RELEASED_FILE } from "../host/activity-ledger";

export { jobPhase, type JobPhase } from "../host/job-report";

export type { IslandJobRef, JobReport };

/** Bash for the login node (slurm/scheduler-query.sh): one tab-separated record per fact, parsed by parseSchedulerReport. */
export function schedulerQueryScript(islands: IslandJobRef[]): string {
  const calls = islands
    .filter((i) => i.jobName)
    .map((i) => ({
      island: i.island,
      jobName: shq(i.jobName!),
      islandDir: shq(i.islandDir ?? ""),
      jobId: shq(i.jobId ?? ""),
      // A list of one (or none), so offset 0 still renders.
      component: i.component === undefined ? [] : [String(i.component)],
    }));
  const cosched = islands.some((i) => i.component !== undefined);
  return renderTemplate("slurm/scheduler-query.sh.mustache", {
    islands: calls,
    cosched,
    markerFile: IDLE_RELEASED_FILE,
  });
}

/** `Key=Value` tokens of `scontrol show job -o`; values never contain spaces there, except Command/Comment at the end. */
function scontrolFields(line: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of line.matchAll(/(?:^|\s)([A-Za-z]+)=(\S*)/g)) if (!(m[1] in out)) out[m[1]] = m[2];
  return out;
}

/**
 * Parses the records schedulerQueryScript prints. Throws SchedulerUnobservable when squeue could not
 * answer for an island, or an island has no record at all.
 */
export function parseSchedulerReport(text: string, islands: number[]): Map<number, JobReport> {
  const reports = new Map<number, JobReport>(islands.map((k) => [k, emptyReport(k)]));

  const answered = new Set<number>();
  const failures: string[] = [];
  for (const line of text.split("\n")) {
    const [kind, k, ...rest] = line.split("\t");
    const r = reports.get(Number(k));
    if (!r) continue;
    if (["squeue", "scontrol", "sacct", "gone", "none"].includes(kind)) answered.add(r.island);
    if (kind === "error") {
      failures.push(`island ${k}: ${rest.join(" ")}`);
    } else if (kind === "squeue") {
      const [id, state, reason] = rest.join("\t").split("|");
      Object.assign(r, { jobId: id, state, reason: reason && reason !== "None" ? reason : null, source: "squeue" });
    } else if (kind === "scontrol") {
      const f = scontrolFields(rest.join("\t"));
      Object.assign(r, {
        // A heterogeneous job's component as squeue names it: <leader id>+<offset>.
        jobId: f.HetJobId && f.HetJobOffset ? `${f.HetJobId}+${f.HetJobOffset}` : (f.JobId ?? null),
        state: f.JobState ?? null,
        reason: f.Reason && f.Reason !== "None" ? f.Reason : null,
        exitCode: f.ExitCode ?? null,
        source: "scontrol",
      });
    } else if (kind === "sacct") {
      const [id, state, exitCode, reason] = rest.join("\t").split("|");
      // sacct writes "CANCELLED by 1000": the state is the first word.
      Object.assign(r, {
        jobId: id,
        state: state?.split(" ")[0] ?? null,
        exitCode: exitCode ?? null,
        reason: reason && reason !== "None" ? reason : null,
        source: "sacct",
      });
    } else if (kind === "gone") {
      Object.assign(r, { jobId: rest[0], source: "job_id file" });
    } else if (kind === "node") {
      r.hosts.push(rest[0]);
      r.addrs.push(rest[1] ?? "");
    } else if (kind === "nodestate") {
      r.nodeStates.push({ host: rest[0], state: rest[1] ?? "unknown" });
    } else readMarkerRecord(kind, rest, r);
  }
  // A job state nobody reported is unknown, not "no job": refuse to answer rather than guess.
  for (const k of islands)
    if (!answered.has(k) && !failures.some((f) => f.startsWith(`island ${k}:`)))
      failures.push(`island ${k}: SLURM gave no answer about its job`);
  if (failures.length) throw new SchedulerUnobservable(failures);
  return reports;
}

/** The scheduler could not be asked (squeue missing or failing): the job's state was not observed. */
export class SchedulerUnobservable extends Error {
  constructor(readonly failures: string[]) {
    super(`could not observe the SLURM job, so no state is reported: ${failures.join("; ")}`);
    this.name = "SchedulerUnobservable";
  }
}

/** A node SLURM has given up on (down, failed, drained for a failure) or that stopped answering (`*`). */
export const nodeLost = (state: string): boolean => /\*$|^(down|fail|failing|not_responding|no_respond)/i.test(state);
