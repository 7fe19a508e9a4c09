/**
 * The Pod Security level a stack's pods need (issue 31 fault 4, components/kubernetes/pod-security.ts):
 * computed from the rendered pod templates of every workload, with the keys behind each violation,
 * and written onto the Namespace the fleet creates.
 */
import { describe, expect, it } from "vitest";
import { loadStackText } from "../../components/config/load";
import type { Override } from "../../components/config/overrides";
import { allK8sStackObjects, renderK8sStack } from "../../components/kubernetes/fleet-objects";
import type { K8sObject } from "../../components/kubernetes/objects";
import {
  BASELINE_CAPABILITIES,
  podSecurityLevel,
  type PodSecurityCauses,
} from "../../components/kubernetes/pod-security";
import { buildStackPlan } from "../../components/planner";
import { STACK_NAMES, stackText } from "../helpers";

const K8S = STACK_NAMES.filter((n) => n.startsWith("k8s-"));
const render = (name: string, overrides: Override[] = [], text = stackText(name)) =>
  renderK8sStack(buildStackPlan(loadStackText(text, `${name}.toml`, overrides), name), []);
const set = (key: string, value: unknown): Override => ({ path: ["kubernetes", key], value });

/** What each shipped stack needs, and the keys that make it so (privileged only through what the file or its shape asks). */
const EXPECTED: Record<string, { level: string; violations: Record<string, string[]> }> = {
  "k8s-disaggregated": {
    level: "privileged",
    violations: {
      "capability IPC_LOCK": ["inference.deployment.type"],
      "capability SYS_RAWIO": ["kubernetes.capabilities"],
    },
  },
  "k8s-disaggregated-x3": {
    level: "privileged",
    violations: {
      "capability IPC_LOCK": ["inference.deployment.type"],
      "capability SYS_RAWIO": ["kubernetes.capabilities"],
    },
  },
  "k8s-kv-offload-mooncake": {
    level: "privileged",
    violations: { "capability IPC_LOCK": ["inference.kv_cache_offload.type"] },
  },
  "k8s-kv-offload-lmcache": {
    level: "privileged",
    violations: { "capability IPC_LOCK": ["inference.kv_cache_offload.type"] },
  },
  "k8s-kv-offload-native": {
    level: "privileged",
    violations: { "capability IPC_LOCK": ["inference.kv_cache_offload.type"] },
  },
  "k8s-llm-d-pd": { level: "privileged", violations: { "capability IPC_LOCK": ["inference.deployment.type"] } },
  "k8s-llm-d": { level: "baseline", violations: {} },
  "k8s-multi-replica": {
    level: "privileged",
    violations: { "hostPath volume model-cache": ["kubernetes.model_cache.host_path"] },
  },
  "k8s-policy-and-judge": {
    level: "privileged",
    violations: { "hostPath volume model-cache": ["kubernetes.model_cache.host_path"] },
  },
  "k8s-prime-multi-replica": {
    level: "privileged",
    violations: { "hostPath volume model-cache": ["kubernetes.model_cache.host_path"] },
  },
  "k8s-sglang-wide-ep": { level: "baseline", violations: {} },
  "k8s-single-node": { level: "baseline", violations: {} },
  "k8s-wide-ep": { level: "baseline", violations: {} },
};

describe("the Pod Security level of every stacks/k8s-*.toml", () => {
  it("covers every Kubernetes stack", () => {
    expect(Object.keys(EXPECTED).sort()).toEqual([...K8S].sort());
  });

  it.each(K8S)("%s: its level, each violation with its keys, and the namespace labelled with it", (name) => {
    const rendered = render(name);
    const { level, violations } = rendered.podSecurity;
    expect(level).toBe(EXPECTED[name].level);
    expect(Object.fromEntries(violations.map((v) => [v.what, v.keys]))).toEqual(EXPECTED[name].violations);
    for (const v of violations) expect(v.workloads.length).toBeGreaterThan(0);
    const ns = rendered.namespaceObject;
    if (!ns) return; // k8s-single-node: a namespace that exists, labelled by its owner
    for (const mode of ["enforce", "warn", "audit"]) {
      expect(ns.metadata.labels[`pod-security.kubernetes.io/${mode}`]).toBe(level);
      expect(ns.metadata.labels[`pod-security.kubernetes.io/${mode}-version`]).toBe("latest");
    }
  });

  it("the workloads named are the stack's engine workloads that do it, and only those", () => {
    const rendered = render("k8s-disaggregated");
    const lws = allK8sStackObjects(rendered)
      .filter((o) => o.kind === "LeaderWorkerSet")
      .map((o) => `LeaderWorkerSet/${o.metadata.name}`);
    expect(lws.length).toBe(3);
    for (const v of rendered.podSecurity.violations) expect(v.workloads.sort()).toEqual(lws.sort());
  });
});

describe("what moves a baseline stack to privileged, and what does not", () => {
  it("a hostPath model cache, naming kubernetes.model_cache.host_path", () => {
    const r = render("k8s-llm-d", [set("model_cache", { host_path: "/mnt/hf" })]);
    expect(r.podSecurity.level).toBe("privileged");
    expect(r.podSecurity.violations.map((v) => [v.what, v.keys])).toEqual([
      ["hostPath volume model-cache", ["kubernetes.model_cache.host_path"]],
    ]);
    expect(r.namespaceObject?.metadata.labels["pod-security.kubernetes.io/enforce"]).toBe("privileged");
  });

  it("a capability outside baseline's list names kubernetes.capabilities; one inside it stays baseline", () => {
    const admin = render("k8s-llm-d", [set("capabilities", ["SYS_ADMIN"])]).podSecurity;
    expect(admin.violations.map((v) => [v.what, v.keys])).toEqual([
      ["capability SYS_ADMIN", ["kubernetes.capabilities"]],
    ]);
    expect(render("k8s-llm-d", [set("capabilities", ["NET_BIND_SERVICE", "CHOWN"])]).podSecurity).toEqual({
      level: "baseline",
      violations: [],
    });
  });

  it("IPC_LOCK asked for in kubernetes.capabilities on a shape that pins memory names both reasons", () => {
    const v = render("k8s-kv-offload-native", [set("capabilities", ["IPC_LOCK"])]).podSecurity.violations;
    expect(v.map((x) => [x.what, x.keys])).toEqual([
      ["capability IPC_LOCK", ["inference.kv_cache_offload.type", "kubernetes.capabilities"]],
    ]);
  });

  it("a PVC model cache, emptyDir caches and the router, EPP and Envoy pods stay within baseline", () => {
    const r = render("k8s-llm-d", [
      set("namespace", "models"),
      set("create_namespace", false),
      set("model_cache", { pvc: "hf" }),
    ]);
    expect(r.podSecurity).toEqual({ level: "baseline", violations: [] });
    expect(r.namespaceObject).toBeUndefined();
  });
});

/** A Deployment whose pod template is `spec` (as rendered objects hold plain values). */
const deployment = (name: string, spec: Record<string, unknown>, annotations?: Record<string, string>): K8sObject =>
  ({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: "ns", labels: {} },
    spec: {
      selector: { matchLabels: {} },
      template: { metadata: { labels: {}, ...(annotations ? { annotations } : {}) }, spec },
    },
  }) as unknown as K8sObject;
const NO_CAUSES: PodSecurityCauses = { capability: () => [], hostPath: () => [] };
const level = (spec: Record<string, unknown>, annotations?: Record<string, string>) =>
  podSecurityLevel([deployment("d", spec, annotations)], NO_CAUSES);
const c = (extra: Record<string, unknown> = {}) => ({ name: "c", image: "i", ...extra });

describe("podSecurityLevel: baseline's checks on any pod template", () => {
  it("a plain pod is baseline", () => {
    expect(level({ containers: [c()] })).toEqual({ level: "baseline", violations: [] });
  });

  it("every capability on baseline's list is allowed", () => {
    expect(
      level({ containers: [c({ securityContext: { capabilities: { add: BASELINE_CAPABILITIES } } })] }).level,
    ).toBe("baseline");
  });

  it.each([
    ["host network", { hostNetwork: true, containers: [c()] }, "hostNetwork"],
    ["host PID", { hostPID: true, containers: [c()] }, "hostPID"],
    ["host IPC", { hostIPC: true, containers: [c()] }, "hostIPC"],
    [
      "a privileged container",
      { containers: [c({ securityContext: { privileged: true } })] },
      "privileged (container c)",
    ],
    [
      "a privileged init container",
      { containers: [c()], initContainers: [{ name: "i", securityContext: { privileged: true } }] },
      "privileged (container i)",
    ],
    ["a host port", { containers: [c({ ports: [{ containerPort: 80, hostPort: 80 }] })] }, "hostPort in container c"],
    [
      "a hostPath volume",
      { containers: [c()], volumes: [{ name: "v", hostPath: { path: "/x" } }] },
      "hostPath volume v",
    ],
    [
      "a capability beyond baseline",
      { containers: [c({ securityContext: { capabilities: { add: ["NET_ADMIN"] } } })] },
      "capability NET_ADMIN",
    ],
    [
      "an unsafe /proc mount",
      { containers: [c({ securityContext: { procMount: "Unmasked" } })] },
      "procMount Unmasked (container c)",
    ],
    [
      "unconfined seccomp on the pod",
      { securityContext: { seccompProfile: { type: "Unconfined" } }, containers: [c()] },
      "seccomp Unconfined (pod)",
    ],
    [
      "unconfined AppArmor",
      { containers: [c({ securityContext: { appArmorProfile: { type: "Unconfined" } } })] },
      "AppArmor Unconfined (container c)",
    ],
    [
      "a custom SELinux type",
      { securityContext: { seLinuxOptions: { type: "spc_t" } }, containers: [c()] },
      "SELinux options (pod)",
    ],
    [
      "an unsafe sysctl",
      { securityContext: { sysctls: [{ name: "kernel.msgmax", value: "1" }] }, containers: [c()] },
      "sysctl kernel.msgmax (pod)",
    ],
    [
      "a Windows host process",
      { containers: [c({ securityContext: { windowsOptions: { hostProcess: true } } })] },
      "Windows hostProcess (container c)",
    ],
  ])("%s makes it privileged", (_what, spec, what) => {
    expect(level(spec)).toEqual({ level: "privileged", violations: [{ what, workloads: ["Deployment/d"], keys: [] }] });
  });

  it("allowed forms of the same fields stay baseline", () => {
    const sc = {
      procMount: "Default",
      seccompProfile: { type: "RuntimeDefault" },
      appArmorProfile: { type: "RuntimeDefault" },
      seLinuxOptions: { type: "container_t" },
      sysctls: [{ name: "net.ipv4.tcp_syncookies", value: "1" }],
    };
    expect(
      level({ securityContext: sc, hostNetwork: false, containers: [c({ ports: [{ containerPort: 80 }] })] }),
    ).toEqual({
      level: "baseline",
      violations: [],
    });
  });

  it("an unconfined AppArmor annotation makes it privileged", () => {
    expect(
      level({ containers: [c()] }, { "container.apparmor.security.beta.kubernetes.io/c": "unconfined" }).level,
    ).toBe("privileged");
  });

  it("LeaderWorkerSet leader and worker templates are both read, and causes name the keys", () => {
    const template = (add: string[]) => ({
      metadata: { labels: {} },
      spec: { containers: [c({ securityContext: { capabilities: { add } } })] },
    });
    const lws = {
      apiVersion: "leaderworkerset.x-k8s.io/v1",
      kind: "LeaderWorkerSet",
      metadata: { name: "g", namespace: "ns", labels: {} },
      spec: { leaderWorkerTemplate: { leaderTemplate: template([]), workerTemplate: template(["SYS_RAWIO"]) } },
    } as unknown as K8sObject;
    const causes: PodSecurityCauses = { capability: (n) => [`because.${n}`], hostPath: () => [] };
    expect(podSecurityLevel([lws], causes).violations).toEqual([
      { what: "capability SYS_RAWIO", workloads: ["LeaderWorkerSet/g"], keys: ["because.SYS_RAWIO"] },
    ]);
  });
});
