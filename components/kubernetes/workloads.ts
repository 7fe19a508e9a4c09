import type { IslandPlan } from "../plan/deployment-plan";
import { engineNamed } from "../plan/engines";
import { labels, meta, type K8sContext } from "./render-context";
import { diskClaims, engineLabels, enginePodTemplate } from "./engine-pod";
import type { EngineWorkload } from "./names";
import type { K8sObject } from "./objects";
import { k8sArgv } from "./kubelet-values";

/**
 * The disk tier's claims hold only offloaded KV blocks, worthless once the pod is gone: delete them
 * with the workload (StatefulSet's persistentVolumeClaimRetentionPolicy; LWS has the same field on
 * its leaderWorkerTemplate, kubernetes-sigs/lws api/leaderworkerset/v1/leaderworkerset_types.go).
 */
const DELETE_CLAIMS = { whenDeleted: "Delete", whenScaled: "Delete" } as const;

/**
 * LWS workers share one template, so nodes 1..n-1 must differ only in their start rank. Checked
 * here rather than assumed, so a planner change cannot silently give every worker node 1's flags.
 */
function assertUniformWorkers(ctx: K8sContext, island: IslandPlan, wl: EngineWorkload): number {
  const [, first, ...rest] = wl.engines;
  const dpLocal = first.dp?.local;
  if (dpLocal === undefined) throw new Error(`internal error: ${wl.name} spans nodes without data parallelism`);
  const shape = (e: (typeof wl.engines)[number]) => {
    const argv = k8sArgv(ctx, island.index, e.argv);
    const engine = engineNamed(e.engine);
    const at = e.argv.indexOf(engine.spellFlag(engine.groupRank.flag));
    if (at >= 0) argv[at + 1] = "<rank>";
    return JSON.stringify([argv, e.env, e.port, e.gpus]);
  };
  for (const [k, e] of wl.engines.entries()) {
    if (k > 0 && e.dp?.startRank !== k * dpLocal)
      throw new Error(`internal error: ${e.id} starts at rank ${e.dp?.startRank}, not ${k * dpLocal}`);
  }
  for (const e of rest)
    if (shape(e) !== shape(first))
      throw new Error(
        `internal error: LWS workers of ${wl.name} differ beyond their start rank (${e.id} vs ${first.id})`,
      );
  return engineNamed(first.engine).groupRank.perNode(dpLocal);
}

function workloadObject(ctx: K8sContext, island: IslandPlan, wl: EngineWorkload): K8sObject {
  const selector = engineLabels(ctx, island.index, wl);
  const claims = diskClaims(ctx);
  if (wl.kind === "StatefulSet") {
    return {
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: meta(ctx, wl.name, selector),
      spec: {
        replicas: 1,
        serviceName: ctx.names.engineService(island.index),
        podManagementPolicy: "Parallel",
        selector: { matchLabels: selector },
        template: enginePodTemplate(ctx, island, wl, wl.engines[0]),
        ...(claims ? { volumeClaimTemplates: claims, persistentVolumeClaimRetentionPolicy: DELETE_CLAIMS } : {}),
      },
    };
  }
  const dpLocal = assertUniformWorkers(ctx, island, wl);
  return {
    apiVersion: "leaderworkerset.x-k8s.io/v1",
    kind: "LeaderWorkerSet",
    // `pulumi up` waits for it as for every workload: readiness-command.ts.
    metadata: meta(ctx, wl.name, selector),
    spec: {
      replicas: 1,
      // Workers dial the leader's DP address at start; the leader is not Ready until they join.
      startupPolicy: "LeaderCreated",
      networkConfig: { subdomainPolicy: "Shared" },
      leaderWorkerTemplate: {
        size: wl.engines.length,
        // One lost rank hangs every collective: restart the whole group (LeaderWorkerSet's
        // RecreateGroupOnPodRestart; kubernetes-sigs/lws, api/leaderworkerset/v1/leaderworkerset_types.go).
        restartPolicy: "RecreateGroupOnPodRestart",
        leaderTemplate: enginePodTemplate(ctx, island, wl, wl.engines[0]),
        workerTemplate: enginePodTemplate(ctx, island, wl, wl.engines[1], dpLocal),
        ...(claims ? { volumeClaimTemplates: claims, persistentVolumeClaimRetentionPolicy: DELETE_CLAIMS } : {}),
      },
    },
  };
}

/**
 * The headless Service that gives each single-node replica's pod of the island its DNS name
 * (publishes before Ready). It selects every engine pod of the fleet's service, not only the
 * island's: a pod's DNS name comes only from the Service its subdomain names, while the Service's
 * own name resolves to all of them, which is where an engine's weights readiness check finds its
 * peers (weights-readiness.ts): one service's islands serve one model and take the same updates,
 * and an island of one engine has no other peer. The same selector for any number of islands, so
 * scaling the fleet leaves the islands that serve untouched.
 */
function engineService(ctx: K8sContext, island: IslandPlan): K8sObject {
  const { ["vllm-fleet/island"]: _island, ...selector } = labels(ctx, "engine", island.index);
  const ports = [...new Set(island.engines.flatMap((e) => (e.port === undefined ? [] : [e.port])))];
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: meta(ctx, ctx.names.engineService(island.index), selector),
    spec: {
      clusterIP: "None",
      publishNotReadyAddresses: true,
      selector,
      ports: ports.map((port) => ({ name: `http-${port}`, port, targetPort: port })),
    },
  };
}

/**
 * The replica's PodDisruptionBudget (issue 20 #8): `maxUnavailable: 0` over exactly the replica's
 * pods, so a voluntary eviction (kubectl drain, the cluster autoscaler, a descheduler) of a serving
 * engine waits instead of taking a replica out of an RL step; in a LeaderWorkerSet one evicted pod
 * restarts the whole group anyway (RecreateGroupOnPodRestart). `AlwaysAllow`: a crashed or
 * not-ready engine serves nothing, so it never blocks a drain (policy/v1 unhealthyPodEvictionPolicy).
 * Only the eviction API honours a budget: the workload controllers' own rollouts and `pulumi destroy`
 * delete pods directly and are not held up.
 *
 * The selector is the workload's own: our labels (fleet instance, island, role, replica), which
 * the StatefulSet's template and both LWS templates carry. On a LeaderWorkerSet's pods they select
 * the same set as LWS's own labels would (leaderworkerset.sigs.k8s.io/name, and group-index "0" of
 * our one group: kubernetes-sigs/lws api/leaderworkerset/v1/leaderworkerset_types.go SetNameLabelKey,
 * GroupIndexLabelKey), but are known from the rendered template, so tests can check them offline.
 */
function disruptionBudget(ctx: K8sContext, island: IslandPlan, wl: EngineWorkload): K8sObject {
  const selector = engineLabels(ctx, island.index, wl);
  return {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: meta(ctx, wl.name, selector),
    spec: { maxUnavailable: 0, selector: { matchLabels: selector }, unhealthyPodEvictionPolicy: "AlwaysAllow" },
  };
}

/** One engine replica: its workload (StatefulSet or LeaderWorkerSet) and, unless disabled, its disruption budget. */
export interface ReplicaObjects {
  workload: EngineWorkload;
  object: K8sObject;
  budget?: K8sObject;
}

/** Per replica: its workload and budget; plus the island's headless Service. */
export function engineObjects(ctx: K8sContext, island: IslandPlan): { service: K8sObject; replicas: ReplicaObjects[] } {
  return {
    service: engineService(ctx, island),
    replicas: ctx.names.workloads(island).map((workload) => ({
      workload,
      object: workloadObject(ctx, island, workload),
      ...(ctx.target.disruption_budget ? { budget: disruptionBudget(ctx, island, workload) } : {}),
    })),
  };
}
