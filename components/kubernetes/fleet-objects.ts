import type { BaseIslandOutputs } from "../backend";
import type { DeploymentPlan } from "../plan/deployment-plan";
import type { StackPlan } from "../plan/stack-plan";
import { labels, meta, type K8sContext } from "./render-context";
import { mooncakeObjects } from "./mooncake-objects";
import { k8sNames, type K8sNames } from "./names";
import { SECRET_KEYS, type K8sObject, type SecretName } from "./objects";
import { routerObjects } from "./router-objects";
import { engineObjects, type ReplicaObjects } from "./workloads";
import { monitoringObjects } from "./monitoring-objects";
import { kubernetesSettings } from "./settings";

/** A Kubernetes island's outputs, known from names alone: in-cluster URLs in the plan's admin order. */
export interface K8sIslandEndpoints extends BaseIslandOutputs {
  /** The fleet's namespace. */
  namespace: string;
  /** Every engine pod with its DNS name, in node order. */
  pods: { node: number; pod: string; host: string }[];
  /** The Mooncake master's RPC address and metadata URL, when the island has a store. */
  mooncake: { master: string; metadata: string } | null;
}

export interface K8sIslandObjects {
  island: number;
  /** Headless Service giving single-node replica pods their DNS names. */
  engineService: K8sObject;
  /** Each replica's workload and (unless `disruption_budget = false`) its PodDisruptionBudget. */
  replicas: ReplicaObjects[];
  router: K8sObject[];
  mooncake: K8sObject[];
  /** PodMonitors of the engines and the router or EPP, with `monitoring = true`. */
  monitors: K8sObject[];
  endpoints: K8sIslandEndpoints;
}

export interface K8sFleetObjects {
  /** The plan's service, when the stack names its services. */
  service?: string;
  namespace: string;
  /** The namespace itself, unless `create_namespace = false` or it is one every cluster has. */
  namespaceObject?: Extract<K8sObject, { kind: "Namespace" }>;
  /** Holds the configured secrets; values are set by the Pulumi component, never rendered. */
  secret?: Extract<K8sObject, { kind: "Secret" }>;
  islands: K8sIslandObjects[];
}

/** Namespaces every cluster has, which Kubernetes refuses to delete: never created, whatever create_namespace says. */
export const BUILT_IN_NAMESPACES = ["default", "kube-system", "kube-public", "kube-node-lease"];

/** Endpoints need no cluster: names are chosen, so URLs are known at plan time. */
export function k8sEndpoints(plan: DeploymentPlan, names: K8sNames = k8sNames(plan)): K8sIslandEndpoints[] {
  return plan.islands.map((island) => ({
    island: island.index,
    namespace: names.namespace,
    routerUrl: names.routerUrl(island),
    adminUrls: island.endpoints.engines.map((e) => names.url(island, e.url)),
    roles: island.endpoints.engines.map((e) => e.role),
    pods: island.nodes.map((n) => ({ node: n.index, ...names.pod(island, n.index) })),
    mooncake: island.mooncake
      ? {
          master: `${names.svcHost(names.mooncakeService(island.index))}:${island.mooncake.masterPort}`,
          metadata: `http://${names.svcHost(names.mooncakeService(island.index))}:${island.mooncake.metadataPort}/metadata`,
        }
      : null,
  }));
}

/**
 * Every Kubernetes object of a fleet, from the plan: per island the engine workloads, their
 * headless Service, the router (vllm-router or llm-d) and the Mooncake store; plus the namespace
 * (`pulumi up` creates objects only in one that exists) and one Secret for the configured
 * credentials. Pure: the Pulumi components only create what this returns.
 */
export function renderK8sFleet(plan: DeploymentPlan, secrets: SecretName[]): K8sFleetObjects {
  if (plan.target !== "kubernetes")
    throw new Error(`internal error: renderK8sFleet needs a Kubernetes plan, not ${plan.target}`);
  const ctx: K8sContext = {
    plan,
    target: kubernetesSettings(plan),
    names: k8sNames(plan),
    secrets: [...new Set(secrets)].sort(),
  };
  const endpoints = k8sEndpoints(plan, ctx.names);
  const secret: K8sFleetObjects["secret"] = ctx.secrets.length
    ? {
        apiVersion: "v1",
        kind: "Secret",
        metadata: meta(ctx, ctx.names.secret, labels(ctx, "engine")),
        type: "Opaque",
        stringData: Object.fromEntries(ctx.secrets.map((s) => [SECRET_KEYS[s], ""])),
      }
    : undefined;
  const ns = ctx.names.namespace;
  const namespaceObject: K8sFleetObjects["namespaceObject"] =
    ctx.target.create_namespace && !BUILT_IN_NAMESPACES.includes(ns)
      ? {
          apiVersion: "v1",
          kind: "Namespace",
          metadata: {
            name: ns,
            labels: {
              "app.kubernetes.io/name": "vllm-fleet",
              "app.kubernetes.io/instance": ctx.names.base,
              "app.kubernetes.io/managed-by": "pulumi",
            },
          },
        }
      : undefined;
  return {
    ...(plan.service === undefined ? {} : { service: plan.service }),
    namespace: ns,
    ...(namespaceObject ? { namespaceObject } : {}),
    secret,
    islands: plan.islands.map((island) => {
      const engines = engineObjects(ctx, island);
      return {
        island: island.index,
        engineService: engines.service,
        replicas: engines.replicas,
        router: routerObjects(ctx, island),
        mooncake: mooncakeObjects(ctx, island),
        monitors: monitoringObjects(ctx, island),
        endpoints: endpoints[island.index],
      };
    }),
  };
}

/** One island's objects in creation order: store, engines (each with its budget), router, monitors. */
export const islandK8sObjects = (i: K8sIslandObjects): K8sObject[] => [
  ...i.mooncake,
  i.engineService,
  ...i.replicas.flatMap((r) => (r.budget ? [r.object, r.budget] : [r.object])),
  ...i.router,
  ...i.monitors,
];

/** Flat list in creation order: the namespace, the secret, then every island's objects. */
export function allK8sObjects(fleet: K8sFleetObjects): K8sObject[] {
  return [
    ...(fleet.namespaceObject ? [fleet.namespaceObject] : []),
    ...(fleet.secret ? [fleet.secret] : []),
    ...fleet.islands.flatMap(islandK8sObjects),
  ];
}

/** A whole stack's objects: the namespace and the Secret once, then each service's islands. */
export interface K8sStackObjects {
  namespace: string;
  namespaceObject?: K8sFleetObjects["namespaceObject"];
  secret?: K8sFleetObjects["secret"];
  /** Each service's objects, in the stack's order (their own namespace and Secret are the stack's). */
  services: K8sFleetObjects[];
}

/**
 * Every Kubernetes object of a stack. Services share the file's [kubernetes] table and the
 * configured credentials, so each renders the same namespace and Secret (neither carries a
 * service's name): they are created once. Every other name carries the service (names.ts).
 */
export function renderK8sStack(stack: StackPlan, secrets: SecretName[]): K8sStackObjects {
  const services = stack.services.map((plan) => renderK8sFleet(plan, secrets));
  const [first] = services;
  const shared = (f: K8sFleetObjects) => JSON.stringify([f.namespace, f.namespaceObject ?? null, f.secret ?? null]);
  for (const f of services)
    if (shared(f) !== shared(first))
      throw new Error(
        `internal error: services ${first.service} and ${f.service} render different namespaces or Secrets`,
      );
  return {
    namespace: first.namespace,
    ...(first.namespaceObject ? { namespaceObject: first.namespaceObject } : {}),
    secret: first.secret,
    services,
  };
}

/** The objects of `service` (undefined: the stack's only, unnamed service). */
export function serviceK8sObjects(stack: K8sStackObjects, service: string | undefined): K8sFleetObjects {
  const found = stack.services.find((f) => f.service === service);
  if (!found) throw new Error(`internal error: no Kubernetes objects rendered for service ${service ?? "(unnamed)"}`);
  return found;
}

/** Flat list in creation order: the namespace, the Secret, then every service's islands' objects. */
export function allK8sStackObjects(stack: K8sStackObjects): K8sObject[] {
  return [
    ...(stack.namespaceObject ? [stack.namespaceObject] : []),
    ...(stack.secret ? [stack.secret] : []),
    ...stack.services.flatMap((f) => f.islands.flatMap(islandK8sObjects)),
  ];
}
