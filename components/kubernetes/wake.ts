import { parseIdleReleased } from "../host/activity-ledger";
import type { DeploymentPlan } from "../plan/deployment-plan";
import type { ClusterAccess } from "../target";
import { activityMonitorConfig, MARKER_KEY } from "./activity-monitor";
import { clusterReader, type ClusterReader } from "./cluster-reader";
import { k8sNames } from "./names";
import { kubernetesSettings } from "./settings";

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
  const ctx = { plan, target: kubernetesSettings(plan), names, secrets: [] };
  const woken: { island: number; detail: string }[] = [];
  for (const island of plan.islands) {
    const cm = names.activityConfigMap(island.index);
    const mark = (await r.configMapData(names.namespace, cm))?.[MARKER_KEY];
    const released = mark === undefined ? undefined : parseIdleReleased(mark);
    if (!released) continue;
    const { workloads } = activityMonitorConfig(ctx, island);
    for (const w of workloads) await r.mergePatch(`${w.path}/scale`, { spec: { replicas: w.replicas } });
    await r.mergePatch(`/api/v1/namespaces/${names.namespace}/configmaps/${cm}`, { data: { [MARKER_KEY]: null } });
    woken.push({
      island: island.index,
      detail: `released at ${iso(released.at)} (idle since ${iso(released.idleSince)}): ${workloads.length} engine workload(s) scaled back to their planned replicas`,
    });
  }
  return woken;
}
