/**
 * Which namespace a Kubernetes fleet lives in, and whether it owns it (issue 31 fault 3,
 * components/kubernetes/fleet-namespace.ts): without kubernetes.namespace each fleet has its own,
 * named after its Pulumi stack, and every reader of the namespace agrees on it.
 */
import { describe, expect, it } from "vitest";
import { loadStackText } from "../../components/config/load";
import type { Override } from "../../components/config/overrides";
import { k8sBase } from "../../components/kubernetes/base-name";
import { fleetNamespace } from "../../components/kubernetes/fleet-namespace";
import { allK8sStackObjects, k8sEndpoints, renderK8sStack } from "../../components/kubernetes/fleet-objects";
import { k8sNames } from "../../components/kubernetes/names";
import { kubernetesSettings } from "../../components/kubernetes/settings";
import { kubernetesStackReport } from "../../components/kubernetes/stack-report";
import { buildStackPlan } from "../../components/planner";
import { showValue } from "../../components/plan/values";
import { STACK_NAMES, stackText } from "../helpers";

const K8S = STACK_NAMES.filter((n) => n.startsWith("k8s-"));
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const stackPlan = (file: string, pulumiStack = file, overrides: Override[] = []) =>
  buildStackPlan(loadStackText(stackText(file), `${file}.toml`, overrides), pulumiStack);
const set = (key: string, value: unknown): Override => ({ path: ["kubernetes", key], value });
const settingsOf = (overrides: Override[] = []) =>
  kubernetesSettings(stackPlan("k8s-llm-d", "s", overrides).services[0]);

describe("fleetNamespace", () => {
  it("without kubernetes.namespace: vllm-fleet-<base>, created", () => {
    expect(fleetNamespace(settingsOf(), "k8s-llm-d")).toEqual({ name: "vllm-fleet-k8s-llm-d", created: true });
    expect(fleetNamespace(settingsOf(), "RL_Prod.run 2").name).toBe("vllm-fleet-rl-prod-run-2");
  });

  it("a long or odd stack name still gives a DNS-1123 label of at most 63 characters, distinct per stack", () => {
    const stacks = ["x".repeat(200), `${"x".repeat(199)}y`, "123-numeric-start", "-Weird--NAME-", "a"];
    const names = stacks.map((s) => fleetNamespace(settingsOf(), s).name);
    for (const n of names) {
      expect(n.length).toBeLessThanOrEqual(63);
      expect(n).toMatch(DNS_LABEL);
      expect(n.startsWith("vllm-fleet-")).toBe(true);
    }
    expect(new Set(names).size).toBe(names.length);
    expect(names[0]).toBe(`vllm-fleet-${k8sBase("x".repeat(200))}`);
  });

  // Issue 43 item 5: a named namespace is used as it exists unless create_namespace = true asks.
  it("kubernetes.namespace names it and leaves it to its owner; create_namespace = true creates it", () => {
    expect(fleetNamespace(settingsOf([set("namespace", "rl")]), "s")).toEqual({ name: "rl", created: false });
    const off = [set("namespace", "rl"), set("create_namespace", false)];
    expect(fleetNamespace(settingsOf(off), "s")).toEqual({ name: "rl", created: false });
    const on = [set("namespace", "rl"), set("create_namespace", true)];
    expect(fleetNamespace(settingsOf(on), "s")).toEqual({ name: "rl", created: true });
    expect(fleetNamespace(settingsOf([set("create_namespace", true)]), "s")).toEqual({
      name: "vllm-fleet-s",
      created: true,
    });
    // Unset and not created: the fleet's own name, in a namespace someone else made.
    expect(fleetNamespace(settingsOf([set("create_namespace", false)]), "s")).toEqual({
      name: "vllm-fleet-s",
      created: false,
    });
  });

  it.each(["default", "kube-system", "kube-public", "kube-node-lease"])(
    "%s is never created, whatever create_namespace says",
    (ns) => {
      const on = [set("namespace", ns), set("create_namespace", true)];
      expect(fleetNamespace(settingsOf(on), "s")).toEqual({ name: ns, created: false });
    },
  );
});

describe.each(K8S)("%s: every reader of the namespace agrees", (name) => {
  const stack = stackPlan(name);
  const rendered = renderK8sStack(stack, ["hfToken", "apiKey"]);
  const ns = fleetNamespace(kubernetesSettings(stack.services[0]), stack.stack);

  it("the shipped stack uses the fleet's own namespace, except k8s-single-node's existing one", () => {
    expect(ns).toEqual(
      name === "k8s-single-node"
        ? { name: "inference", created: false }
        : { name: `vllm-fleet-${name}`, created: true },
    );
  });

  it("names, endpoints, URLs, the InferencePool reference, the Namespace and every object", () => {
    expect(rendered.namespace).toBe(ns.name);
    expect(rendered.namespaceObject?.metadata.name).toBe(ns.created ? ns.name : undefined);
    for (const o of allK8sStackObjects(rendered))
      if (o.kind !== "Namespace") expect(o.metadata.namespace, `${o.kind} ${o.metadata.name}`).toBe(ns.name);
    for (const plan of stack.services) {
      expect(k8sNames(plan).namespace).toBe(ns.name);
      for (const e of k8sEndpoints(plan)) {
        expect(e.namespace).toBe(ns.name);
        for (const u of [e.routerUrl, ...e.adminUrls]) if (u) expect(u).toContain(`.${ns.name}.svc.`);
      }
      for (const island of plan.islands) {
        const r = island.router;
        if (r?.kind !== "llm-d") continue;
        const argv = r.epp.argv.map((v) => showValue(v, island.index));
        expect(argv[argv.indexOf("--pool-namespace") + 1]).toBe(ns.name);
      }
    }
  });
});

describe("two fleets in one cluster", () => {
  it("two stacks, and one stack file under two Pulumi stacks, get namespaces that differ", () => {
    const a = renderK8sStack(stackPlan("k8s-llm-d"), []);
    const b = renderK8sStack(stackPlan("k8s-wide-ep"), []);
    const dev = renderK8sStack(stackPlan("k8s-llm-d", "dev"), []);
    const prod = renderK8sStack(stackPlan("k8s-llm-d", "prod"), []);
    const names = [a, b, dev, prod].map((r) => r.namespaceObject?.metadata.name);
    expect(names).toEqual(["vllm-fleet-k8s-llm-d", "vllm-fleet-k8s-wide-ep", "vllm-fleet-dev", "vllm-fleet-prod"]);
  });
});

describe("what plan says of the namespace (stack-report.ts)", () => {
  const line = (overrides: Override[]) =>
    kubernetesStackReport(stackPlan("k8s-llm-d", "s", overrides)).text.find((l) => l.startsWith("namespace "));

  it("a named namespace left to the default: used as it exists, with the upgrade warning for a stack that had it created", () => {
    expect(line([set("namespace", "rl-prod")])).toMatch(
      /^namespace rl-prod: not created by the fleet .*set create_namespace = true to keep it, or pulumi up deletes it/,
    );
  });

  it("create_namespace = false, said: no upgrade warning; the fleet's own namespace: created", () => {
    const said = line([set("namespace", "rl-prod"), set("create_namespace", false)]);
    expect(said).toBe("namespace rl-prod: not created by the fleet (it must exist; pulumi destroy leaves it)");
    expect(line([])).toMatch(/^namespace vllm-fleet-s: created by the fleet/);
  });
});
