import type { DeploymentPlan } from "../plan/deployment-plan";
import { engineNamed } from "../plan/engines";
import type { ClusterAccess, ClusterLogTail, ClusterScrape } from "../target";
import { clusterReader, type ClusterReader } from "./cluster-reader";
import { k8sEndpoints } from "./fleet-objects";
import { k8sNames } from "./names";

/*
 * `fleet metrics` and `fleet logs` on Kubernetes from outside the cluster: the engines' addresses
 * are in-cluster, so each engine's /metrics is read through the API server's pod proxy and each
 * process's log through the pod log API (`kubectl logs --tail`), all at once. What could not be read
 * comes back with the API server's reason, never as an empty answer.
 */

/** Every engine with an API: its island, id, role, pod, port and namespace (status reads its weight version too). */
export function enginePods(plan: DeploymentPlan) {
  const endpoints = k8sEndpoints(plan, k8sNames(plan));
  return plan.islands.flatMap((island, k) =>
    island.engines.flatMap((e) => {
      const pod = endpoints[k].pods.find((p) => p.node === e.node)?.pod;
      return e.port === undefined || !pod
        ? []
        : [{ island: island.index, id: e.id, role: e.role, pod, port: e.port, namespace: endpoints[k].namespace }];
    }),
  );
}

/** Each engine's Prometheus text (Engine.routes.metrics) through the pod proxy. */
export async function scrapeThroughApi(
  plan: DeploymentPlan,
  access: ClusterAccess,
  reader?: ClusterReader,
): Promise<ClusterScrape[]> {
  const r = reader ?? (await clusterReader(access));
  const metrics = engineNamed(plan.engine).routes.metrics;
  return Promise.all(
    enginePods(plan).map(async (e) => ({
      island: e.island,
      id: e.id,
      role: e.role,
      url: `${r.server}/api/v1/namespaces/${e.namespace}/pods/${e.pod}:${e.port}/proxy${metrics}`,
      answer: await r.podProxyText(e.namespace, e.pod, e.port, metrics),
    })),
  );
}

/** The last `lines` of each selected engine's container log (the pod log API). */
export async function logsThroughApi(
  plan: DeploymentPlan,
  access: ClusterAccess,
  select: (id: string) => boolean,
  lines: number,
  reader?: ClusterReader,
): Promise<ClusterLogTail[]> {
  const r = reader ?? (await clusterReader(access));
  const container = engineNamed(plan.engine).container;
  return Promise.all(
    enginePods(plan)
      .filter((e) => select(e.id))
      .map(async (e) => ({
        island: e.island,
        id: e.id,
        source: `pod ${e.namespace}/${e.pod}, container ${container}`,
        answer: await r.podLog(e.namespace, e.pod, container, lines),
      })),
  );
}
