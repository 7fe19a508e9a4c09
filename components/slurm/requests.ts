import type { DeploymentPlan, IslandPlan } from "../plan/deployment-plan";
import type { RequestTable } from "../target";
import type { StackPlan } from "../plan/stack-plan";
import { coScheduledPlacements } from "./hetjob";
import { islandDir, jobName } from "./sbatch";
import { exclusiveNodes, gresRequest, slurmSettings } from "./settings";
import { slurmSeconds } from "./time-format";

/** What one job (or hetjob component) asks SLURM for, as the printed plan shows it. */
export interface JobRequest {
  job: string;
  partition?: string;
  nodes: number;
  /** GPUs asked per node (from the gres request). */
  gpusPerNode: number;
  time?: string;
  exclusive: boolean;
  dir: string;
}

/** A SLURM time limit in hours (slurmSeconds' formats); undefined for UNLIMITED / infinite. */
export function timeLimitHours(time: string): number | undefined {
  const s = slurmSeconds(time);
  return s === undefined ? undefined : s / 3600;
}

/** The GPUs a gres request names per node (`gpu:8`, `gpu:h100:8`); undefined when it names none. */
export function gresGpus(gres: string): number | undefined {
  const m = /(?:^|,)gpu(?::[A-Za-z][A-Za-z0-9_]*)?:(\d+)/.exec(gres);
  return m ? Number(m[1]) : undefined;
}

export function jobRequest(plan: DeploymentPlan, island: IslandPlan, job = jobName(plan, island.index)): JobRequest {
  const t = slurmSettings(plan);
  return {
    job,
    ...(t.partition !== undefined && { partition: t.partition }),
    nodes: island.nodes.length,
    gpusPerNode: gresGpus(gresRequest(plan)) ?? 0,
    ...(t.time !== undefined && { time: t.time }),
    exclusive: exclusiveNodes(plan),
    dir: islandDir(plan, island),
  };
}

/**
 * Every job the stack submits: one per island, or one heterogeneous job whose components
 * (`<name>+<k>`) are the co-scheduled islands.
 */
export function jobRequests(stack: StackPlan): JobRequest[] {
  const grouped = coScheduledPlacements(stack);
  return stack.services.flatMap((plan) =>
    plan.islands.map((island) => {
      const g = grouped.get(`${plan.service ?? ""}/${island.index}`);
      return jobRequest(plan, island, g ? `${g.jobName}+${g.component}` : undefined);
    }),
  );
}

/** The requests as a table, and the GPU-hours the whole stack can hold at its time limits. */
export function requestTable(requests: JobRequest[]): RequestTable {
  const rows: string[][] = [];
  let total = 0;
  let bounded = true;
  for (const r of requests) {
    const hours = r.time === undefined ? undefined : timeLimitHours(r.time);
    const gpuHours = hours === undefined ? undefined : hours * r.nodes * r.gpusPerNode;
    if (gpuHours === undefined) bounded = false;
    else total += gpuHours;
    rows.push([
      r.job,
      r.partition ?? "(default)",
      `${r.nodes} x ${r.gpusPerNode}`,
      r.time ?? "partition default",
      r.exclusive ? "yes" : "no",
      r.dir,
      gpuHours === undefined ? "-" : gpuHours.toFixed(1),
    ]);
  }
  const sum = bounded
    ? `${total.toFixed(1)} GPU-hours at the time limit${requests.length === 1 ? "" : "s"}`
    : "GPU-hours unbounded by the file: a job without slurm.time runs to its partition's limit";
  return {
    title: `SLURM is asked for (${sum}):`,
    head: ["job", "partition", "nodes x GPUs", "time", "exclusive", "output dir", "GPU-hours"],
    rows,
  };
}
