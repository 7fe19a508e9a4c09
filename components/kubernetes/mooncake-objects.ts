import { MOONCAKE_METRICS_PORT } from "../plan/mooncake";
import type { IslandPlan } from "../plan/deployment-plan";
import { partsOf, resolveDeep, type Value } from "../plan/values";
import { labels, meta, singletonDeployment, type K8sContext } from "./render-context";
import { k8sLiteral, resources, tcpProbe, type K8sObject } from "./objects";

export const mooncakeConfigMapName = (ctx: K8sContext, island: number) => `${ctx.names.mooncakeService(island)}-config`;

/**
 * Every address in the Mooncake plan points at its head node; on Kubernetes that is the master's
 * Service. `forKubelet` escapes literal text for command/args and spells the pod's own address
 * `$(POD_IP)`; file contents are taken literally.
 */
function mooncakeValue(ctx: K8sContext, island: IslandPlan, v: Value, forKubelet: boolean): string {
  const host = ctx.names.svcHost(ctx.names.mooncakeService(island.index));
  const literal = forKubelet ? k8sLiteral : (s: string) => s;
  return partsOf(v)
    .map((p) => {
      if (typeof p === "string") return literal(p);
      if (p.ref === "node" && p.node === island.mooncake!.headNode) return host;
      if (p.ref === "self" && forKubelet) return "$(POD_IP)";
      throw new Error(`internal error: unexpected reference ${JSON.stringify(p)} in the Mooncake plan`);
    })
    .join("");
}

/** MOONCAKE_CONFIG_PATH contents for the engines: the master and metadata server by Service DNS. */
export function mooncakeConfigText(ctx: K8sContext, island: IslandPlan): string {
  return (
    JSON.stringify(
      resolveDeep(island.mooncake!.engineConfig, (r) => mooncakeValue(ctx, island, { parts: [r] }, false)),
      null,
      2,
    ) + "\n"
  );
}

/** A master or client command line for kubelet. */
export const mooncakeArgv = (ctx: K8sContext, island: IslandPlan, argv: Value[]) =>
  argv.map((v) => mooncakeValue(ctx, island, v, true));

/** The island's store: master Deployment (RPC, HTTP metadata, metrics) + Service + the engines' client config. */
export function mooncakeObjects(ctx: K8sContext, island: IslandPlan): K8sObject[] {
  const m = island.mooncake;
  if (!m) return [];
  const name = ctx.names.mooncakeService(island.index);
  const selector = labels(ctx, "mooncake", island.index);
  const ports = [
    { name: "rpc", port: m.masterPort },
    { name: "metadata", port: m.metadataPort },
    { name: "metrics", port: MOONCAKE_METRICS_PORT },
  ];
  const disk = m.diskPath;
  return [
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: meta(ctx, mooncakeConfigMapName(ctx, island.index), selector),
      data: { "mooncake.json": mooncakeConfigText(ctx, island) },
    },
    // Recreate: never two masters, or clients would split between them.
    singletonDeployment(
      ctx,
      name,
      selector,
      {
        containers: [
          {
            name: "mooncake-master",
            image: ctx.target.mooncake_image,
            command: mooncakeArgv(ctx, island, m.master.argv),
            ports: ports.map((p) => ({ name: p.name, containerPort: p.port })),
            readinessProbe: tcpProbe(m.masterPort, 5, 3),
            livenessProbe: tcpProbe(m.masterPort, 10, 6),
            resources: resources(ctx.target.mooncake_master_resources.cpu, ctx.target.mooncake_master_resources.memory),
            ...(disk ? { volumeMounts: [{ name: "offload-root", mountPath: disk }] } : {}),
          },
        ],
        ...(disk ? { volumes: [{ name: "offload-root", emptyDir: {} }] } : {}),
      },
      { recreate: true },
    ),
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: meta(ctx, name, selector),
      spec: { selector, ports: ports.map((p) => ({ name: p.name, port: p.port, targetPort: p.port })) },
    },
  ];
}
