import type { DeploymentPlan } from "../plan/deployment-plan";
import type { ClusterAccess, ClusterIslandReport } from "../target";
import { clusterReader, type ClusterReader } from "./cluster-reader";
import { renderK8sFleet, type K8sIslandObjects } from "./fleet-objects";
import type { K8sObject } from "./objects";
import { engineNamed } from "../plan/engines";
import { enginePods } from "./pod-reads";
import { refKey, worstState, workloadReadiness, type ClusterSnapshot, type WorkloadRef } from "./readiness";
import { podTemplates } from "./rollout";
import { k8sNames } from "./names";
import { readReleaseMark } from "./release-mark";

/*
 * `fleet status` on Kubernetes: the fleet's URLs are in-cluster names, so from a laptop the API
 * server is where its state can be seen. Each island's workloads are read (readiness.ts rules, the
 * same `pulumi up` waits with) and every process takes its workload's state.
 */

const refOf = (o: K8sObject): WorkloadRef => ({ kind: o.kind as WorkloadRef["kind"], name: o.metadata.name });
const workloadsOf = (objects: K8sObject[]) => objects.filter((o) => podTemplates(o).length > 0);

/** Which processes (engine ids, `router`) each workload of an island runs. */
function processMap(island: K8sIslandObjects, plan: DeploymentPlan): { ref: WorkloadRef; processes: string[] }[] {
  const planned = plan.islands[island.island];
  return [
    ...workloadsOf(island.mooncake).map((o) => ({ ref: refOf(o), processes: [] })),
    ...island.replicas.map((r) => ({
      ref: refOf(r.object),
      processes: planned.engines
        .filter((e) => e.role === r.workload.role && e.replica === r.workload.replica)
        .map((e) => e.id),
    })),
    // The router's Deployment (vllm-router, or llm-d's EPP with Envoy) answers for the island's router.
    ...workloadsOf(island.router).map((o, k) => ({ ref: refOf(o), processes: k === 0 ? ["router"] : [] })),
  ];
}

export function islandReport(
  island: K8sIslandObjects,
  plan: DeploymentPlan,
  snap: ClusterSnapshot,
): ClusterIslandReport {
  const rows = processMap(island, plan).map((w) => ({ ...w, r: workloadReadiness(w.ref, snap) }));
  // Nothing of the island exists: never deployed, or destroyed (a missing part of a deployed one is PENDING).
  if (rows.every((w) => !snap.workloads.has(refKey(w.ref))))
    return {
      island: island.island,
      state: "SHUTDOWN",
      detail: `none of its ${rows.length} workloads exists in namespace ${island.endpoints.namespace}`,
      processes: Object.fromEntries(
        rows.flatMap((w) =>
          w.processes.map((id) => [
            id,
            { state: "SHUTDOWN" as const, detail: `${w.ref.kind} ${w.ref.name} does not exist` },
          ]),
        ),
      ),
      nodes: [],
    };
  const planned = plan.islands[island.island];
  /** An engine's container in its pod: the kubelet's restarts there and the last exit. */
  const engineContainer = (id: string) => {
    const e = planned.engines.find((x) => x.id === id);
    const pod = e && island.endpoints.pods.find((p) => p.node === e.node)?.pod;
    const container = e && engineNamed(e.engine).container;
    return snap.pods.find((p) => p.metadata.name === pod)?.status?.containerStatuses?.find((c) => c.name === container);
  };
  const restartsOf = (id: string) => {
    const c = engineContainer(id);
    if (!c) return {};
    const t = c.lastState?.terminated;
    return {
      restarts: c.restartCount ?? 0,
      lastExit: t ? { code: t.exitCode ?? -1, reason: t.reason ?? "exited", at: t.finishedAt ?? "" } : null,
    };
  };
  const state = worstState(rows.map((w) => w.r.state));
  const notReady = rows.filter((w) => w.r.state === state && state !== "READY");
  const pods = rows.reduce((n, w) => n + w.r.ready, 0);
  const wanted = rows.reduce((n, w) => n + w.r.desired, 0);
  const names = new Set(rows.map((w) => w.ref.name));
  const nodes = snap.pods
    .filter((p) => [...names].some((n) => p.metadata.name === n || p.metadata.name.startsWith(`${n}-`)))
    .flatMap((p) => (p.spec?.nodeName ? [p.spec.nodeName] : []));
  return {
    island: island.island,
    state,
    detail: state === "READY" ? `${pods} of ${wanted} pods Ready` : notReady.map((w) => w.r.reason).join("; "),
    processes: Object.fromEntries(
      rows.flatMap((w) =>
        w.processes.map((id) => [
          id,
          { state: w.r.state, detail: w.r.reason, ...(id === "router" ? {} : restartsOf(id)) },
        ]),
      ),
    ),
    nodes: [...new Set(nodes)].sort(),
  };
}

/** Every island of the plan, read in one snapshot of the fleet's namespace. */
export async function observeKubernetesFleet(
  plan: DeploymentPlan,
  access: ClusterAccess,
  reader?: ClusterReader,
): Promise<ClusterIslandReport[]> {
  const fleet = renderK8sFleet(plan, []);
  const refs = fleet.islands.flatMap((i) => processMap(i, plan).map((w) => w.ref));
  const r = reader ?? (await clusterReader(access));
  const selector = `app.kubernetes.io/name=vllm-fleet,app.kubernetes.io/instance=${
    fleet.islands[0]?.replicas[0]?.object.metadata.labels?.["app.kubernetes.io/instance"] ?? ""
  }`;
  const snap = await r.snapshot(fleet.namespace, refs, selector);
  const reports = fleet.islands.map((i) => islandReport(i, plan, snap));
  await Promise.all([weightVersions(plan, reports, r), releaseMarks(plan, reports, r)]);
  return reports;
}

/** Each island's idle release, from the mark its activity monitor left in its ConfigMap (activity-monitor.ts). */
async function releaseMarks(plan: DeploymentPlan, reports: ClusterIslandReport[], r: ClusterReader): Promise<void> {
  const names = k8sNames(plan);
  await Promise.all(
    reports.map(async (report) => {
      const released = await readReleaseMark(r, names, report.island);
      if (released) report.idleReleased = released;
    }),
  );
}

/**
 * Each engine's weight version (Engine.routes.weightVersion), asked through the API server's pod
 * proxy, all at once: its pods' addresses are in-cluster. Null where the engine did not answer one
 * (not serving, no such route, or a pod without processes such as kwok's).
 */
async function weightVersions(plan: DeploymentPlan, reports: ClusterIslandReport[], r: ClusterReader): Promise<void> {
  const route = engineNamed(plan.engine).routes.weightVersion;
  await Promise.all(
    enginePods(plan).flatMap((e) => {
      const seen = reports.find((x) => x.island === e.island)?.processes[e.id];
      if (!seen) return [];
      return [
        r.podGet(e.namespace, e.pod, e.port, route).then((body) => {
          const v = (body as { weight_version?: unknown } | undefined)?.weight_version;
          seen.weightVersion = v === undefined || v === null ? null : String(v);
        }),
      ];
    }),
  );
}
