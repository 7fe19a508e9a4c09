import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { IslandContext, IslandDeployer } from "../backend";
import type { KubernetesTarget } from "../config/types";
import type { SecretName } from "../credentials";
import type { DeploymentPlan } from "../plan/deployment-plan";
import { renderK8sFleet, type K8sFleetObjects } from "./fleet-objects";
import { SECRET_KEYS } from "./objects";
import { k8sResource } from "./resource";

/** What every island of a Kubernetes fleet shares: the cluster, the rendered objects, the credentials' Secret. */
export interface KubernetesFleet {
  provider: k8s.Provider;
  /** Every object of the fleet, rendered once. */
  objects: K8sFleetObjects;
  /** Created before any pod that references it. */
  secret?: pulumi.Resource;
}

export type KubernetesIslandContext = IslandContext & KubernetesFleet;

/**
 * Renders the fleet and creates its one Secret under `parent`: the only object that holds
 * credentials; every pod reads them through secretKeyRef.
 */
export function kubernetesFleet(
  parent: pulumi.ComponentResource,
  plan: DeploymentPlan,
  provider: k8s.Provider,
  secrets: Partial<Record<SecretName, pulumi.Output<string>>>,
): KubernetesFleet {
  const configured = Object.keys(secrets) as SecretName[];
  const objects = renderK8sFleet(plan, configured);
  const secret = objects.secret
    ? new k8s.core.v1.Secret(
        objects.secret.metadata.name,
        {
          ...objects.secret,
          stringData: Object.fromEntries(configured.map((k) => [SECRET_KEYS[k], pulumi.secret(secrets[k]!)])),
        },
        { parent, provider },
      )
    : undefined;
  return { provider, objects, secret };
}

/** Resolves to `value` once every resource is created (and, for workloads, Ready). */
const after = <T>(resources: pulumi.CustomResource[], value: T): pulumi.Output<T> =>
  pulumi.all(resources.map((r) => r.id)).apply(() => value);

/**
 * One island on Kubernetes: the Mooncake store, then the engine workloads (the provider waits
 * until they are Ready, as the SLURM create waits for /health), then the router in front of them.
 * Each workload is a child of its logical part (VllmReplica, PrefillDecodeGroup, Router,
 * MooncakeStore), whose outputs are the in-cluster URLs.
 */
export const deployKubernetesIsland: IslandDeployer<KubernetesIslandContext> = (parent, plan, island, ctx) => {
  const { provider } = ctx;
  const objects = ctx.objects.islands[island.index];
  const ep = objects.endpoints;
  const secretDeps = ctx.secret ? [ctx.secret] : [];
  // Engines load a model before they are Ready; give the provider the same budget as the probes.
  const startupTimeout = (plan.config.target as KubernetesTarget).startup_timeout;
  const slow = { create: `${startupTimeout + 600}s`, update: `${startupTimeout + 600}s`, delete: "10m" };

  // Part outputs are the planned in-cluster URLs; the island's output below waits for readiness.
  const replicaOf = new Map(island.engines.map((e) => [e.id, e.replica]));
  const parts = ctx.parts(island, {
    routerUrl: ep.routerUrl,
    engines: island.endpoints.engines.map((e, k) => ({
      id: e.id,
      role: e.role,
      replica: replicaOf.get(e.id)!,
      url: ep.adminUrls[k],
    })),
    mooncake: ep.mooncake,
  });

  const storeResources = parts.mooncake
    ? objects.mooncake.map((o) => k8sResource(o, { parent: parts.mooncake, provider }))
    : [];
  const engineService = k8sResource(objects.engineService, { parent, provider });
  const engineDeps = [engineService, ...storeResources, ...secretDeps];
  const workloads = objects.replicas.map(({ workload, object }) =>
    k8sResource(object, {
      parent: parts.engines(workload.replica),
      provider,
      dependsOn: engineDeps,
      customTimeouts: slow,
    }),
  );

  // The router starts once its engines are Ready, so it never serves a fleet that is still loading.
  const routerResources = parts.router
    ? objects.router.map((o) =>
        k8sResource(o, {
          parent: parts.router,
          provider,
          dependsOn: [...workloads, ...secretDeps],
          customTimeouts: { create: "20m", update: "20m", delete: "10m" },
        }),
      )
    : [];
  return after([...workloads, ...routerResources, ...storeResources], ep);
};
