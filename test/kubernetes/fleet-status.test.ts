/**
 * `fleet status` on Kubernetes after the kubelet restarted an engine (issue 41 items 5 and 6): its
 * container's restarts and last exit from the pod's status, each engine's weight version through
 * the API server's pod proxy, RESTARTING for a restarted engine that is not Ready, DEGRADED for the
 * island while its router and another engine serve. The cluster is a reader answering a snapshot
 * built from the fleet's own rendered objects, with the status fields the API server fills in.
 */
import { describe, expect, it } from "vitest";
import { loadConfigText } from "../../components/config";
import type { ClusterReader } from "../../components/kubernetes/cluster-reader";
import { renderK8sFleet } from "../../components/kubernetes/fleet-objects";
import { observeKubernetesFleet } from "../../components/kubernetes/fleet-status";
import { wakeThroughApi } from "../../components/kubernetes/wake";
import { logsThroughApi, scrapeThroughApi } from "../../components/kubernetes/pod-reads";
import type { ClusterSnapshot, KubeObject } from "../../components/kubernetes/readiness";
import { viewFromPlan } from "../../components/ops/fleet-view";
import { fleetStatus, islandStatusFromCluster } from "../../components/ops/status";
import { buildPlan } from "../../components/planner";
import { stackText } from "../helpers";

const STACK = "k8s-multi-replica";
const plan = buildPlan(loadConfigText(stackText(STACK), `${STACK}.toml`), STACK);
const fleet = renderK8sFleet(plan, []);
const island = fleet.islands[0];

/**
 * The island as the API server shows it: every workload rolled out, replica 1's pod restarted twice
 * by the kubelet (last exit 137, OOMKilled) and Ready or not as `replica1Ready` says.
 */
function snapshot(replica1Ready: boolean): ClusterSnapshot {
  const workloads = new Map<string, KubeObject>();
  const pods: KubeObject[] = [];
  for (const o of [...island.replicas.map((r) => r.object), ...island.router]) {
    if (o.kind !== "StatefulSet" && o.kind !== "Deployment") continue;
    const live = structuredClone(o) as unknown as KubeObject;
    live.metadata.generation = 1;
    const ready = !o.metadata.name.endsWith("replica1") || replica1Ready;
    live.status = {
      observedGeneration: 1,
      replicas: 1,
      readyReplicas: ready ? 1 : 0,
      updatedReplicas: 1,
      availableReplicas: ready ? 1 : 0,
    };
    workloads.set(`${o.kind}/${o.metadata.name}`, live);
    const template = (
      o.spec as { template: { metadata: { labels: Record<string, string> }; spec: { containers: { name: string }[] } } }
    ).template;
    const restarted = o.metadata.name.endsWith("replica1");
    pods.push({
      metadata: {
        name: o.kind === "StatefulSet" ? `${o.metadata.name}-0` : `${o.metadata.name}-abc`,
        labels: template.metadata.labels,
      },
      spec: { nodeName: "gpu-node-1" },
      status: {
        phase: "Running",
        conditions: [
          { type: "PodScheduled", status: "True" },
          { type: "Ready", status: ready ? "True" : "False" },
        ],
        containerStatuses: template.spec.containers.map((c) => ({
          name: c.name,
          ready,
          restartCount: restarted ? 2 : 0,
          ...(restarted
            ? { lastState: { terminated: { exitCode: 137, reason: "OOMKilled", finishedAt: "2026-11-28T10:00:00Z" } } }
            : {}),
        })),
      },
    } as KubeObject);
  }
  return { workloads, pods, replicaSets: [], events: [] };
}

/** A reader answering `snap`, and each engine pod's weight version through the pod proxy. */
function reader(
  snap: ClusterSnapshot,
  versions: Record<string, string | undefined>,
): ClusterReader & { asked: string[] } {
  const asked: string[] = [];
  return {
    server: "https://test",
    asked,
    snapshot: async () => snap,
    podGet: async (namespace, pod, port, path) => {
      asked.push(`${namespace}/${pod}:${port}${path}`);
      const v = versions[pod];
      return v === undefined ? undefined : { weight_version: v };
    },
    podProxyText: async () => ({ ok: false, why: "not asked" }),
    podLog: async () => ({ ok: false, why: "not asked" }),
    mergePatch: async () => {
      throw new Error("not written here");
    },
    objectAnnotations: async () => undefined,
    configMapData: async () => undefined,
  };
}

async function status(replica1Ready: boolean, versions: Record<string, string | undefined>) {
  const r = reader(snapshot(replica1Ready), versions);
  const reports = await observeKubernetesFleet(plan, {}, r);
  const view = viewFromPlan(plan);
  const islands = view.islands.map((i) =>
    islandStatusFromCluster(
      i,
      reports.find((x) => x.island === i.island)!,
    ),
  );
  return { islands, fleet: fleetStatus(islands), asked: r.asked };
}

describe("fleet status on Kubernetes after the kubelet restarted an engine", () => {
  const [pod0, pod1] = island.endpoints.pods.map((p) => p.pod);

  it("the restarted engine serving the base model while its peer serves v2: RESTARTING with its restarts, last exit and both versions; the island DEGRADED", async () => {
    const { islands, fleet: state, asked } = await status(false, { [pod0]: "v2", [pod1]: "default" });
    expect(asked.sort()).toEqual(
      [`${fleet.namespace}/${pod0}:8100/weight_info`, `${fleet.namespace}/${pod1}:8100/weight_info`].sort(),
    );
    const [i] = islands;
    expect(i.status).toBe("DEGRADED");
    expect(state).toBe("DEGRADED");
    const [e0, e1] = i.processes.filter((p) => p.role !== "router");
    expect(e0).toMatchObject({ status: "READY", restarts: 0, lastRestart: null, weightVersion: "v2" });
    expect(e1).toMatchObject({
      status: "RESTARTING",
      restarts: 2,
      lastRestart: { code: 137, at: "2026-11-28T10:00:00Z" },
      weightVersion: "default",
    });
    expect(e1.detail).toContain("restarted 2 time(s) by the kubelet, last after exit 137 (OOMKilled)");
    expect(e1.detail).toContain(
      "serves weight version default, the island's other engines v2: not Ready until an update reaches it",
    );
    expect(i.detail).toContain(`restarting: ${e1.id}`);
  });

  it("once the update reached it and it is Ready: READY again, its restarts kept; a pod that answers no version reports null", async () => {
    const { islands, fleet: state } = await status(true, { [pod0]: "v2", [pod1]: "v2" });
    expect(state).toBe("READY");
    const e1 = islands[0].processes.filter((p) => p.role !== "router")[1];
    expect(e1).toMatchObject({ status: "READY", restarts: 2, weightVersion: "v2" });
    const none = await status(true, {});
    expect(none.islands[0].processes.every((p) => p.weightVersion === null)).toBe(true);
  });
});

describe("fleet metrics and fleet logs on Kubernetes, through the API server", () => {
  const [pod0, pod1] = island.endpoints.pods.map((p) => p.pod);
  const EXPOSITION = "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 3\n";
  const calls: string[] = [];
  const api: ClusterReader = {
    server: "https://api.test:6443",
    snapshot: async () => snapshot(true),
    mergePatch: async () => {
      throw new Error("not written here");
    },
    objectAnnotations: async () => undefined,
    configMapData: async () => undefined,
    podGet: async () => undefined,
    podProxyText: async (ns, pod, port, path) => {
      calls.push(`proxy ${ns}/${pod}:${port}${path}`);
      return pod === pod0
        ? { ok: true, text: EXPOSITION }
        : { ok: false, why: "the API server answered 503: no endpoints" };
    },
    podLog: async (ns, pod, container, lines) => {
      calls.push(`log ${ns}/${pod} ${container} ${lines}`);
      return pod === pod0
        ? { ok: true, text: "INFO serving\n" }
        : { ok: false, why: "the API server answered 400: container is waiting to start" };
    },
  };

  it("each engine's /metrics through the pod proxy; one the API server could not reach says why", async () => {
    const scrapes = await scrapeThroughApi(plan, {}, api);
    expect(scrapes.map((s) => [s.id, s.url, s.answer.ok])).toEqual([
      [
        expect.any(String),
        `https://api.test:6443/api/v1/namespaces/${fleet.namespace}/pods/${pod0}:8100/proxy/metrics`,
        true,
      ],
      [
        expect.any(String),
        `https://api.test:6443/api/v1/namespaces/${fleet.namespace}/pods/${pod1}:8100/proxy/metrics`,
        false,
      ],
    ]);
    expect(scrapes[1].answer).toEqual({ ok: false, why: "the API server answered 503: no endpoints" });
  });

  it("each selected engine container's log tail through the pod log API, with its reason where there is none", async () => {
    const ids = plan.islands[0].engines.map((e) => e.id);
    const tails = await logsThroughApi(plan, {}, (id) => id === ids[1], 25, api);
    expect(tails).toEqual([
      {
        island: 0,
        id: ids[1],
        source: `pod ${fleet.namespace}/${pod1}, container vllm`,
        answer: { ok: false, why: "the API server answered 400: container is waiting to start" },
      },
    ]);
    expect(calls).toContain(`log ${fleet.namespace}/${pod1} vllm 25`);
  });
});

describe("idle release on Kubernetes: fleet status and fleet wake through the API", () => {
  const cm = `${island.endpoints.namespace}`;
  /** A reader whose island ConfigMap holds `data`, recording each patch. */
  function marked(data: Record<string, string>) {
    const patches: { path: string; body: any }[] = [];
    const asked: string[] = [];
    const r: ClusterReader = {
      ...reader(snapshot(true), {}),
      objectAnnotations: async () => undefined,
      configMapData: async (ns, name) => {
        asked.push(`${ns}/${name}`);
        return name === `${STACK}-i0-activity` ? data : undefined;
      },
      mergePatch: async (path, body) => {
        patches.push({ path, body });
      },
    };
    return { r, patches, asked };
  }

  it("the mark in the island's ConfigMap: IDLE-RELEASED with when and since when, its engines too, the router as it is", async () => {
    const { r, asked } = marked({ "idle-released": "1764400000 1764399970\n", activity: "1764399970 idle\n" });
    const reports = await observeKubernetesFleet(plan, {}, r);
    expect(asked).toEqual([`${cm}/${STACK}-i0-activity`]);
    expect(reports[0].idleReleased).toEqual({ at: 1764400000, idleSince: 1764399970 });
    const [i] = viewFromPlan(plan).islands.map((v) => islandStatusFromCluster(v, reports[0]));
    expect(i.status).toBe("IDLE-RELEASED");
    expect(fleetStatus([i])).toBe("IDLE-RELEASED");
    expect(i.detail).toBe(
      "released itself at 2025-11-29T07:06:40.000Z, idle since 2025-11-29T07:06:10.000Z (idle_release_after); pulumi up or fleet wake brings it back",
    );
    expect(i.processes.filter((p) => p.role !== "router").every((p) => p.status === "IDLE-RELEASED")).toBe(true);
    expect(i.processes.find((p) => p.role === "router")?.status).toBe("READY");
    // Without the mark: as before.
    const plain = await observeKubernetesFleet(plan, {}, marked({ activity: "1 busy\n" }).r);
    expect(plain[0].idleReleased).toBeUndefined();
    expect(islandStatusFromCluster(viewFromPlan(plan).islands[0], plain[0]).status).toBe("READY");
  });

  it("fleet wake scales each engine workload's scale back to its planned replica, then clears the mark; an island not released is left alone", async () => {
    const { r, patches } = marked({ "idle-released": "1764400000 1764399970" });
    const woken = await wakeThroughApi(plan, {}, r);
    expect(woken.map((w) => w.island)).toEqual([0]);
    expect(woken[0].detail).toContain("released at 2025-11-29T07:06:40.000Z");
    const ns = island.endpoints.namespace;
    expect(patches).toEqual([
      ...island.replicas.map((x) => ({
        path: `/apis/apps/v1/namespaces/${ns}/statefulsets/${x.object.metadata.name}/scale`,
        body: { spec: { replicas: 1 } },
      })),
      { path: `/api/v1/namespaces/${ns}/configmaps/${STACK}-i0-activity`, body: { data: { "idle-released": null } } },
    ]);
    const idle = marked({ activity: "1 idle\n" });
    expect(await wakeThroughApi(plan, {}, idle.r)).toEqual([]);
    expect(idle.patches).toEqual([]);
  });
});
