import type { FleetConfig } from "../config/types";
import type { EngineName } from "./deployment-plan";
import type { Engine, EngineMetricNames, EngineRoutes } from "./engine";

/**
 * The registry of engines by name. Adding an engine adds its line. Each loads on its first lookup:
 * `plan` of a vLLM stack never loads SGLang's planner (docs/benchmarks.md, cli-start).
 */
/* eslint-disable @typescript-eslint/no-require-imports */
const ENGINES: Record<string, () => Engine> = {
  vllm: () => (require("./engines/vllm/engine") as typeof import("./engines/vllm/engine")).vllmEngine,
  "prime-rl": () => (require("./engines/vllm/prime-rl") as typeof import("./engines/vllm/prime-rl")).primeRlEngine,
  sglang: () => (require("./engines/sglang/engine") as typeof import("./engines/sglang/engine")).sglangEngine,
};
/* eslint-enable @typescript-eslint/no-require-imports */

/**
 * Adds an engine at run time (a test's fixture engine, test/fixture-engine/, beside its config part
 * in components/config/engine-registry.ts): the proof that an engine needs no product file.
 */
export function registerEngine(engine: Engine): void {
  if (engine.name in ENGINES) throw new Error(`engine "${engine.name}" is registered twice`);
  ENGINES[engine.name] = () => engine;
}

// `?.`: an unknown name gives undefined, as the plain lookup did.
export const engineNamed = (name: EngineName): Engine => ENGINES[name]?.();

/** Every registered engine (loads them all). */
const allEngines = (): Engine[] => Object.values(ENGINES).map((load) => load());

/** The engine a config runs: prime-rl's server when its `[inference]` asks for it, else its `engine`. */
export function engineOf(cfg: Pick<FleetConfig, "prime_engine" | "engine">): Engine {
  return engineNamed(cfg.prime_engine?.engine === "prime-rl" ? "prime-rl" : cfg.engine);
}

/** Every registered engine's container name (Kubernetes engine pods). */
export const engineContainers = (): string[] => [...new Set(allEngines().map((e) => e.container))];

/** The routes a reader probes without knowing which engine serves a URL (the admin base may differ). */
export type ProbeRoutes = Omit<EngineRoutes, "admin" | "weightVersion">;

/**
 * What every registered engine answers alike, for readers that do not know which engine a URL
 * serves (the fleet CLI reading an endpoints file). Throws if engines disagree: the reader must then
 * learn the engine first.
 */
export function sharedRoutes(): ProbeRoutes {
  const of = ({ health, models, metrics, api }: EngineRoutes): ProbeRoutes => ({ health, models, metrics, api });
  const [first, ...rest] = allEngines().map((e) => of(e.routes));
  if (rest.some((r) => JSON.stringify(r) !== JSON.stringify(first)))
    throw new Error("internal error: the engines' probe routes differ; the fleet CLI must know each process's engine");
  return first;
}

/**
 * Every registered engine's metric names, each set once. An engine exposes only its own names, so a
 * reader sums each quantity over all of them without knowing which engine it scraped.
 */
export function metricNameSets(): EngineMetricNames[] {
  const seen = new Map<string, EngineMetricNames>();
  for (const e of allEngines()) seen.set(JSON.stringify(e.metrics), e.metrics);
  return [...seen.values()];
}

/**
 * What the Python client reads of each engine instead of declaring it again (schema/engines.json,
 * written by `npm run schema`, vendored byte for byte in clients/python/src/vllm_fleet/): its routes,
 * metric names and the weight version it reports before any update.
 */
export function engineFacts(): {
  format: "vllm-fleet/engines/v1";
  engines: Record<string, Pick<Engine, "routes" | "metrics" | "baseWeightVersion">>;
} {
  const engines = Object.fromEntries(
    allEngines().map((e) => [e.name, { routes: e.routes, metrics: e.metrics, baseWeightVersion: e.baseWeightVersion }]),
  );
  return { format: "vllm-fleet/engines/v1", engines };
}
