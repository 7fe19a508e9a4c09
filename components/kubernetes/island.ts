import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { IslandPlan } from "../plan/deployment-plan";
import type { K8sIslandEndpoints, K8sIslandObjects } from "./fleet-objects";
import { MooncakeStore, PrefillDecodeGroup, Router, VllmReplica, type EngineEndpoint } from "../fleet/parts";
import { k8sResource } from "./resource";

export interface K8sIslandArgs {
  plan: IslandPlan;
  /** Prefill/decode: one PrefillDecodeGroup instead of a VllmReplica per replica. */
  disaggregated: boolean;
  objects: K8sIslandObjects;
  provider: k8s.Provider;
  /** Seconds a replica may take to pass its startup probes ([kubernetes] startup_timeout). */
  startupTimeout: number;
  /** Created before any pod that references it. */
  secret?: pulumi.Resource;
}

/** Resolves to `value` once every resource is created (and, for workloads, Ready). */
const after = <T>(resources: pulumi.CustomResource[], value: T): pulumi.Output<T> => pulumi.all(resources.map((r) => r.id)).apply(() => value);

/**
 * One island on Kubernetes: the Mooncake store, then the engine workloads (the provider waits
 * until they are Ready, as the SLURM create waits for /health), then the router in front of them.
 * Each workload is a child of its logical part (VllmReplica, PrefillDecodeGroup, Router,
 * MooncakeStore), whose outputs are the in-cluster URLs.
 */
export function kubernetesIsland(name: string, parent: pulumi.ComponentResource, args: K8sIslandArgs): pulumi.Output<K8sIslandEndpoints> {
  const { objects, provider } = args;
  const ep = objects.endpoints;
  const base = `${name}-i${args.plan.index}`;
  const secretDeps = args.secret ? [args.secret] : [];
  // Engines load a model before they are Ready; give the provider the same budget as the probes.
  const slow = { create: `${args.startupTimeout + 600}s`, update: `${args.startupTimeout + 600}s`, delete: "10m" };

  let storeResources: pulumi.CustomResource[] = [];
  if (ep.mooncake) {
    const store = new MooncakeStore(`${base}-mooncake`, { master: ep.mooncake.master, metadata: ep.mooncake.metadata }, { parent });
    storeResources = objects.mooncake.map((o) => k8sResource(o, { parent: store, provider }));
  }
  const engineService = k8sResource(objects.engineService, { parent, provider });
  const engineDeps = [engineService, ...storeResources, ...secretDeps];

  // Part outputs are the planned in-cluster URLs; the island's output below waits for readiness.
  const endpointsOf = (ids: string[]): EngineEndpoint[] =>
    args.plan.endpoints.engines.map((e, k) => ({ id: e.id, role: e.role, url: ep.adminUrls[k] })).filter((e) => ids.includes(e.id));
  const idsOf = (replicas: K8sIslandObjects["replicas"]) => replicas.flatMap((r) => r.workload.engines.map((e) => e.id));
  const create = (part: pulumi.ComponentResource, replicas: K8sIslandObjects["replicas"]) =>
    replicas.map(({ object }) => k8sResource(object, { parent: part, provider, dependsOn: engineDeps, customTimeouts: slow }));
  const workloads: pulumi.CustomResource[] = [];
  if (args.disaggregated) {
    const group = new PrefillDecodeGroup(`${base}-pd`, { engines: endpointsOf(idsOf(objects.replicas)) }, { parent });
    workloads.push(...create(group, objects.replicas));
  } else {
    for (const r of objects.replicas) {
      const replica = new VllmReplica(`${base}-replica${r.workload.replica}`, { engines: endpointsOf(idsOf([r])) }, { parent });
      workloads.push(...create(replica, [r]));
    }
  }

  let routerResources: pulumi.CustomResource[] = [];
  if (args.plan.router) {
    const router = new Router(`${base}-router`, { kind: args.plan.router.kind, url: ep.routerUrl }, { parent });
    // The router starts once its engines are Ready, so it never serves a fleet that is still loading.
    routerResources = objects.router.map((o) => k8sResource(o, { parent: router, provider, dependsOn: [...workloads, ...secretDeps], customTimeouts: { create: "20m", update: "20m", delete: "10m" } }));
  }
  return after([...workloads, ...routerResources, ...storeResources], ep);
}
