import type { IslandHeld } from "../host/held-time";
import type { IslandJobRef } from "../host/job-report";
import { targetOf } from "../targets";
import type { ClusterSource } from "./commands";
import { costReport, type CostReport } from "./cost";
import type { FleetView } from "./fleet-view";
import { runChecked, type Shell } from "./remote";

/**
 * `fleet cost`: the target's accounting query (FleetSupport.cost) through the shell, in one round
 * trip, or its cluster's API (FleetSupport.cluster.held), made into the report. Throws when it
 * cannot be asked or did not answer: no hours then.
 */
export async function costCommand(
  view: FleetView,
  shell: Shell | undefined,
  cluster?: ClusterSource,
  now = new Date(),
): Promise<CostReport> {
  const held = await heldBy(view, shell, cluster);
  return costReport(held, {
    model: view.model,
    target: view.target,
    ...(view.gpuHourPrice !== undefined && { gpuHourPrice: view.gpuHourPrice }),
    now,
  });
}

async function heldBy(view: FleetView, shell: Shell | undefined, cluster?: ClusterSource): Promise<IslandHeld[]> {
  const target = targetOf(view.target);
  const throughApi = target.fleet.cluster?.held;
  if (throughApi) {
    if (!cluster)
      throw new Error(`fleet cost on a ${target.title} fleet reads its cluster's API: name the stack, not --endpoints`);
    return throughApi(cluster.plan, cluster.access);
  }
  const cost = target.fleet.cost;
  if (!cost)
    throw new Error(`fleet cost cannot account a ${target.title} fleet: nothing was asked, no hours are reported`);
  const refs: IslandJobRef[] = view.islands.map((i) => ({
    island: i.island,
    ...(i.jobName !== undefined && { jobName: i.jobName }),
    ...(i.islandDir !== undefined && { islandDir: i.islandDir }),
    ...(i.gpus !== undefined && { gpus: i.gpus }),
    ...(i.component !== undefined && { component: i.component }),
  }));
  if (!shell || refs.some((r) => !r.islandDir))
    throw new Error("fleet cost needs the stack (where each island keeps its jobs' folders), not --endpoints");
  return cost.parse(await runChecked(shell, cost.query(refs), "the accounting query"), refs);
}
