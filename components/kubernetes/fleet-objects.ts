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
import { activityMonitorObjects } from "./activity-monitor";
import { kubernetesSettings } from "./settings";
import { k8sBase } from "./base-name";
import { fleetNamespace } from "./fleet-namespace";
import { podSecurityCauses, podSecurityLevel, type PodSecurity, type PodSecurityLevel } from "./pod-security";

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
  /** The activity monitor (activity-monitor.ts): its ledger ConfigMap, RBAC and Deployment. */
  activity: K8sObject[];
  endpoints: K8sIslandEndpoints;
}

export interface K8sFleetObjects {
  /** The plan's service, when the stack names its services. */
  service?: string;
  namespace: string;
  /** Holds the configured secrets; values are set by the Pulumi component, never rendered. */
  secret?: Extract<K8sObject, { kind: "Secret" }>;
  islands: K8sIslandObjects[];
}

type NamespaceObject = Extract<K8sObject, { kind: "Namespace" }>;

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
 * headless Service, the router (vllm-router or llm-d) and the Mooncake store; plus one Secret for
 * the configured credentials. The namespace is the stack's (renderK8sStack), labelled for every
 * service's pods. Pure: the Pulumi components only create what this returns.
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
  return {
    ...(plan.service === undefined ? {} : { service: plan.service }),
    namespace: ctx.names.namespace,
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
        activity: activityMonitorObjects(ctx, island),
        endpoints: endpoints[island.index],
      };
    }),
  };
}

/** One island's objects in creation order: store, engines (each with its budget), router, monitors, activity monitor. */
export const islandK8sObjects = (i: K8sIslandObjects): K8sObject[] => [
  ...i.mooncake,
  i.engineService,
  ...i.replicas.flatMap((r) => (r.budget ? [r.object, r.budget] : [r.object])),
  ...i.router,
  ...i.monitors,
  ...i.activity,
];

/** Flat list in creation order: the secret, then every island's objects (the namespace is the stack's). */
export function allK8sObjects(fleet: K8sFleetObjects): K8sObject[] {
  return [...(fleet.secret ? [fleet.secret] : []), ...fleet.islands.flatMap(islandK8sObjects)];
}

/** A whole stack's objects: the namespace and the Secret once, then each service's islands. */
export interface K8sStackObjects {
  namespace: string;
  /** The namespace itself, when the fleet creates it (fleet-namespace.ts), labelled with the level its pods need. */
  namespaceObject?: NamespaceObject;
  /** The Pod Security level every pod of the stack needs, and why (pod-security.ts). */
  podSecurity: PodSecurity;
  secret?: K8sFleetObjects["secret"];
  /** Each service's objects, in the stack's order (their own namespace and Secret are the stack's). */
  services: K8sFleetObjects[];
}

/**
 * Pod Security admission enforces, warns and audits at the level the fleet's pods need, against the
 * latest standard: a cluster whose default is stricter admits the fleet, one that relaxes it does not
 * leave the fleet's namespace open to more.
 */
const podSecurityLabels = (level: PodSecurityLevel): Record<string, string> =>
  Object.fromEntries(
    ["enforce", "warn", "audit"].flatMap((mode) => [
      [`pod-security.kubernetes.io/${mode}`, level],
      [`pod-security.kubernetes.io/${mode}-version`, "latest"],
    ]),
  );

/**
 * Every Kubernetes object of a stack. Services share the file's [kubernetes] table and the
 * configured credentials, so each renders the same namespace and Secret (neither carries a
 * service's name): they are created once. Every other name carries the service (names.ts). The
 * namespace, when the fleet creates it, admits exactly the Pod Security level all services' pods need.
 */
export function renderK8sStack(stack: StackPlan, secrets: SecretName[]): K8sStackObjects {
  const services = stack.services.map((plan) => renderK8sFleet(plan, secrets));
  const [first] = services;
  const shared = (f: K8sFleetObjects) => JSON.stringify([f.namespace, f.secret ?? null]);
  for (const f of services)
    if (shared(f) !== shared(first))
      throw new Error(
        `internal error: services ${first.service} and ${f.service} render different namespaces or Secrets`,
      );
  const podSecurity = podSecurityLevel(
    services.flatMap((f) => f.islands.flatMap(islandK8sObjects)),
    podSecurityCauses(stack.services),
  );
  const ns = fleetNamespace(kubernetesSettings(stack.services[0]), stack.stack);
  const namespaceObject: NamespaceObject | undefined = ns.created
    ? {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: {
          name: ns.name,
          labels: {
            "app.kubernetes.io/name": "vllm-fleet",
            "app.kubernetes.io/instance": k8sBase(stack.stack),
            "app.kubernetes.io/managed-by": "pulumi",
            ...podSecurityLabels(podSecurity.level),
          },
        },
      }
    : undefined;
  return {
    namespace: first.namespace,
    ...(namespaceObject ? { namespaceObject } : {}),
    podSecurity,
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
