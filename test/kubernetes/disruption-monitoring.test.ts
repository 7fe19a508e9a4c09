/**
 * Issue 20 #8 (one PodDisruptionBudget per engine replica) and #11 (opt-in Prometheus Operator
 * PodMonitors for the engines, the vllm-router and the llm-d EPP), over every k8s-* stack.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfigText } from "../../components/config";
import type { Override } from "../../components/config/overrides";
import { buildPlan } from "../../components/planner";
import type { DeploymentPlan } from "../../components/plan/deployment-plan";
import { stackTotals, type StackPlan } from "../../components/plan/stack-plan";
import { allK8sObjects, renderK8sFleet, type K8sFleetObjects } from "../../components/kubernetes/fleet-objects";
import { kubernetesPlanOut } from "../../components/kubernetes/plan-out";
import type { K8sObject, PodTemplateSpec } from "../../components/kubernetes/objects";
import { K8S_STACKS, stackText } from "../helpers";
import { k8sValidator, type Validator } from "./validate";

const override = (key: string, value: unknown): Override => ({ path: ["kubernetes", key], value });
function plan(name: string, overrides: Override[] = []): DeploymentPlan {
  return buildPlan(loadConfigText(stackText(name), `${name}.toml`, overrides), name);
}
const render = (name: string, overrides: Override[] = []) => renderK8sFleet(plan(name, overrides), ["apiKey"]);

/** A pod as the cluster runs it: its labels and its containers' named ports. */
interface Pod {
  owner: K8sObject;
  labels: Record<string, string>;
  ports: Map<string, number>;
}

function pod(owner: K8sObject, t: PodTemplateSpec, extra: Record<string, string> = {}): Pod {
  const spec = t.spec as any;
  const ports = new Map<string, number>();
  for (const c of [...(spec.initContainers ?? []), ...spec.containers])
    for (const p of c.ports ?? []) if (p.name) ports.set(p.name, p.containerPort);
  return { owner, labels: { ...((t.metadata as any).labels ?? {}), ...extra }, ports };
}

/**
 * Every pod of a fleet. A LeaderWorkerSet's pods also carry the labels its controller adds
 * (kubernetes-sigs/lws api/leaderworkerset/v1/leaderworkerset_types.go: SetNameLabelKey,
 * GroupIndexLabelKey, WorkerIndexLabelKey); our one group is index 0.
 */
function pods(objects: K8sObject[]): Pod[] {
  return objects.flatMap((o): Pod[] => {
    if (o.kind === "StatefulSet" || o.kind === "Deployment") return [pod(o, o.spec.template as PodTemplateSpec)];
    if (o.kind !== "LeaderWorkerSet") return [];
    const lws = (k: number) => ({
      "leaderworkerset.sigs.k8s.io/name": o.metadata.name,
      "leaderworkerset.sigs.k8s.io/group-index": "0",
      "leaderworkerset.sigs.k8s.io/worker-index": String(k),
    });
    const lwt = o.spec.leaderWorkerTemplate;
    return [
      pod(o, lwt.leaderTemplate, lws(0)),
      ...Array.from({ length: lwt.size - 1 }, (_, k) => pod(o, lwt.workerTemplate, lws(k + 1))),
    ];
  });
}

const selects = (matchLabels: Record<string, string>, p: Pod) =>
  Object.entries(matchLabels).every(([k, v]) => p.labels[k] === v);
const ofKind = <K extends K8sObject["kind"]>(objects: K8sObject[], kind: K) =>
  objects.filter((o): o is Extract<K8sObject, { kind: K }> => o.kind === kind);
const budgets = (objects: K8sObject[]) => ofKind(objects, "PodDisruptionBudget");
const monitors = (objects: K8sObject[]) => ofKind(objects, "PodMonitor");

let validate: Validator;
beforeAll(async () => {
  validate = await k8sValidator();
});

describe.each(K8S_STACKS)("%s: disruption budgets and monitors", (name) => {
  const fleet = render(name);
  const objects = allK8sObjects(fleet);
  const all = pods(objects);

  it("issue 20 #8: every engine workload has exactly one PodDisruptionBudget, selecting exactly its pods, maxUnavailable 0, AlwaysAllow", () => {
    const workloads = objects.filter((o) => o.kind === "StatefulSet" || o.kind === "LeaderWorkerSet");
    expect(workloads.length).toBeGreaterThan(0);
    expect(budgets(objects)).toHaveLength(workloads.length);
    for (const w of workloads) {
      const own = all.filter((p) => p.owner === w);
      const mine = budgets(objects).filter((b) => own.some((p) => selects((b.spec.selector as any).matchLabels, p)));
      expect(mine, w.metadata.name).toHaveLength(1);
      const [b] = mine;
      expect(b.metadata).toMatchObject({ name: w.metadata.name, namespace: fleet.namespace });
      expect(all.filter((p) => selects((b.spec.selector as any).matchLabels, p))).toEqual(own);
      expect(b.spec).toEqual({
        maxUnavailable: 0,
        selector: { matchLabels: (b.spec.selector as any).matchLabels },
        unhealthyPodEvictionPolicy: "AlwaysAllow",
      });
      expect(validate(b as any)).toEqual([]);
    }
    // Each budget sits right after its workload, in the island's replicas.
    for (const i of fleet.islands) for (const r of i.replicas) expect(r.budget?.metadata.name).toBe(r.workload.name);
  });

  it("issue 20 #8: no budget selects a router, EPP or Mooncake pod (Deployments, free to move)", () => {
    const movable = all.filter((p) => p.owner.kind === "Deployment");
    for (const b of budgets(objects))
      for (const p of movable)
        expect(selects((b.spec.selector as any).matchLabels, p), p.owner.metadata.name).toBe(false);
  });

  it("kubernetes.disruption_budget = false: no budget", () => {
    const off = allK8sObjects(render(name, [override("disruption_budget", false)]));
    expect(budgets(off)).toEqual([]);
    expect(off.length).toBe(objects.length - budgets(objects).length);
  });

  it("issue 20 #11: no PodMonitor unless kubernetes.monitoring = true", () => {
    expect(monitors(objects)).toEqual([]);
    for (const i of fleet.islands) expect(i.monitors).toEqual([]);
  });

  it("issue 20 #11: monitoring = true: per island a PodMonitor over its serving engines and one over its router or EPP, on named ports the pods expose", () => {
    const p = plan(name, [override("monitoring", true), override("monitoring_labels", { release: "kps" })]);
    const on: K8sFleetObjects = renderK8sFleet(p, ["apiKey"]);
    const onObjects = allK8sObjects(on);
    const onPods = pods(onObjects);
    expect(monitors(onObjects)).toHaveLength(p.islands.reduce((n, i) => n + (i.router ? 2 : 1), 0));
    for (const i of on.islands) {
      const island = p.islands[i.island];
      const [engines, router, ...rest] = i.monitors as Extract<K8sObject, { kind: "PodMonitor" }>[];
      expect(rest).toEqual([]);
      for (const m of i.monitors) {
        expect(validate(m as any), m.metadata.name).toEqual([]);
        expect(m.metadata).toMatchObject({ namespace: on.namespace, labels: { release: "kps" } });
      }
      // Engines: every pod that serves the API (it has the engine's port), and only those.
      const selected = onPods.filter((pod) => selects(engines.spec.selector.matchLabels, pod));
      const serving = onPods.filter(
        (pod) =>
          pod.labels["app.kubernetes.io/component"] === "engine" &&
          pod.labels["vllm-fleet/island"] === String(i.island) &&
          pod.ports.has("http"),
      );
      expect(selected).toEqual(serving);
      // One pod per node on Kubernetes: as many as the island has serving engines, each on its planned port.
      const servingEngines = island.engines.filter((e) => e.port !== undefined);
      expect(selected.length).toBe(servingEngines.length);
      expect(selected.map((pod) => pod.ports.get("http")).sort()).toEqual(servingEngines.map((e) => e.port).sort());
      expect(engines.spec.podMetricsEndpoints).toEqual([{ port: "http", path: "/metrics", scheme: "http" }]);
      if (!island.router) {
        expect(router).toBeUndefined();
        continue;
      }
      // Router: the vllm-router's --prometheus-port, or the EPP's --metrics-port (9090).
      const routerPods = onPods.filter((pod) => selects(router.spec.selector.matchLabels, pod));
      expect(routerPods.map((pod) => pod.owner.kind)).toEqual(["Deployment"]);
      expect(router.spec.podMetricsEndpoints).toEqual([{ port: "metrics", path: "/metrics", scheme: "http" }]);
      const want = island.router.kind === "llm-d" ? island.router.epp.metricsPort : island.router.metricsPort;
      expect(routerPods[0].ports.get("metrics")).toBe(want);
      if (island.router.kind === "llm-d") {
        expect(want).toBe(9090);
        // Scraped without a token: the plan turns the EPP's metrics auth off.
        expect(island.router.epp.argv).toContain("--metrics-endpoint-auth=false");
      } else {
        expect(island.router.argv.map(String)).toEqual(expect.arrayContaining(["--prometheus-port", String(want)]));
      }
    }
  });
});

describe("the new [kubernetes] keys", () => {
  it("default: budgets on, monitoring off, no monitoring labels", () => {
    const t = plan("k8s-single-node").settings as any;
    expect([t.disruption_budget, t.monitoring, t.monitoring_labels]).toEqual([true, false, {}]);
  });

  it.each([
    ["disruption_budget", "yes"],
    ["monitoring", 1],
    ["monitoring_labels", { "bad key!": "x" }],
    ["monitoring_labels", { release: "not a label value" }],
  ])("%s = %j is refused, naming the key", (key, value) => {
    expect(() => plan("k8s-single-node", [override(key, value)])).toThrow(ConfigError);
    expect(() => plan("k8s-single-node", [override(key, value)])).toThrow(new RegExp(`kubernetes\\.${key}`));
  });

  const oneService = (p: DeploymentPlan): StackPlan => ({ stack: p.stack, services: [p], totals: stackTotals([p]) });

  it("plan --out writes each budget and monitor as its own file", () => {
    const files = kubernetesPlanOut(oneService(plan("k8s-llm-d", [override("monitoring", true)]))).map((f) => f.path);
    expect(files.filter((f) => f.includes("/poddisruptionbudget-")).length).toBeGreaterThan(0);
    expect(files.filter((f) => f.includes("/podmonitor-"))).toHaveLength(2);
  });
});
