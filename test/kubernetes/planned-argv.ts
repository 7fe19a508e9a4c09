import { k8sNames, mountedPath } from "../../components/kubernetes";
import type { DeploymentPlan, EngineProcess } from "../../components/plan/deployment-plan";
import { resolveValue } from "../../components/plan/values";

/** The pod IP the test kubelet gives every pod (its downward API answers status.podIP with it). */
export const POD_IP = "10.42.0.7";

/**
 * The env LeaderWorkerSet's pod webhook puts first in every container of a group's pods (leader
 * and workers), spelled as kubernetes-sigs/lws does it, independently of the fleet's code:
 * pkg/utils/pod/pod_utils.go AddLWSVariables (called from pkg/webhooks/pod_webhook.go) sets
 * LWS_LEADER_ADDRESS = `<lws name>-<group index>.<pod subdomain>.<namespace>`, LWS_GROUP_SIZE and
 * LWS_WORKER_INDEX (0 for the leader). The fleet's LWS has one group (replicas: 1) and
 * subdomainPolicy Shared, whose pods' subdomain is the LWS's name. Undefined outside an LWS.
 */
export function lwsEnv(plan: DeploymentPlan, e: EngineProcess): Record<string, string> | undefined {
  const names = k8sNames(plan);
  const wl = names.workloads(plan.islands[e.island]).find((w) => w.engines.some((x) => x.id === e.id));
  if (wl?.kind !== "LeaderWorkerSet") return undefined;
  return lwsVariables(
    wl.name,
    names.namespace,
    wl.engines.length,
    wl.engines.findIndex((x) => x.id === e.id),
  );
}

/** What LWS injects into a pod of group 0 of the LeaderWorkerSet `name` (see lwsEnv). */
export function lwsVariables(name: string, namespace: string, size: number, workerIndex: number) {
  return {
    LWS_LEADER_ADDRESS: `${name}-0.${name}.${namespace}`,
    LWS_GROUP_SIZE: String(size),
    LWS_WORKER_INDEX: String(workerIndex),
  };
}

/**
 * An engine's planned command line as its pod must run it: node references become the pods' DNS
 * names, in a LeaderWorkerSet's pods the leader's address the LWS_LEADER_ADDRESS that LWS injects,
 * the engine's own address the pod IP, planned files their mounted paths.
 */
export function plannedPodArgv(plan: DeploymentPlan, e: EngineProcess): string[] {
  const names = k8sNames(plan);
  const island = plan.islands[e.island];
  const lws = lwsEnv(plan, e);
  const leader = lws && names.workloads(island).find((w) => w.engines.some((x) => x.id === e.id))!.engines[0].node;
  return e.argv.map((v) =>
    resolveValue(v, (r) =>
      r.ref === "node"
        ? lws && r.node === leader
          ? lws.LWS_LEADER_ADDRESS
          : names.pod(island, r.node).host
        : r.ref === "self"
          ? POD_IP
          : r.ref === "file"
            ? mountedPath(r.file)
            : "",
    ),
  );
}
