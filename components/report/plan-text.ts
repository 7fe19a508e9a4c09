import { gib, reserveTotal, type GpuMemoryPlan } from "../plan/gpu-memory";
import type { DeploymentPlan, IslandPlan } from "../plan/deployment-plan";
import { showValue, type Value } from "../plan/values";
import { targetOf } from "../targets";
import { namedServices, type StackPlan } from "../plan/stack-plan";
import { showUrl } from "./plan-json";
import { textTable } from "./text-table";

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

const table = textTable;

function islandText(plan: DeploymentPlan, island: IslandPlan): string[] {
  const cmd = (argv: Value[]) => argv.map((v) => showValue(v, island.index)).join(" ");
  const lines: string[] = [
    `${island.name}: ${plural(island.nodes.length, "node")}, ${plural(island.engines.length, "engine")}`,
  ];
  const nodes = table(["node", "role", "GPUs", "engines", "services"]);
  for (const n of island.nodes)
    nodes.push([
      n.name,
      `${n.role}${n.replica}`,
      `${n.gpusUsed}/${plan.gpusPerNode}`,
      n.engines.join(" "),
      n.services.join(" ") || "-",
    ]);
  lines.push(nodes.toString());

  const engines = table(["engine", "node:port", "GPUs", "parallel"]);
  for (const e of island.engines) {
    const par = [
      `tp=${e.tp}`,
      e.dp ? `dp=${e.dp.size} local=${e.dp.local} start=${e.dp.startRank} ${e.dp.mode}` : "dp=1",
      e.headless ? "headless" : `api=${e.apiServerCount}`,
    ].join(" ");
    engines.push([e.id, `${island.nodes[e.node].name}:${e.port ?? "-"}`, e.gpus.join(","), par]);
  }
  lines.push(engines.toString());
  const idle = island.activity.idleReleaseAfterS;
  if (idle !== null)
    lines.push(`  idle release: ends itself after ${idle} s with no request running or waiting (idle_release_after)`);

  for (const e of island.engines) {
    lines.push(`  ${e.id}`);
    const env = e.env.map(([k, v]) => `${k}=${showValue(v, island.index)}`);
    lines.push(`    env: ${env.join(" ")}`);
    lines.push(`    $ ${cmd(e.argv)}`);
  }
  const r = island.router;
  if (r && r.kind !== "llm-d") {
    lines.push(
      `  router: ${r.kind} on ${island.nodes[r.node].name}:${r.port} (${r.pd ? "P/D mode" : "regular"}, metrics :${r.metricsPort})`,
    );
    lines.push(`    $ ${cmd(r.argv)}`);
  } else if (r?.kind === "llm-d") {
    lines.push(
      `  router: llm-d (Envoy :${r.port} -> EPP :${r.epp.grpcPort}) on ${island.nodes[r.node].name}${r.pd ? `, pd-sidecar on ${r.sidecars.length} decode node(s)` : ""}`,
    );
    lines.push(`    $ ${cmd(r.epp.argv)}`);
    lines.push(`    $ ${cmd(r.envoy.argv)}`);
    for (const s of r.sidecars) lines.push(`    $ ${cmd(s.argv)}   # on ${island.nodes[s.node].name}`);
  }
  if (island.mooncake) {
    const m = island.mooncake;
    lines.push(
      `  mooncake: master on ${island.nodes[m.headNode].name}:${m.masterPort} (metadata :${m.metadataPort}), a client on every node (:${m.clientPort})`,
    );
    lines.push(`    $ ${cmd(m.master.argv)}`);
    lines.push(`    $ ${cmd(m.clients[0].argv)}   # on every node`);
  }
  if (island.lmcache) {
    const l = island.lmcache;
    lines.push(
      `  lmcache: a server on every node (127.0.0.1:${l.port}, HTTP :${l.httpPort}), its engines' LMCacheMPConnector`,
    );
    lines.push(`    $ ${cmd(l.servers[0].argv)}   # on every node`);
  }
  lines.push("  endpoints:");
  // Where the target chooses names (Kubernetes) the placement and URLs are final; elsewhere hosts are symbolic.
  const target = targetOf(plan.target);
  const known = target.knownUrls?.(plan)[island.index];
  lines.push(...(target.placementText?.(plan, island) ?? []));
  const router = island.endpoints.router;
  if (router) lines.push(`    router  ${known ? known.routerUrl : showUrl(island.index, router)}`);
  island.endpoints.engines.forEach((e, k) =>
    lines.push(`    admin   ${known ? known.adminUrls[k] : showUrl(island.index, e.url)}  (${e.role}, ${e.id})`),
  );
  return lines;
}

/** Per GPU, for each kind of replica: what the weights take and what the KV cache holds. */
function memoryText(m: GpuMemoryPlan): string[] {
  const head = `GPU memory per GPU: ${m.gpu.type ?? "GPU"} ${gib(m.gpu.bytes)} (${m.gpu.from}) x ${m.utilization} = ${gib(m.budgetBytes)} budget; max_model_len ${m.maxModelLen}`;
  const rows = table([
    "replica",
    "parallel",
    `weights (${m.weightDtype})`,
    "reserve (est.)",
    `KV cache (${m.kvDtype})`,
    "KV/token",
    "KV tokens",
    "max-len seqs",
  ]);
  for (const r of m.roles) {
    rows.push([
      r.role,
      `tp=${r.tp} dp=${r.dp}${r.ep ? ` ep=${r.ep}` : ""}`,
      gib(r.weightBytes),
      m.kvCacheMemoryBytes === undefined ? gib(reserveTotal(r.reserve)) : "-",
      gib(r.kvCacheBytes),
      `${(r.kvBytesPerToken / 1024).toFixed(1)} KiB`,
      String(r.kvTokens),
      `${r.concurrency.toFixed(2)}x`,
    ]);
  }
  return [head, rows.toString()];
}

const totalsText = (t: DeploymentPlan["totals"], islands: number) =>
  `totals: ${plural(t.nodes, "node")}, ${t.gpus} of ${t.gpusAllocated} GPUs, ${plural(t.routers, "router")}, ${plural(t.engines, "engine")}, ${plural(islands, "island")}`;

/** What the target is asked for, job by job, when it has a scheduler to ask (SLURM). */
function requestLines(stack: StackPlan): string[] {
  const requests = targetOf(stack.services[0].target).requests?.(stack);
  if (!requests) return [];
  const rows = table(requests.head);
  rows.push(...requests.rows);
  return [requests.title, rows.toString(), ...idleBoundLines(stack), ""];
}

/** The idle bound beside the GPU-hours: an island may hold its GPUs for less, never more. */
function idleBoundLines(stack: StackPlan): string[] {
  const bounds = new Set(
    stack.services.flatMap((p) => p.islands.map((i) => i.activity.idleReleaseAfterS)).filter((s) => s !== null),
  );
  if (bounds.size === 0) return [];
  const each = [...bounds].map((s) => `${s} s`).join(", ");
  return [
    `idle release: an island with no request for ${each} (idle_release_after) ends itself and gives its GPUs back`,
  ];
}

/** What the target says of the whole stack (Kubernetes: its namespace and Pod Security level). */
const stackReportLines = (stack: StackPlan): string[] =>
  targetOf(stack.services[0].target).stackReport?.(stack).text ?? [];

/** The readable plan of one service, after its title. */
function planBody(plan: DeploymentPlan): string[] {
  const out: string[] = [];
  for (const w of plan.warnings) out.push(`warning: ${w}`);
  for (const n of plan.notes) out.push(`note: ${n}`);
  if (plan.memory) out.push("", ...memoryText(plan.memory));
  for (const island of plan.islands) out.push("", ...islandText(plan, island));
  return out;
}

const serviceTitle = (plan: DeploymentPlan) => `${plan.shape.replace("_", "-")} on ${plan.target}, model ${plan.model}`;

/** The readable plan people review before `pulumi up`: what the scheduler is asked for first, then the plan. */
export function planText(plan: DeploymentPlan, source: string): string {
  return [
    `stack ${plan.stack} (${source}): ${serviceTitle(plan)}`,
    ...requestLines({ stack: plan.stack, services: [plan], totals: plan.totals }),
    totalsText(plan.totals, plan.islands.length),
    ...stackReportLines({ stack: plan.stack, services: [plan], totals: plan.totals }),
    ...planBody(plan),
  ].join("\n");
}

/** A stack's readable plan: one service's as `planText`; several, the whole stack's request and totals, then each service's plan. */
export function stackPlanText(stack: StackPlan, source: string): string {
  if (!namedServices(stack)) return planText(stack.services[0], source);
  const islands = stack.services.reduce((s, p) => s + p.islands.length, 0);
  const out = [
    `stack ${stack.stack} (${source}): ${plural(stack.services.length, "service")} on ${stack.services[0].target}`,
    ...requestLines(stack),
    totalsText(stack.totals, islands),
    ...stackReportLines(stack),
  ];
  for (const plan of stack.services)
    out.push(
      "",
      `service ${plan.service}: ${serviceTitle(plan)}`,
      totalsText(plan.totals, plan.islands.length),
      ...planBody(plan),
    );
  return out.join("\n");
}
