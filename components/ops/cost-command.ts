import type { IslandJobRef } from "../host/job-report";
import { targetOf } from "../targets";
import { costReport, type CostReport } from "./cost";
import type { FleetView } from "./fleet-view";
import { runChecked, type Shell } from "./remote";

/**
 * `fleet cost`: the target's accounting query (FleetSupport.cost) through the shell, in one round
 * trip, made into the report. Throws when it cannot be asked or did not answer: no hours then.
 */
export async function costCommand(view: FleetView, shell: Shell | undefined, now = new Date()): Promise<CostReport> {
  const target = targetOf(view.target);
  const cost = target.fleet.cost;
  if (!cost)
    throw new Error(`fleet cost cannot account a ${target.title} fleet yet: nothing was asked, no hours are reported`);
  const refs: IslandJobRef[] = view.islands.map((i) => ({
    island: i.island,
    ...(i.jobName !== undefined && { jobName: i.jobName }),
    ...(i.islandDir !== undefined && { islandDir: i.islandDir }),
    ...(i.gpus !== undefined && { gpus: i.gpus }),
    ...(i.component !== undefined && { component: i.component }),
  }));
  if (!shell || refs.some((r) => !r.islandDir))
    throw new Error("fleet cost needs the stack (where each island keeps its jobs' folders), not --endpoints");
  const held = cost.parse(await runChecked(shell, cost.query(refs), "the accounting query"), refs);
  return costReport(held, {
    model: view.model,
    target: view.target,
    ...(view.gpuHourPrice !== undefined && { gpuHourPrice: view.gpuHourPrice }),
    now,
  });
}
