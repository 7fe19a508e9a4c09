import type { DeploymentPlan } from "../plan/deployment-plan";
import type { ClusterAccess } from "../target";
import { releasedWorkloads } from "./activity-monitor";
import { clusterReader, type ClusterReader } from "./cluster-reader";
import { k8sNames } from "./names";
import { clearReleaseMark, readReleaseMark } from "./release-mark";

/*
 * `fleet wake` on Kubernetes: each island whose activity monitor released it (the mark in its
 * ConfigMap, activity-monitor.ts) is scaled back to its planned replicas through its engine
 * workloads' scale subresource, then its mark is cleared. An island that is not released is left as
 * it is: wake never scales what a person or another tool chose to scale.
 */

const iso = (s: number) => new Date(s * 1000).toISOString();

export async function wakeThroughApi(
  plan: DeploymentPlan,
  access: ClusterAccess,
  reader?: ClusterReader,
): Promise<{ island: number; detail: string }[]> {
  const r = reader ?? (await clusterReader(access));
  const names = k8sNames(plan);
  const woken: { island: number; detail: string }[] = [];
  for (const island of plan.islands) {
    const released = await readReleaseMark(r, names, island.index);
    if (!released) continue;
    const workloads = releasedWorkloads(names, island);
    for (const w of workloads) await r.mergePatch(`${w.path}/scale`, { spec: { replicas: w.replicas } });
    await clearReleaseMark(r, names, island.index);
    woken.push({
      island: island.index,
      detail: `released at ${iso(released.at)} (idle since ${iso(released.idleSince)}): ${workloads.length} engine workload(s) scaled back to their planned replicas`,
    });
  }
  return woken;
}
