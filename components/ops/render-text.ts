import type { FleetEndpoints } from "../trainer/contract";
import { textTable } from "../report/text-table";
import type { FleetStatusReport, MetricsRow } from "./commands";
import type { EngineMetrics } from "./metrics";
import type { FleetJob } from "../target";

export function statusText(r: FleetStatusReport): string {
  const islands = textTable(["island", "status", "job", "scheduler", "nodes", "detail"]);
  for (const i of r.islands)
    islands.push([
      String(i.island),
      i.status,
      i.jobId ? `${i.jobName} (${i.jobId})` : (i.jobName ?? "-"),
      i.schedulerState ?? "-",
      i.nodes.join(" ") || "-",
      i.detail || "-",
    ]);
  const processes = textTable(["island", "process", "role", "status", "url", "detail"]);
  for (const i of r.islands)
    for (const p of i.processes) processes.push([String(i.island), p.id, p.role, p.status, p.url ?? "-", p.detail]);
  return [`${r.model} (${r.target}): ${r.status}`, islands.toString(), processes.toString()].join("\n");
}

const fixed = (x: number | null, digits = 1) => (x === null ? "-" : x.toFixed(digits));
const percent = (x: number | null) => (x === null ? "-" : `${(x * 100).toFixed(1)}%`);

function metricCells(m: EngineMetrics): string[] {
  return [
    String(m.running),
    String(m.waiting),
    percent(m.kvUsage),
    fixed(m.promptTps),
    fixed(m.generationTps),
    fixed(m.requestsPerS, 2),
    percent(m.prefixHitRate),
  ];
}

export function metricsText(model: string, rows: MetricsRow[], total: EngineMetrics): string {
  const t = textTable([
    "island",
    "engine",
    "role",
    "running",
    "waiting",
    "KV cache",
    "prompt tok/s",
    "gen tok/s",
    "req/s",
    "prefix hits",
    "note",
  ]);
  for (const r of rows)
    t.push([
      String(r.island),
      r.id,
      r.role,
      ...(r.error ? ["-", "-", "-", "-", "-", "-", "-"] : metricCells(r)),
      r.error ?? "",
    ]);
  t.push([
    "all",
    `${rows.length} engines`,
    "",
    ...metricCells(total),
    rows.some((r) => r.error) ? `${rows.filter((r) => r.error).length} not answering` : "",
  ]);
  const window =
    total.windowS === null
      ? "first scrape: rates need a second one"
      : `rates over the last ${total.windowS.toFixed(1)} s`;
  return `${model}: ${window}\n${t.toString()}`;
}

export function endpointsText(e: FleetEndpoints): string {
  const t = textTable(["island", "engine", "role", "admin URL"]);
  e.islands.forEach((i) => i.adminUrls.forEach((u, k) => t.push([String(i.island), String(k), i.roles[k], u])));
  const routers = e.islands.map((i) => `island ${i.island}: ${i.routerUrl ?? "(no router)"}`);
  return [`${e.model}: ${e.engineCount} engines`, ...routers, t.toString()].join("\n");
}

/** `fleet jobs` as a table; says so when there is none. */
export function jobsText(jobs: FleetJob[]): string {
  if (!jobs.length) return "no job of a vllm-fleet stack is queued or running";
  const table = textTable(["job", "name", "state", "elapsed", "limit", "nodes", "nodes or reason"]);
  for (const j of jobs) table.push([j.jobId, j.name, j.state, j.elapsed, j.limit, String(j.nodes), j.where]);
  return table.toString();
}
