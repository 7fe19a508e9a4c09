import type { DeploymentPlan, IslandPlan } from "../plan/deployment-plan";
import type { PlanRefusal } from "../target";
import { localSettings } from "./settings";
import { gpusNeeded } from "./supervisor";

/** Every port something of the island listens on, with who listens: on one machine none may repeat. */
function listeners(island: IslandPlan): { port: number; who: string }[] {
  const out: { port: number; who: string }[] = [];
  for (const e of island.engines) {
    if (e.port !== undefined) out.push({ port: e.port, who: `engine ${e.id}` });
    for (const p of e.nixlPorts ?? []) out.push({ port: p, who: `engine ${e.id}'s NIXL side channel` });
    if (e.dp && e.dp.startRank === 0) out.push({ port: e.dp.rpcPort, who: `engine ${e.id}'s DP RPC port` });
  }
  const r = island.router;
  if (r && r.kind !== "llm-d") {
    out.push({ port: r.port, who: "the router" }, { port: r.metricsPort, who: "the router's metrics" });
  } else if (r) {
    out.push(
      { port: r.port, who: "Envoy" },
      { port: r.envoy.adminPort, who: "Envoy's admin" },
      { port: r.epp.grpcPort, who: "the EPP" },
      { port: r.epp.healthPort, who: "the EPP's health" },
      { port: r.epp.metricsPort, who: "the EPP's metrics" },
      ...r.sidecars.map((s) => ({ port: s.port, who: `the pd-sidecar of node ${s.node}` })),
    );
  }
  const m = island.mooncake;
  if (m) {
    out.push(
      { port: m.masterPort, who: "the Mooncake master" },
      { port: m.metadataPort, who: "the Mooncake metadata server" },
    );
    for (const c of m.clients) out.push({ port: m.clientPort, who: `the Mooncake client of node ${c.node}` });
  }
  for (const s of island.lmcache?.servers ?? [])
    out.push(
      { port: island.lmcache!.port, who: `the LMCache server of node ${s.node}` },
      { port: island.lmcache!.httpPort, who: `the LMCache server's HTTP frontend of node ${s.node}` },
    );
  return out;
}

/**
 * Why a plan cannot run on this one machine, each naming the key: a replica over several nodes, more
 * than one island, more GPUs than local.gpus gives, two processes on one port. Refused before
 * anything starts (the planner asks, components/plan/plan.ts).
 */
export function localRefusals(plan: DeploymentPlan, clusterTargets: () => string[]): PlanRefusal[] {
  const t = localSettings(plan);
  const issues: PlanRefusal[] = [];
  // Built only for a refusal: listing the targets loads every backend.
  const elsewhere = () =>
    `deploy it with ${clusterTargets()
      .map((k) => `[${k}]`)
      .join(" or ")} (or --target / vllm-fleet:target)`;
  const island = plan.islands[0];
  const spans = new Map<string, Set<number>>();
  for (const e of island.engines) {
    const key = e.role === "replica" ? `replica ${e.replica}` : `${e.role} replica ${e.replica}`;
    spans.set(key, (spans.get(key) ?? new Set()).add(e.node));
  }
  const wide = [...spans].filter(([, nodes]) => nodes.size > 1);
  if (wide.length)
    issues.push({
      path: "deployment",
      message: `the ${wide[0][0]} spans ${wide[0][1].size} nodes (${plan.totals.nodes} in all), and the local target runs every process on this one machine: ${elsewhere()}, or fit each replica on one node`,
    });
  if (plan.islands.length > 1)
    issues.push({
      path: "deployment.num_infer_replicas",
      message: `= ${plan.islands.length} islands (${plan.totals.nodes} nodes, each island behind its own router); the local target runs one: ${elsewhere()}`,
    });
  const needed = gpusNeeded(plan, island);
  if (t.gpus && needed > t.gpus.length)
    issues.push({
      path: "local.gpus",
      message: `gives the fleet ${t.gpus.length} GPU(s), and the plan needs ${needed} (${island.engines.length} engine(s) over ${island.nodes.length} node(s))`,
    });
  const m = island.mooncake;
  if (m && m.clients.length > 1)
    issues.push({
      path: "kv_cache_offload.type",
      message: `= "mooncake" runs a store client on each of the plan's ${m.clients.length} nodes, all on port ${m.clientPort}, and on the local target they are one machine: put the engines on one node, use type = "native", or ${elsewhere()}`,
    });
  const l = island.lmcache;
  if (l && l.servers.length > 1)
    issues.push({
      path: "kv_cache_offload.type",
      message: `= "lmcache" runs an LMCache server on each of the plan's ${l.servers.length} nodes, all on port ${l.port}, and on the local target they are one machine: put the engines on one node, use type = "native", or ${elsewhere()}`,
    });
  const seen = new Map<number, string>();
  for (const l of issues.length ? [] : listeners(island)) {
    const first = seen.get(l.port);
    if (first === undefined) seen.set(l.port, l.who);
    else {
      issues.push({
        path: "deployment",
        message: `${first} and ${l.who} would both listen on port ${l.port} of this machine: change one of the ports, or ${elsewhere()}`,
      });
      break;
    }
  }
  return issues;
}
