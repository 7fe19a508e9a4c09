import type { DeploymentPlan, KubernetesSettings } from "../plan/deployment-plan";
import type { GeneratedFile, Ref } from "../plan/values";
import type { K8sNames } from "./names";
import type { K8sObject, Meta, PodSpec, SecretName } from "./objects";

/** What every Kubernetes renderer reads: the plan, the [kubernetes] table, names, configured secrets. */
export interface K8sContext {
  plan: DeploymentPlan;
  target: KubernetesSettings;
  names: K8sNames;
  /** Secrets the stack configures (Pulumi config); only these are referenced. */
  secrets: SecretName[];
}

/** Where each generated file is mounted (from a ConfigMap) in the pods that read it. */
export const MOUNTED_FILES: Record<Exclude<GeneratedFile, "epp-endpoints">, { dir: string; file: string }> = {
  "mooncake-config": { dir: "/etc/vllm-fleet/mooncake", file: "mooncake.json" },
  "epp-config": { dir: "/etc/vllm-fleet/epp", file: "epp.yaml" },
  "envoy-config": { dir: "/etc/vllm-fleet/envoy", file: "envoy.yaml" },
};

export function mountedPath(file: GeneratedFile): string {
  if (file === "epp-endpoints")
    throw new Error(
      "internal error: on Kubernetes the EPP discovers pods through its InferencePool, not an endpoints file",
    );
  return `${MOUNTED_FILES[file].dir}/${MOUNTED_FILES[file].file}`;
}

export type Component = "engine" | "router" | "router-follower" | "mooncake" | "activity";

/**
 * The labels objects carry and select on: fleet, component, island, plus `extra`. A named
 * service's island objects also carry its name: services share the namespace and number their
 * islands from 0, so without it one service's selectors would match the other's pods. Objects of
 * no island (the Secret) are the stack's, shared by every service, and carry none.
 */
export function labels(
  ctx: K8sContext,
  component: Component,
  island?: number,
  extra: Record<string, string> = {},
): Record<string, string> {
  const service = ctx.plan.service;
  return {
    "app.kubernetes.io/name": "vllm-fleet",
    "app.kubernetes.io/instance": ctx.names.base,
    "app.kubernetes.io/component": component,
    ...(island === undefined || service === undefined ? {} : { "vllm-fleet/service": service }),
    ...(island === undefined ? {} : { "vllm-fleet/island": String(island) }),
    ...extra,
  };
}

export function meta(
  ctx: K8sContext,
  name: string,
  objectLabels: Record<string, string>,
  annotations?: Record<string, string>,
): Meta {
  return {
    name: ctx.names.check(name),
    namespace: ctx.names.namespace,
    labels: { ...objectLabels, "app.kubernetes.io/managed-by": "pulumi" },
    ...(annotations ? { annotations } : {}),
  };
}

/** Scratch directories belong to per-rank engine processes, which only SLURM runs (config/topology.ts perRankEngines). */
function scratchUnsupported(): never {
  throw new Error("internal error: a Kubernetes plan has no per-rank engines, so no scratch directory");
}

/** How a node reference is spelled for a reader: by default the node's pod DNS name (names.ts pod). */
export type NodeHost = (node: number) => string;

/**
 * Resolves a plan reference to a literal for a container running in island `island`'s pods; in a
 * LeaderWorkerSet's pods `leader` spells the address of the group's leader node (which LWS injects).
 * `nodeHost` spells other nodes otherwise (a router given its engines' ready Services).
 */
export function k8sRefs(
  ctx: K8sContext,
  island: number,
  self: string,
  leader?: { node: number; address: string },
  nodeHost?: NodeHost,
): (ref: Ref) => string {
  const plan = ctx.plan.islands[island];
  const host = nodeHost ?? ((node: number) => ctx.names.pod(plan, node).host);
  return (ref) =>
    ref.ref === "node"
      ? leader?.node === ref.node
        ? leader.address
        : host(ref.node)
      : ref.ref === "self"
        ? self
        : ref.ref === "file"
          ? mountedPath(ref.file)
          : scratchUnsupported();
}

/**
 * Pod settings every fleet pod shares: no service-link env, pull secrets; then the node selector and
 * tolerations of its kind: engines get the GPU ones (node_selector, tolerations), the router, EPP and
 * Mooncake master pods their own (aux_node_selector, aux_tolerations), so they need no GPU node.
 */
export function placement(ctx: K8sContext, pods: "engine" | "aux"): Partial<PodSpec> {
  const t = ctx.target;
  const [nodeSelector, tolerations] =
    pods === "engine" ? [t.node_selector, t.tolerations] : [t.aux_node_selector, t.aux_tolerations];
  return {
    // Service links inject *_PORT variables; a Service named vllm-... would yield VLLM_PORT, which vLLM reads.
    enableServiceLinks: false,
    ...(t.image_pull_secrets.length ? { imagePullSecrets: t.image_pull_secrets.map((name) => ({ name })) } : {}),
    ...(Object.keys(nodeSelector).length ? { nodeSelector } : {}),
    ...(tolerations.length ? { tolerations } : {}),
    ...(t.priority_class ? { priorityClassName: t.priority_class } : {}),
  };
}

/**
 * A one-replica Deployment of fleet pods (router, EPP + Envoy, Mooncake master). `recreate`: never
 * two at once (a second master would split the store); `annotations` go on the pod template.
 */
export function singletonDeployment(
  ctx: K8sContext,
  name: string,
  selector: Record<string, string>,
  spec: PodSpec,
  opts: { recreate?: boolean; annotations?: Record<string, string> } = {},
): K8sObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: meta(ctx, name, selector),
    spec: {
      replicas: 1,
      ...(opts.recreate ? { strategy: { type: "Recreate" } } : {}),
      selector: { matchLabels: selector },
      template: {
        metadata: { labels: selector, ...(opts.annotations ? { annotations: opts.annotations } : {}) },
        spec: { ...placement(ctx, "aux"), ...spec },
      },
    },
  };
}
