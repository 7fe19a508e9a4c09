import type { FleetConfig } from "../config/types";
import type { DeploymentPlan, EngineProcess, IslandPlan, NodeUrl } from "../plan/deployment-plan";
import { resolveDeep, showRef, showValue, type Value } from "../plan/values";
import { namedServices, type StackPlan } from "../plan/stack-plan";
import { targetOf } from "../targets";

/** A URL with a symbolic host, e.g. http://<i0-n0>:8000/v1, for plans made before nodes exist. */
export const showUrl = (island: number, u: NodeUrl) => `http://<i${island}-n${u.node}>:${u.port}${u.path}`;

function showAll(values: Value[], island: number): string[] {
  return values.map((v) => showValue(v, island));
}

function engineJson(e: EngineProcess) {
  return {
    id: e.id,
    role: e.role,
    replica: e.replica,
    node: e.node,
    port: e.port ?? null,
    headless: e.headless,
    gpus: e.gpus,
    tp: e.tp,
    dp: e.dp ? { ...e.dp, address: showValue(e.dp.address, e.island) } : null,
    api_server_count: e.apiServerCount,
    nixl_ports: e.nixlPorts ?? null,
    kv_transfer_config: e.kvTransferConfig ?? null,
    env: Object.fromEntries(e.env.map(([k, v]) => [k, showValue(v, e.island)])),
    argv: showAll(e.argv, e.island),
  };
}

function islandJson(i: IslandPlan) {
  return {
    index: i.index,
    name: i.name,
    nodes: i.nodes,
    engines: i.engines.map(engineJson),
    router: i.router ? resolveDeep(i.router, showRef(i.index)) : null,
    mooncake: i.mooncake ? resolveDeep(i.mooncake, showRef(i.index)) : null,
    lmcache: i.lmcache ? resolveDeep(i.lmcache, showRef(i.index)) : null,
    endpoints: {
      router: i.endpoints.router ? showUrl(i.index, i.endpoints.router) : null,
      engines: i.endpoints.engines.map((e) => ({ id: e.id, role: e.role, url: showUrl(i.index, e.url) })),
    },
    idle_release_after_s: i.activity.idleReleaseAfterS,
  };
}

/** The whole plan as one JSON-ready object (`npm run plan -- <stack> --json`), with the config it was made from. */
export function planJson(plan: DeploymentPlan, cfg: FleetConfig) {
  const { explicit, ...config } = cfg;
  return {
    stack: plan.stack,
    model: plan.model,
    shape: plan.shape,
    target: plan.target,
    totals: plan.totals,
    ...(plan.memory && { memory: plan.memory }),
    warnings: plan.warnings,
    notes: plan.notes,
    own_kv_connector: plan.ownKvConnector && { ...plan.ownKvConnector, fleet_manages_store: false },
    islands: plan.islands.map(islandJson),
    config: { ...config, explicit: [...explicit].sort() },
  };
}

/**
 * A stack's plan as JSON: a file without [services] exactly as `planJson`; a stack of several
 * services has each one's under `services.<name>` (with its own totals) beside the whole stack's.
 * `configs`: the services' configs, in the stack's order.
 */
export function stackPlanJson(stack: StackPlan, configs: FleetConfig[]) {
  // What the target says of the whole stack (Kubernetes: namespace, pod_security), beside the totals.
  const report = targetOf(stack.services[0].target).stackReport?.(stack).json ?? {};
  if (!namedServices(stack)) return { ...planJson(stack.services[0], configs[0]), ...report };
  return {
    stack: stack.stack,
    target: stack.services[0].target,
    totals: stack.totals,
    ...report,
    services: Object.fromEntries(stack.services.map((plan, k) => [plan.service!, planJson(plan, configs[k])])),
  };
}
