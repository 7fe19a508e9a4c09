import type { FleetConfig } from "../config/types";
import type { EngineName } from "./deployment-plan";
import type { Engine, EngineMetricNames, EngineRoutes } from "./engine";
import { primeRlEngine } from "./engines/prime-rl";
import { vllmEngine } from "./engines/vllm";

/** The registry of engines by name. Adding an engine adds its line. */
const ENGINES: Record<EngineName, Engine> = {
  vllm: vllmEngine,
  "prime-rl": primeRlEngine,
};

export const engineNamed = (name: EngineName): Engine => ENGINES[name];

/** The engine a config runs: prime-rl's server when its `[inference]` asks for it, else vLLM. */
export function engineOf(cfg: Pick<FleetConfig, "prime_engine">): Engine {
  return engineNamed(cfg.prime_engine?.engine === "prime-rl" ? "prime-rl" : "vllm");
}

/**
 * What every registered engine answers alike, for readers that do not know which engine a URL
 * serves (the fleet CLI reading an endpoints file). Throws if engines disagree: the reader must then
 * learn the engine first.
 */
function shared<T>(what: string, of: (e: Engine) => T): T {
  const [first, ...rest] = Object.values(ENGINES).map(of);
  if (rest.some((r) => JSON.stringify(r) !== JSON.stringify(first)))
    throw new Error(`internal error: the engines' ${what} differ; the fleet CLI must know each process's engine`);
  return first;
}

export const sharedRoutes = (): EngineRoutes => shared("routes", (e) => e.routes);
export const sharedMetrics = (): EngineMetricNames => shared("metric names", (e) => e.metrics);
