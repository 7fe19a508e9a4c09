import type { IslandPlan } from "../plan/deployment-plan";
import { engineLabels } from "./engine-pod";
import { meta, type K8sContext, type NodeHost } from "./render-context";
import { skipProviderAwait, type K8sObject } from "./objects";

/*
 * A router that cannot be told its workers at run time (vllm-router in P/D mode, or without
 * /add_worker: no follower, router-plan.ts followOf) is given each engine through a Service of its
 * own instead of the pod's DNS name. A Service routes only to Ready pods (its EndpointSlice marks a
 * pod that is not Ready `ready: false`, and kube-proxy sends nothing there), and an engine pod is
 * Ready only while it serves current weights (weights-readiness.ts). So a container the kubelet
 * restarts, or a group LeaderWorkerSet recreates, is refused to the router from its death until the
 * trainer's next update reaches it: the router's own health checks, which read `/health` only,
 * take it out and bring it back (every 2 s in P/D mode, router-plan.ts). The trainer still reaches
 * every pod, Ready or not, through the admin URLs (the pod DNS names of the headless Service).
 */

/**
 * One ClusterIP Service per engine pod that serves the API, named as the pod. pulumi-kubernetes
 * would hold its create until every endpoint is ready (provider/pkg/await/service.go,
 * checkAndLogStatus: no not-ready address pending), so an up while an engine catches up would fail
 * after 10 minutes: skipAwait, as the workloads have; the engines' readiness is their wait's.
 */
export function readyServices(ctx: K8sContext, island: IslandPlan): K8sObject[] {
  return ctx.names.workloads(island).flatMap((wl) =>
    wl.engines.flatMap((e, k) => {
      if (e.port === undefined) return [];
      // The workload's own labels select its one pod (a StatefulSet of one replica); in a
      // LeaderWorkerSet's one group, LWS's worker index picks the node (0: the leader; kubernetes-sigs/lws
      // api/leaderworkerset/v1/leaderworkerset_types.go WorkerIndexLabelKey).
      const own = engineLabels(ctx, island.index, wl);
      const selector =
        wl.kind === "LeaderWorkerSet" ? { ...own, "leaderworkerset.sigs.k8s.io/worker-index": String(k) } : own;
      const service: K8sObject = {
        apiVersion: "v1",
        kind: "Service",
        metadata: meta(ctx, ctx.names.pod(island, e.node).pod, own),
        spec: { selector, ports: [{ name: "http", port: e.port, targetPort: e.port }] },
      };
      return [skipProviderAwait(service)];
    }),
  );
}

/** The router's spelling of an engine node: its ready Service's DNS name. */
export const readyServiceHost =
  (ctx: K8sContext, island: IslandPlan): NodeHost =>
  (node) =>
    ctx.names.svcHost(ctx.names.pod(island, node).pod);
