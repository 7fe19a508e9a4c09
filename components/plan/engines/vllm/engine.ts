import type { Engine, EngineMetricNames, EngineRoutes } from "../../engine";
import { engineFlag, vllmServeArgv } from "./argv";
import { layerEnv } from "./env";
import { REASONING_PARSERS, TOOL_CALL_PARSERS } from "../../parser-detection";
import { PRIME_REASONING_PARSERS, PRIME_TOOL_CALL_PARSERS } from "../../prime-parsers";
import { vllmReserve } from "./reserve";

/** vLLM's OpenAI-compatible server (vllm/entrypoints/openai/api_server.py). */
/** Trainers take the API base as each engine's admin base (prime-rl's admin_base_url). */
const VLLM_ROUTES: EngineRoutes = {
  health: "/health",
  models: "/v1/models",
  metrics: "/metrics",
  api: "/v1",
  admin: "/v1",
  // Mounted with VLLM_SERVER_DEV_MODE=1, as the weight-update routes are (vllm/entrypoints/rl/online/api_router.py).
  weightVersion: "/weight_info",
};

/** vLLM V1's metric names (vllm/v1/metrics/loggers.py). */
const VLLM_METRICS: EngineMetricNames = {
  running: "vllm:num_requests_running",
  waiting: "vllm:num_requests_waiting",
  kvUsage: "vllm:kv_cache_usage_perc",
  promptTokens: "vllm:prompt_tokens_total",
  generationTokens: "vllm:generation_tokens_total",
  prefixQueries: "vllm:prefix_cache_queries_total",
  prefixHits: "vllm:prefix_cache_hits_total",
  requests: "vllm:request_success_total",
  preemptions: "vllm:num_preemptions_total",
};

/** Probes and Prometheus scrapes would fill the engine log (a flag of the vendored vLLM manifest). */
const QUIET_ENDPOINTS = "/health,/metrics";

/** `vllm serve`. */
export const vllmEngine: Engine = {
  name: "vllm",
  spanningApi: "layout",
  pdTransport: "kv-connector",
  // vLLM's weight_version before an update (the follower and restart drills see it).
  baseWeightVersion: "default",
  primeRlDrivesWeights: true,
  spellFlag: (flag) => flag,
  processName: "vllm",
  groupRank: { flag: "--data-parallel-start-rank", perNode: (dpLocal) => dpLocal },
  // Spelled --vllm.<flag> for prime-rl's server (engineFlag), as every other vLLM flag it takes.
  podFlags: (e, drainSeconds) => {
    const out: string[] = [];
    const quiet = engineFlag(e.argv, "--disable-access-log-for-endpoints");
    if (!e.argv.includes(quiet)) out.push(quiet, QUIET_ENDPOINTS);
    const shutdown = engineFlag(e.argv, "--shutdown-timeout");
    if (!e.argv.includes(shutdown)) out.push(shutdown, String(drainSeconds));
    return out;
  },
  argv: (cfg, layout) => vllmServeArgv(cfg, layout, vllmEngine.parsers(cfg)),
  container: "vllm",
  // prime-rl's server inherits it: its engine is the installed vLLM.
  pythonPackage: "vllm",
  apiKeyEnv: "VLLM_API_KEY",
  manifest: "vllm",
  // The release the stack names: its flags, its spelling of a switch turned off.
  manifestVariant: (cfg) => cfg.vllm_version,
  // `vllm serve` itself is not a flag.
  manifestArgs: (argv) => argv.slice(2),
  env: layerEnv,
  // A file in prime-rl's layout picks parsers as prime-rl does, whichever program serves.
  parsers: (cfg) =>
    cfg.prime_rl
      ? { tool: PRIME_TOOL_CALL_PARSERS, reasoning: PRIME_REASONING_PARSERS }
      : { tool: TOOL_CALL_PARSERS, reasoning: REASONING_PARSERS },
  memoryReserve: vllmReserve,
  routes: VLLM_ROUTES,
  metrics: VLLM_METRICS,
  // Mounted in dev mode with the weight-update routes (vllm/entrypoints/rl/online/api_router.py);
  // prime-rl's server, the same vLLM, inherits it. Without dev mode it answers 404: not paused.
  pausedRoute: "/is_paused",
  // vLLM adds each --middleware import path to its app (vllm/entrypoints/serve/middleware/register.py).
  restartGate: ["--middleware", "restart_gate.RestartGate"],
};
