import { ACTIVITY_HEARTBEAT_S } from "../host/activity-ledger";
import type { IslandPlan } from "../plan/deployment-plan";
import type { EngineWorkload, K8sNames } from "./names";
import { k8sLiteral, resources, SECRET_KEYS, secretEnv, type K8sObject } from "./objects";
import { pythonCheck } from "./python-check";
import { labels, meta, singletonDeployment, type K8sContext } from "./render-context";

/*
 * An island's activity monitor on Kubernetes (issue 44, docs/idle-release.md), always on, as the host
 * targets' is (templates/host/activity.sh.mustache): a one-pod Deployment running
 * templates/kubernetes/activity-monitor.py, which writes the island's activity ledger (the ConfigMap
 * `fleet cost` reads, in the format of components/host/activity-ledger.ts) and, with
 * idle_release_after set, scales the island's engine workloads to zero after that long idle, marking
 * the release in the same ConfigMap (`idle-released`). Its death: the Deployment's pod is restarted
 * by the kubelet (or rescheduled), and a restarted monitor takes the idle clock back from the ledger.
 *
 * Least privilege: its own ServiceAccount, bound in the fleet's namespace to a Role that allows get
 * and patch of its own ConfigMap and of the scale subresource of its island's engine workloads, by
 * name, and nothing else (no list, no watch, no create, no delete, no pods, no Secret).
 *
 * The ConfigMap is created empty by `pulumi up`; only the monitor (and `fleet wake`) write its keys,
 * through merge patches of `data`, so a later `up` that applies the ConfigMap again leaves them.
 *
 * Image: the engine image (its python3; the Mooncake master runs there too), on the aux nodes: the
 * monitor must not keep a GPU node busy after it gave its GPUs back.
 */

/** The ConfigMap's key for the release mark (the host's marker file name: activity-ledger.ts). */
export { ACTIVITY_FILE as LEDGER_KEY, IDLE_RELEASED_FILE as MARKER_KEY } from "../host/activity-ledger";

const API_PATHS: Record<EngineWorkload["kind"], { group: string; resource: string; base: string }> = {
  StatefulSet: { group: "apps", resource: "statefulsets", base: "/apis/apps/v1" },
  LeaderWorkerSet: {
    group: "leaderworkerset.x-k8s.io",
    resource: "leaderworkersets",
    base: "/apis/leaderworkerset.x-k8s.io/v1",
  },
};

/** A workload's API path (its scale subresource is this and `/scale`). */
export const workloadPath = (namespace: string, w: Pick<EngineWorkload, "kind" | "name">) =>
  `${API_PATHS[w.kind].base}/namespaces/${namespace}/${API_PATHS[w.kind].resource}/${w.name}`;

/** What the monitor's script is given (its one argument, as JSON). */
export interface ActivityMonitorConfig {
  namespace: string;
  configMap: string;
  /** idle_release_after in seconds; 0: no release (the ledger is written either way). */
  idleS: number;
  heartbeatS: number;
  /** The island's engine workloads with their planned replicas: what a release scales to 0 and a wake back. */
  workloads: { path: string; replicas: number }[];
  engines: {
    url: string;
    metrics: string;
    running: string;
    waiting: string;
    finished: string;
    paused: string | null;
  }[];
}

/** The island's engine workloads with their planned replicas: what a release scales to 0 and a wake back. */
export const releasedWorkloads = (names: K8sNames, island: IslandPlan): ActivityMonitorConfig["workloads"] =>
  // Every engine workload is one replica of one pod group (workloads.ts: replicas 1).
  names.workloads(island).map((w) => ({ path: workloadPath(names.namespace, w), replicas: 1 }));

export function activityMonitorConfig(ctx: K8sContext, island: IslandPlan): ActivityMonitorConfig {
  return {
    namespace: ctx.names.namespace,
    configMap: ctx.names.activityConfigMap(island.index),
    idleS: island.activity.idleReleaseAfterS ?? 0,
    heartbeatS: ACTIVITY_HEARTBEAT_S,
    workloads: releasedWorkloads(ctx.names, island),
    engines: island.activity.engines.map((e) => ({
      url: `http://${ctx.names.pod(island, e.node).host}:${e.port}`,
      metrics: e.metrics,
      running: e.running,
      waiting: e.waiting,
      finished: e.finished,
      paused: e.paused,
    })),
  };
}

/** The island's monitor: its ledger ConfigMap, ServiceAccount, Role, RoleBinding and Deployment. */
export function activityMonitorObjects(ctx: K8sContext, island: IslandPlan): K8sObject[] {
  const i = island.index;
  const name = ctx.names.activityMonitor(i);
  const selector = labels(ctx, "activity", i);
  const config = activityMonitorConfig(ctx, island);
  const byKind = (kind: EngineWorkload["kind"]) =>
    ctx.names
      .workloads(island)
      .filter((w) => w.kind === kind)
      .map((w) => w.name);
  const scaleRules = (Object.keys(API_PATHS) as EngineWorkload["kind"][]).flatMap((kind) =>
    byKind(kind).length
      ? [
          {
            apiGroups: [API_PATHS[kind].group],
            resources: [`${API_PATHS[kind].resource}/scale`],
            resourceNames: byKind(kind),
            verbs: ["get", "patch"],
          },
        ]
      : [],
  );
  const keyed = ctx.secrets.includes("apiKey");
  return [
    { apiVersion: "v1", kind: "ConfigMap", metadata: meta(ctx, config.configMap, selector) },
    { apiVersion: "v1", kind: "ServiceAccount", metadata: meta(ctx, name, selector) },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: meta(ctx, name, selector),
      rules: [
        { apiGroups: [""], resources: ["configmaps"], resourceNames: [config.configMap], verbs: ["get", "patch"] },
        ...scaleRules,
      ],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: meta(ctx, name, selector),
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
      subjects: [{ kind: "ServiceAccount", name, namespace: ctx.names.namespace }],
    },
    singletonDeployment(
      ctx,
      name,
      selector,
      {
        serviceAccountName: name,
        containers: [
          {
            name: "activity-monitor",
            image: ctx.target.image,
            command: ["python3", "-c", k8sLiteral(pythonCheck("activity-monitor")), k8sLiteral(JSON.stringify(config))],
            // SGLang demands the fleet's API key on /metrics: the monitor reads it as the engines do.
            ...(keyed ? { env: [secretEnv(ctx.names.secret, SECRET_KEYS.apiKey)] } : {}),
            // A few HTTP calls every 5 s: what it needs is small and fixed.
            resources: resources("50m", "64Mi"),
          },
        ],
      },
      // Never two monitors writing one ledger.
      { recreate: true },
    ),
  ];
}
