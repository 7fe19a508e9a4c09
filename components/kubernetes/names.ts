import { k8sBase, k8sIslandPrefix } from "./base-name";
import type { DeploymentPlan, EngineProcess, IslandPlan, NodeUrl, Role } from "../plan/deployment-plan";
import { fleetNamespace } from "./fleet-namespace";
import { kubernetesSettings } from "./settings";

/** One engine workload: a replica's pods. One node: a StatefulSet; several: a LeaderWorkerSet. */
export interface EngineWorkload {
  kind: "StatefulSet" | "LeaderWorkerSet";
  name: string;
  role: Role;
  replica: number;
  /** The replica's engines in node order (leader first). */
  engines: EngineProcess[];
}

const DNS_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

/**
 * Every name and in-cluster address of a Kubernetes fleet, derived from the plan alone, so URLs
 * are known at preview and match the rendered YAML. Pod DNS: a StatefulSet pod is
 * `<sts>-0.<island>-engines.<ns>.svc.<cluster_domain>`; LeaderWorkerSet pods are `<lws>-0` (leader) and
 * `<lws>-0-<k>` (workers) under the headless Service LWS names after itself.
 */
export function k8sNames(plan: DeploymentPlan) {
  const target = kubernetesSettings(plan);
  const ns = fleetNamespace(target, plan.stack).name;
  const base = k8sBase(plan.stack);
  const prefix = (island: number) => k8sIslandPrefix(plan.stack, island, plan.service);
  // <name>.<namespace>.svc.<cluster domain>: the kubelet's clusterDomain, cluster.local unless the cluster says otherwise.
  const svc = (name: string) => `${name}.${ns}.svc.${target.cluster_domain}`;
  const check = (name: string): string => {
    if (name.length > 63 || !DNS_LABEL.test(name)) {
      throw new Error(
        `the Kubernetes name ${name} (from the Pulumi stack name "${plan.stack}") is not a DNS label of at most 63 characters; use a shorter stack name`,
      );
    }
    return name;
  };

  // pod() runs for every node reference in every command line: group each island once.
  const grouped = new Map<number, EngineWorkload[]>();
  function workloads(island: IslandPlan): EngineWorkload[] {
    let found = grouped.get(island.index);
    if (!found) grouped.set(island.index, (found = groupWorkloads(island)));
    return found;
  }

  function groupWorkloads(island: IslandPlan): EngineWorkload[] {
    const groups = new Map<string, EngineProcess[]>();
    for (const e of island.engines) {
      const key = `${e.role}${e.replica}`;
      groups.set(key, [...(groups.get(key) ?? []), e]);
    }
    return [...groups.entries()].map(([key, engines]) => ({
      kind: engines.length > 1 ? "LeaderWorkerSet" : "StatefulSet",
      name: check(`${prefix(island.index)}-${key}`),
      role: engines[0].role,
      replica: engines[0].replica,
      engines,
    }));
  }

  /** Pod name of node `node` of the island. */
  function pod(island: IslandPlan, node: number): { pod: string; host: string } {
    const wl = workloads(island).find((w) => w.engines.some((e) => e.node === node));
    if (!wl) throw new Error(`internal error: island ${island.index} has no node ${node}`);
    const k = wl.engines.findIndex((e) => e.node === node);
    if (wl.kind === "StatefulSet")
      return { pod: check(`${wl.name}-0`), host: svc(`${wl.name}-0.${engineService(island.index)}`) };
    const name = check(k === 0 ? `${wl.name}-0` : `${wl.name}-0-${k}`);
    return { pod: name, host: svc(`${name}.${wl.name}`) };
  }

  const engineService = (island: number) => check(`${prefix(island)}-engines`);
  const activityMonitor = (island: number) => check(`${prefix(island)}-activity`);
  const routerService = (island: number) => check(`${prefix(island)}-router`);

  return {
    namespace: ns,
    base,
    prefix,
    workloads,
    pod,
    engineService,
    routerService,
    /** vllm-router's follower (router-follower.ts): its own Deployment, so its death never touches the router. */
    routerFollower: (island: number) => check(`${prefix(island)}-follower`),
    /** The island's activity monitor (activity-monitor.ts): its Deployment, ServiceAccount and Role. */
    activityMonitor,
    /** The ConfigMap holding the island's activity ledger and release mark (the monitor's name, as its other objects). */
    activityConfigMap: activityMonitor,
    eppService: (island: number) => check(`${prefix(island)}-epp`),
    mooncakeService: (island: number) => check(`${prefix(island)}-mooncake`),
    secret: check(`${base}-secrets`),
    check,
    svcHost: svc,
    url: (island: IslandPlan, u: NodeUrl) => `http://${pod(island, u.node).host}:${u.port}${u.path}`,
    routerUrl: (island: IslandPlan) =>
      island.endpoints.router
        ? `http://${svc(routerService(island.index))}:${island.endpoints.router.port}${island.endpoints.router.path}`
        : null,
  };
}

export type K8sNames = ReturnType<typeof k8sNames>;
