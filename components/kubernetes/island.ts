import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { IslandContext, IslandDeployer } from "../backend";
import type { SecretName } from "../credentials";
import type { StackPlan } from "../plan/stack-plan";
import { renderK8sStack, serviceK8sObjects, type K8sIslandEndpoints, type K8sStackObjects } from "./fleet-objects";
import { SECRET_KEYS, skipProviderAwait, type K8sObject } from "./objects";
import { k8sIslandPrefix } from "./base-name";
import { k8sNames } from "./names";
import type { ClusterConfig } from "./provider";
import { clusterReader } from "./cluster-reader";
import {
  observeReleases,
  releasableIslands,
  RELEASE_ANNOTATION,
  releaseAnnotation,
  testReleaseReader,
  type IslandRelease,
} from "./release-observe";
import { readinessCommand } from "./readiness-command";
import { k8sResource } from "./resource";
import {
  annotatePod,
  mapPodTemplates,
  podDependencies,
  podReferences,
  podTemplates,
  SECRETS_DIGEST_ANNOTATION,
  secretsDigest,
} from "./rollout";
import { kubernetesSettings } from "./settings";

/** What every island of every service of a Kubernetes stack shares: the cluster, the rendered objects, the namespace and the Secret. */
export interface KubernetesFleet {
  provider: k8s.Provider;
  /** The provider's cluster, for the readiness waits (readiness-command.ts). */
  cluster: ClusterConfig;
  /** Every object of the stack (each service's), rendered once. */
  objects: K8sStackObjects;
  /** The namespace, when the fleet creates it: every namespaced object depends on it. */
  namespace?: pulumi.Resource;
  /** Created before any pod that references it. */
  secret?: pulumi.Resource;
  /** A digest of the Secret's values (a Pulumi secret): on every pod template that reads the Secret. */
  secretsDigest?: pulumi.Output<string>;
  /** What the cluster said of each releasable island before planning, by its activity ConfigMap (release-observe.ts). */
  releases?: pulumi.Output<Record<string, IslandRelease>>;
}

export type KubernetesIslandContext = IslandContext & KubernetesFleet;

/**
 * Renders the stack (every service) and creates its namespace (unless the stack says it exists)
 * and its one Secret under `parent`: the only object that holds credentials; every pod reads them through
 * secretKeyRef.
 *
 * A credential's new value must reach the engines, which read it only when a container starts.
 * The provider is set to update the Secret in place (enableSecretMutable, provider.ts), and every
 * pod template that reads it carries a digest of its values, so the workloads roll after the
 * Secret changes. The digest comes from the config values, not from the Secret resource: it is
 * known at preview (a computed value would make pulumi-kubernetes skip its schema check and
 * server dry-run of every engine workload: provider.go Check, "Do not validate against OpenAPI spec
 * if there is a computed value", and Create's skipPreview on hasComputedValue), and the workloads
 * have no property dependency on the Secret that a replacement of it could cascade through (pulumi
 * pkg/resource/deploy/step_generator.go, calculateDependentReplacements). It stays a Pulumi secret
 * (derived from secret outputs), and pulumi-kubernetes keeps a secret input secret in the resource's
 * outputs (provider.go annotateSecrets), so state and diffs show [secret]. On the cluster it is
 * plain text to anyone who reads workloads, so it is a salted scrypt digest (rollout.ts
 * secretsDigest) rather than an HMAC under a key only Pulumi holds: the program has no such key
 * that is stable across runs. The Secret's uid would be one (only those who may read the Secret
 * see it), but it is a provider output, with the costs above.
 */
export function kubernetesFleet(
  parent: pulumi.ComponentResource,
  stack: StackPlan,
  { provider, cluster }: { provider: k8s.Provider; cluster: ClusterConfig },
  secrets: Partial<Record<SecretName, pulumi.Output<string>>>,
): KubernetesFleet {
  const configured = Object.keys(secrets) as SecretName[];
  const objects = renderK8sStack(stack, configured);
  const namespace = objects.namespaceObject ? k8sResource(objects.namespaceObject, { parent, provider }) : undefined;
  const releases = observedReleases(stack, cluster);
  if (!objects.secret) return { provider, cluster, objects, namespace, releases };
  const values = Object.fromEntries(configured.map((k) => [SECRET_KEYS[k], pulumi.secret(secrets[k]!)]));
  const secret = new k8s.core.v1.Secret(
    objects.secret.metadata.name,
    { ...objects.secret, stringData: values },
    { parent, provider, dependsOn: namespace ? [namespace] : [] },
  );
  const { name, namespace: ns } = objects.secret.metadata;
  const digest = pulumi.secret(pulumi.all(values).apply((v) => secretsDigest(`${ns}/${name}`, v)));
  return { provider, cluster, objects, namespace, secret, secretsDigest: digest, releases };
}

/**
 * The release marks of the islands with idle_release_after, read from the cluster as the provider
 * reaches it, once per run (release-observe.ts); undefined when no island has the key, so such a
 * stack asks the cluster nothing more than before.
 */
function observedReleases(
  stack: StackPlan,
  cluster: ClusterConfig,
): pulumi.Output<Record<string, IslandRelease>> | undefined {
  if (releasableIslands(stack).length === 0) return undefined;
  const seen = pulumi.output(cluster.data).apply((data) =>
    observeReleases(
      testReleaseReader() ??
        (() =>
          clusterReader({
            ...(cluster.path !== undefined && { kubeconfigPath: cluster.path }),
            ...(data !== undefined && { kubeconfigData: data }),
            ...(cluster.context !== undefined && { context: cluster.context }),
          })),
      stack,
      (m) => void pulumi.log.warn(m),
    ),
  );
  // The kubeconfig made it secret; what the cluster says of the marks is not.
  return pulumi.unsecret(seen);
}

/** `o` (an engine workload) with its release annotation (release-observe.ts), when its island is releasable. */
function withRelease(ctx: KubernetesIslandContext, configMap: string, o: K8sObject): K8sObject {
  if (!ctx.releases) return o;
  const annotations = (o.metadata.annotations ?? {}) as Record<string, string>;
  const planned = ctx.releases.apply((seen) => {
    const at = releaseAnnotation(seen[configMap], o.metadata.name);
    return at === undefined ? annotations : { ...annotations, [RELEASE_ANNOTATION]: at };
  });
  return { ...o, metadata: { ...o.metadata, annotations: planned as unknown as Record<string, string> } } as K8sObject;
}

/** Resolves to `value` once every resource is created (and, for workloads, Ready). */
const after = <T>(resources: pulumi.CustomResource[], value: T): pulumi.Output<T> =>
  pulumi.all(resources.map((r) => r.id)).apply(() => value);

/**
 * Creates `objects` under one parent: first those without pods, then each workload after what its
 * pods read (rollout.ts podDependencies: ConfigMaps, Secret, ServiceAccount and RBAC; a changed
 * ConfigMap or Secret is replaced or updated before the pods that read it restart) and `dependsOn`.
 * A pod that reads the fleet Secret carries the digest of its values.
 */
function createObjects(
  ctx: KubernetesIslandContext,
  objects: K8sObject[],
  opts: pulumi.CustomResourceOptions & { dependsOn: pulumi.Resource[] },
): pulumi.CustomResource[] {
  const created = new Map<K8sObject, pulumi.CustomResource>();
  const workloads = objects.filter((o) => podTemplates(o).length > 0);
  for (const o of objects) if (!workloads.includes(o)) created.set(o, k8sResource(o, opts));
  for (const o of workloads) {
    const reads = podDependencies(o, objects).map((d) => created.get(d)!);
    created.set(
      o,
      k8sResource(skipProviderAwait(withSecretsDigest(ctx, o)), { ...opts, dependsOn: [...opts.dependsOn, ...reads] }),
    );
  }
  return objects.map((o) => created.get(o)!);
}

/** `o` with the Secret's digest on each pod template that reads the Secret (the others unchanged). */
function withSecretsDigest(ctx: KubernetesIslandContext, o: K8sObject): K8sObject {
  const secret = ctx.objects.secret?.metadata.name;
  const digest = ctx.secretsDigest;
  if (!secret || !digest) return o;
  return mapPodTemplates(o, (t) =>
    podReferences(t).secrets.has(secret) ? annotatePod(t, SECRETS_DIGEST_ANNOTATION, digest) : t,
  );
}

/** The labels every pod of one island carries (render-context.ts labels), as a selector. */
function islandPodSelector(o: K8sObject): string {
  const keep = ["app.kubernetes.io/name", "app.kubernetes.io/instance", "vllm-fleet/service", "vllm-fleet/island"];
  const l = (o.metadata.labels ?? {}) as Record<string, string>;
  return keep.flatMap((k) => (l[k] !== undefined ? [`${k}=${l[k]}`] : [])).join(",");
}

/**
 * One island on Kubernetes: the Mooncake store, then the engine workloads, then the router in front
 * of them, each step after the one before is Ready (readiness-command.ts: a wait that fails with the
 * cluster's reason, as the SLURM create waits for /health). Each workload is a child of its
 * logical part (VllmReplica, PrefillDecodeGroup, Router, MooncakeStore), whose outputs are the
 * in-cluster URLs.
 */
export const deployKubernetesIsland: IslandDeployer<KubernetesIslandContext, K8sIslandEndpoints> = (
  parent,
  plan,
  island,
  ctx,
) => {
  const { provider } = ctx;
  const objects = serviceK8sObjects(ctx.objects, plan.service).islands[island.index];
  const ep = objects.endpoints;
  const nsDeps = ctx.namespace ? [ctx.namespace] : [];
  const secretDeps = ctx.secret ? [ctx.secret] : [];
  const settings = kubernetesSettings(plan);
  const prefix = k8sIslandPrefix(plan.stack, island.index, plan.service);
  // Engines load a model before they are Ready: the wait gets the probes' budget and ten minutes.
  // The Mooncake store gets it too: its image is the multi-GB vLLM image, and the engines wait for it.
  const slowS = settings.startup_timeout + 600;
  const deleteTimeout = { delete: "10m" };
  // An island its monitor may release: its engine workloads carry the release annotation, and a
  // release brought back waits for the engines again (release-observe.ts).
  const configMap = k8sNames(plan).activityConfigMap(island.index);
  const releasable = island.activity.idleReleaseAfterS !== null && ctx.releases !== undefined;
  const engineObject = (o: K8sObject) => (releasable ? withRelease(ctx, configMap, o) : o);
  const releasedAt = releasable
    ? ctx.releases!.apply(
        (seen) => releaseAnnotation(seen[configMap], objects.replicas[0].object.metadata.name) ?? "never",
      )
    : undefined;
  const waitFor = (what: string, workloads: K8sObject[], timeoutS: number, opts: pulumi.CustomResourceOptions) =>
    readinessCommand(
      `${prefix}-${what}-ready`,
      {
        namespace: ep.namespace,
        workloads,
        podSelector: islandPodSelector(workloads[0]),
        timeoutS,
        stuckAfterS: settings.stuck_after,
        cluster: ctx.cluster,
        ...(ctx.secretsDigest ? { rollsWith: ctx.secretsDigest } : {}),
        ...(what === "engines" && releasedAt ? { releasedAt } : {}),
      },
      opts,
    );

  // Part outputs are the planned in-cluster URLs; the island's output below waits for readiness.
  const replicaOf = new Map(island.engines.map((e) => [e.id, e.replica]));
  const parts = ctx.parts(plan, island, {
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
    ? createObjects(ctx, objects.mooncake, {
        parent: parts.mooncake,
        provider,
        dependsOn: nsDeps,
        customTimeouts: deleteTimeout,
      })
    : [];
  const storeWorkloads = objects.mooncake.filter((o) => podTemplates(o).length > 0);
  const storeReady =
    parts.mooncake && storeWorkloads.length
      ? [waitFor("store", storeWorkloads, slowS, { parent: parts.mooncake, dependsOn: storeResources })]
      : [];
  const engineService = k8sResource(objects.engineService, { parent, provider, dependsOn: nsDeps });
  const engineDeps = [...nsDeps, engineService, ...storeResources, ...storeReady, ...secretDeps];
  const workloads = objects.replicas.map(({ workload, object }) =>
    k8sResource(engineObject(skipProviderAwait(withSecretsDigest(ctx, object))), {
      parent: parts.engines(workload.replica),
      provider,
      dependsOn: engineDeps,
      customTimeouts: deleteTimeout,
    }),
  );
  const enginesReady = waitFor(
    "engines",
    objects.replicas.map((r) => r.object),
    slowS,
    { parent, dependsOn: [engineService, ...workloads] },
  );

  // Each replica's disruption budget, created once the engines are Ready: until then no engine is
  // healthy to protect (the budget always lets a not-ready pod go). Destroyed before its workload.
  objects.replicas.forEach(({ workload, budget }, k) => {
    if (budget)
      k8sResource(budget, {
        parent: parts.engines(workload.replica),
        provider,
        dependsOn: [...nsDeps, workloads[k], enginesReady],
      });
  });
  // PodMonitors select pods by label and need nothing else: the engines' beside their Service, the router's under it.
  for (const m of objects.monitors) {
    const router = m.metadata.labels["app.kubernetes.io/component"] === "router";
    k8sResource(m, { parent: router && parts.router ? parts.router : parent, provider, dependsOn: nsDeps });
  }

  // The router starts once its engines are Ready, so it never serves a fleet that is still loading.
  const routerResources = parts.router
    ? createObjects(ctx, objects.router, {
        parent: parts.router,
        provider,
        dependsOn: [...nsDeps, ...workloads, enginesReady, ...secretDeps],
        customTimeouts: deleteTimeout,
      })
    : [];
  const routerWorkloads = objects.router.filter((o) => podTemplates(o).length > 0);
  const routerReady =
    parts.router && routerWorkloads.length
      ? [waitFor("router", routerWorkloads, 1200, { parent: parts.router, dependsOn: routerResources })]
      : [];
  // The activity monitor (activity-monitor.ts): its ledger, RBAC and Deployment, once the workloads
  // it may scale exist; waited for as the follower is, so an image that cannot run it fails the up, named.
  const activityResources = createObjects(ctx, objects.activity, {
    parent,
    provider,
    dependsOn: [...nsDeps, ...workloads, ...secretDeps],
    customTimeouts: deleteTimeout,
  });
  const activityWorkloads = objects.activity.filter((o) => podTemplates(o).length > 0);
  const activityReady = activityWorkloads.length
    ? [waitFor("activity", activityWorkloads, slowS, { parent, dependsOn: activityResources })]
    : [];
  return after(
    [
      ...workloads,
      enginesReady,
      ...activityResources,
      ...activityReady,
      ...routerResources,
      ...routerReady,
      ...storeResources,
      ...storeReady,
    ],
    ep,
  );
};
