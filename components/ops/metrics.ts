import parsePrometheusTextFormat from "parse-prometheus-text-format";
import type { EngineMetricNames } from "../plan/engine";
import { metricNameSets } from "../plan/engines";

/**
 * One scrape of an engine's /metrics, reduced to what a person watching a fleet needs. Series are
 * summed across labels (one engine process serves several DP ranks, each its own series), which
 * vec-inf's last-series-wins parse gets wrong. Names are every registered engine's (vLLM V1's,
 * SGLang's): an engine exposes only its own, so each quantity is read from whichever are present.
 */
export interface Scrape {
  at: number;
  running: number;
  waiting: number;
  /** Mean KV-cache usage across the process's ranks, 0..1. */
  kvUsage: number | null;
  promptTokens: number;
  generationTokens: number;
  prefixQueries: number;
  prefixHits: number;
  requests: number;
  preemptions: number;
}

/** Every registered engine's metric names: the CLI may not know which engine serves a URL. */
const NAME_SETS = metricNameSets();
const namesOf = (q: keyof EngineMetricNames) => [...new Set(NAME_SETS.map((n) => n[q]))];

/** The client library strips `_total` from counter family names; samples keep the full name in text. */
const familyName = (name: string) => name.replace(/_total$/, "");

const WANTED = new Set(NAME_SETS.flatMap((n) => Object.values(n)).map(familyName));

/**
 * The lines of the families a Scrape reads, and their HELP/TYPE comments. A real engine's
 * exposition is mostly histogram buckets (per DP rank), and parsing all of it for nine numbers is
 * what cost most per engine; the parser still sees every wanted line exactly as the engine wrote it.
 */
export function wantedLines(text: string): string {
  const keep: string[] = [];
  for (const line of text.split("\n")) {
    const t = line.trimStart();
    let name: string;
    if (t.startsWith("#")) {
      const m = /^#[ \t]+(?:HELP|TYPE)[ \t]+([^ \t]+)/.exec(t);
      if (!m) continue;
      name = m[1];
    } else {
      const end = t.search(/[{ \t]/);
      name = end < 0 ? t : t.slice(0, end);
    }
    if (WANTED.has(familyName(name))) keep.push(line);
  }
  return keep.join("\n") + "\n";
}

export function parseScrape(text: string, at: number): Scrape {
  const families = new Map(parsePrometheusTextFormat(wantedLines(text)).map((f) => [familyName(f.name), f]));
  const values = (q: keyof EngineMetricNames) =>
    namesOf(q).flatMap((name) =>
      (families.get(familyName(name))?.metrics ?? []).map((m) => Number(m.value)).filter((v) => Number.isFinite(v)),
    );
  const sum = (q: keyof EngineMetricNames) => values(q).reduce((a, b) => a + b, 0);
  const kv = values("kvUsage");
  return {
    at,
    running: sum("running"),
    waiting: sum("waiting"),
    kvUsage: kv.length ? kv.reduce((a, b) => a + b, 0) / kv.length : null,
    promptTokens: sum("promptTokens"),
    generationTokens: sum("generationTokens"),
    prefixQueries: sum("prefixQueries"),
    prefixHits: sum("prefixHits"),
    requests: sum("requests"),
    preemptions: sum("preemptions"),
  };
}

/** What `fleet metrics` shows per engine: gauges now, rates over the window between two scrapes. */
export interface EngineMetrics {
  running: number;
  waiting: number;
  kvUsage: number | null;
  /** Tokens per second over the window; null on the first scrape or after a restart (counters went back). */
  promptTps: number | null;
  generationTps: number | null;
  requestsPerS: number | null;
  /** Prefix-cache hit rate over the window, else over the engine's lifetime; null with no queries. */
  prefixHitRate: number | null;
  windowS: number | null;
}

const rate = (now: number, before: number, seconds: number) =>
  now >= before && seconds > 0 ? (now - before) / seconds : null;

/** Counter deltas, not sticky values: a quiet window reads 0, a restart reads null until the next scrape. */
export function engineMetrics(now: Scrape, before?: Scrape): EngineMetrics {
  const seconds = before ? (now.at - before.at) / 1000 : 0;
  const restarted =
    before !== undefined &&
    (now.promptTokens < before.promptTokens ||
      now.prefixQueries < before.prefixQueries ||
      now.requests < before.requests);
  const windowed = before !== undefined && !restarted && seconds > 0;
  const dq = windowed ? now.prefixQueries - before!.prefixQueries : 0;
  const dh = windowed ? now.prefixHits - before!.prefixHits : 0;
  return {
    running: now.running,
    waiting: now.waiting,
    kvUsage: now.kvUsage,
    promptTps: windowed ? rate(now.promptTokens, before!.promptTokens, seconds) : null,
    generationTps: windowed ? rate(now.generationTokens, before!.generationTokens, seconds) : null,
    requestsPerS: windowed ? rate(now.requests, before!.requests, seconds) : null,
    prefixHitRate: dq > 0 ? dh / dq : now.prefixQueries > 0 ? now.prefixHits / now.prefixQueries : null,
    windowS: windowed ? seconds : null,
  };
}

/** The fleet's line: sums of load and throughput, KV usage averaged over engines that report it. */
export function totalMetrics(engines: EngineMetrics[]): EngineMetrics {
  const sum = (k: "running" | "waiting") => engines.reduce((a, e) => a + e[k], 0);
  const sumOrNull = (k: "promptTps" | "generationTps" | "requestsPerS") =>
    engines.some((e) => e[k] !== null) ? engines.reduce((a, e) => a + (e[k] ?? 0), 0) : null;
  const mean = (k: "kvUsage" | "prefixHitRate") => {
    const xs = engines.map((e) => e[k]).filter((x): x is number => x !== null);
    return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null;
  };
  const windows = engines.map((e) => e.windowS).filter((x): x is number => x !== null);
  return {
    running: sum("running"),
    waiting: sum("waiting"),
    kvUsage: mean("kvUsage"),
    promptTps: sumOrNull("promptTps"),
    generationTps: sumOrNull("generationTps"),
    requestsPerS: sumOrNull("requestsPerS"),
    prefixHitRate: mean("prefixHitRate"),
    windowS: windows.length ? Math.max(...windows) : null,
  };
}
