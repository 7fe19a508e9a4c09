/**
 * `fleet cost` on Kubernetes: each island's pods, as the API server shows them, from their
 * status.startTime x the GPUs their containers request, with the island's activity ledger from its
 * ConfigMap. The pods are built from the fleet's own rendered workloads (their templates' resources
 * and labels) with the status fields the API server fills in.
 */
import { describe, expect, it } from "vitest";
import { loadConfigText } from "../../components/config";
import type { ClusterReader } from "../../components/kubernetes/cluster-reader";
import { renderK8sFleet } from "../../components/kubernetes/fleet-objects";
import { heldThroughApi } from "../../components/kubernetes/held-pods";
import { k8sNames } from "../../components/kubernetes/names";
import type { ClusterSnapshot, KubeObject } from "../../components/kubernetes/readiness";
import { costReport } from "../../components/ops/cost";
import { buildPlan } from "../../components/planner";
import { stackText } from "../helpers";

const STACK = "k8s-multi-replica";
const plan = buildPlan(loadConfigText(stackText(STACK), `${STACK}.toml`), STACK);
const island = renderK8sFleet(plan, []).islands[0];
const T0 = Date.parse("2026-11-29T10:00:00Z") / 1000;

/** Every replica's pod started at T0 + 60 k; the last one Failed 1800 s after its start. */
function snapshot(): ClusterSnapshot {
  const sets = island.replicas.map((r) => r.object).filter((o) => o.kind === "StatefulSet");
  const pods = sets.map((o, k) => {
    const template = (o.spec as { template: { metadata: { labels: Record<string, string> }; spec: unknown } }).template;
    const ended = k === sets.length - 1;
    return {
      metadata: { name: `${o.metadata.name}-0`, labels: template.metadata.labels },
      spec: template.spec,
      status: {
        phase: ended ? "Failed" : "Running",
        startTime: new Date((T0 + 60 * k) * 1000).toISOString(),
        containerStatuses: ended
          ? [{ state: { terminated: { finishedAt: new Date((T0 + 60 * k + 1800) * 1000).toISOString() } } }]
          : [{ state: { running: {} } }],
      },
    } as unknown as KubeObject;
  });
  return { workloads: new Map(), pods, replicaSets: [], events: [] };
}

function reader(configMaps: Record<string, Record<string, string>>): ClusterReader & { asked: string[] } {
  const asked: string[] = [];
  return {
    server: "https://test",
    asked,
    snapshot: async () => snapshot(),
    mergePatch: async () => {
      throw new Error("not written here");
    },
    objectAnnotations: async () => undefined,
    configMapData: async (ns, name) => {
      asked.push(`${ns}/${name}`);
      return configMaps[name];
    },
    podGet: async () => undefined,
    podProxyText: async () => ({ ok: false, why: "not asked" }),
    podLog: async () => ({ ok: false, why: "not asked" }),
  };
}

describe("fleet cost on Kubernetes, through the API server", () => {
  const now = T0 + 3600;
  const gpusPerPod = plan.islands[0].nodes[0].gpusUsed;

  it("each pod from its start time (until now, or its containers' end) x its GPU requests; the ConfigMap's ledger splits them", async () => {
    const name = k8sNames(plan).activityConfigMap(0);
    const r = reader({ [name]: { activity: `${T0} busy\n${T0 + 60} busy\n${T0 + 120} idle\n` } });
    const [held] = await heldThroughApi(plan, {}, r, now);
    expect(r.asked).toEqual([`${island.endpoints.namespace}/${name}`]);
    const n = held.jobs.length;
    expect(n).toBe(plan.islands[0].nodes.length);
    expect(held.jobs.map((j) => j.gpus)).toEqual(Array(n).fill(gpusPerPod));
    expect(held.jobs.map((j) => j.elapsed)).toEqual(held.jobs.map((_, k) => (k === n - 1 ? 1800 : 3600 - 60 * k)));
    expect(held.jobs[0]).toMatchObject({ running: true, gpuSource: "the pod's nvidia.com/gpu requests" });
    expect(held.jobs[n - 1].running).toBe(false);
    expect(held.notes?.[0]).toMatch(/pods deleted before .* are not counted/);
    const report = costReport([held], { model: plan.model, target: "kubernetes", now: new Date(now * 1000) });
    // The first pod: busy from T0 for 120 s, idle until two heartbeats past its last line.
    expect(report.islands[0].jobs[0].held.busy).toBeCloseTo((120 * gpusPerPod) / 3600, 9);
    expect(report.islands[0].jobs[0].held.idle).toBeCloseTo((120 * gpusPerPod) / 3600, 9);
    expect(report.complete).toBe(true);
  });

  it("no ledger ConfigMap: the busy share is unknown, all of the time unrecorded", async () => {
    const [held] = await heldThroughApi(plan, {}, reader({}), now);
    expect(held.jobs.every((j) => j.activity === null)).toBe(true);
    const report = costReport([held], { model: plan.model, target: "kubernetes", now: new Date(now * 1000) });
    expect(report.total.unrecorded).toBeCloseTo(report.total.gpuHours, 9);
    expect(report.total.busy).toBe(0);
  });

  it("an API server that does not answer: the error, no hours", async () => {
    const r = reader({});
    r.snapshot = async () => {
      throw new Error("GET https://test/api/v1/namespaces/x/pods: connect ECONNREFUSED");
    };
    await expect(heldThroughApi(plan, {}, r, now)).rejects.toThrow(/ECONNREFUSED/);
  });
});
