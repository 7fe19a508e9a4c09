import type { FleetConfig } from "../../../config/types";
import { userEnv } from "../../user-env";
import type { Role } from "../../deployment-plan";
import type { Engine, EngineMetricNames, EngineRoutes } from "../../engine";
import type { ParserTable } from "../../parser-detection";
import type { Value } from "../../values";
import { SGLANG_SERVER, sglangServerArgv } from "./argv";
import { sglangReserve } from "./reserve";

/**
 * SGLang's HTTP server (python/sglang/srt/entrypoints/http_server.py): the OpenAI API under /v1,
 * its own routes (/update_weights_from_disk, /flush_cache, /generate, ...) at the root.
 */
const SGLANG_ROUTES: EngineRoutes = {
  health: "/health",
  models: "/v1/models",
  metrics: "/metrics",
  api: "/v1",
  admin: "",
  // Its weight_version field (python/sglang/srt/entrypoints/http_server.py model_info).
  weightVersion: "/model_info",
};

/** SGLang's metric names (python/sglang/srt/metrics/collector.py), what `fleet metrics` reads. */
const SGLANG_METRICS: EngineMetricNames = {
  running: "sglang:num_running_reqs",
  waiting: "sglang:num_queue_reqs",
  kvUsage: "sglang:token_usage",
  promptTokens: "sglang:prompt_tokens_total",
  generationTokens: "sglang:generation_tokens_total",
  prefixQueries: "sglang:prompt_tokens_total",
  prefixHits: "sglang:cached_tokens_total",
  requests: "sglang:num_requests_total",
  preemptions: "sglang:num_retracted_reqs",
};

/**
 * `auto` parsers by model id, in SGLang's names (its FunctionCallParser and ReasoningParser
 * registries): the same families as vLLM's table (parser-detection.ts), spelled SGLang's way.
 */
const SGLANG_TOOL_PARSERS: ParserTable = [
  [/^zai-org\/GLM-4\.7|^zai-org\/GLM-5/i, "glm47"],
  [/^zai-org\/GLM-4\.[56]/i, "glm45"],
  [/^Qwen\/Qwen3\.(5|6|8)-/i, "qwen3_coder"],
  [/^Qwen\/Qwen3-Coder/i, "qwen3_coder"],
  [/^Qwen\/Qwen(2\.5|3)/i, "qwen25"],
  [/^PrimeIntellect\/INTELLECT-3/i, "qwen3_coder"],
  [/^deepseek-ai\/DeepSeek-V3\.2/i, "deepseekv32"],
  [/^deepseek-ai\/DeepSeek-V3\.1/i, "deepseekv31"],
  [/^deepseek-ai\/DeepSeek-V3/i, "deepseekv3"],
  [/^moonshotai\/Kimi-K2/i, "kimi_k2"],
  [/^meta-llama\/(Meta-)?Llama-3/i, "llama3"],
  [/^mistralai\//i, "mistral"],
];

const SGLANG_REASONING_PARSERS: ParserTable = [
  [/^zai-org\/GLM-/i, "glm45"],
  [/^PrimeIntellect\/INTELLECT-3/i, "deepseek-r1"],
  [/^Qwen\/Qwen3-.*Thinking/i, "qwen3-thinking"],
  [/^Qwen\/Qwen3(?!.*(Instruct-2507|Coder))/i, "qwen3"],
  [/^deepseek-ai\/DeepSeek-R1/i, "deepseek-r1"],
  [/^moonshotai\/Kimi-K2-Thinking/i, "kimi"],
];

/** What SGLang's processes get before env_vars: the device order and unbuffered logs. */
const SGLANG_DEFAULT_ENV: [string, string][] = [
  ["CUDA_DEVICE_ORDER", "PCI_BUS_ID"],
  ["PYTHONUNBUFFERED", "1"],
];

/** Launcher defaults, env_vars, the role's env (P/D), then what the launcher sets per process. */
function sglangEnv(cfg: FleetConfig, role: Role, perProcess: [string, Value][]): [string, Value][] {
  const env = new Map<string, Value>(SGLANG_DEFAULT_ENV);
  // NIXL's UCX transports, as for vLLM's P/D.
  if (cfg.deployment.type === "disaggregated") env.set("UCX_TLS", "all");
  for (const [k, v] of userEnv(cfg, role)) env.set(k, v);
  for (const [k, v] of perProcess) env.set(k, v);
  return [...env.entries()];
}

/** SGLang's server (`python3 -m sglang.launch_server`), engine = "sglang". */
export const sglangEngine: Engine = {
  name: "sglang",
  spanningApi: "head",
  pdTransport: "bootstrap",
  // SGLang's --weight-version default (server_args.py).
  baseWeightVersion: "default",
  // Its own weight routes are /update_weights_from_disk, /init_weights_update_group,
  // /update_weights_from_distributed and /update_weights_from_tensor: none of prime-rl's.
  primeRlDrivesWeights: false,
  // `python3 -m sglang.launch_server`: no process name of its own.
  spellFlag: (flag) => flag,
  groupRank: { flag: "--node-rank", perNode: () => 1 },
  // SGLang drains on SIGTERM by itself and has no flag for quiet probe routes.
  podFlags: () => [],
  argv: (cfg, layout, gpuBytes) => sglangServerArgv(cfg, layout, sglangEngine.parsers(cfg), gpuBytes),
  container: "sglang",
  pythonPackage: "sglang",
  // --config FILE.yaml: its keys are merged as flags before parsing (0.5.23
  // srt/utils/server_args_config_parser.py; .yaml or .yml, one --config at most).
  apiKeyConfig: { flag: "--config", key: "api-key" },
  manifest: "sglang",
  // `python3 -m sglang.launch_server` itself is not a flag.
  manifestArgs: (argv) => argv.slice(SGLANG_SERVER.length),
  env: sglangEnv,
  parsers: () => ({ tool: SGLANG_TOOL_PARSERS, reasoning: SGLANG_REASONING_PARSERS }),
  memoryReserve: sglangReserve,
  routes: SGLANG_ROUTES,
  metrics: SGLANG_METRICS,
  // No pausedRoute: /pause_generation and /continue_generation (srt/entrypoints/http_server.py)
  // have no GET of the state; a pause shows only as requests waiting (docs/idle-release.md).
  // No middleware option, so no restart gate: a restart starts on the update's folder itself (the
  // Python client's /update_weights_from_disk {"model_path", "weight_version"}); --model-path also
  // names the served model and the tokenizer unless they are set, so those keep the base model's.
  startOnRecord: {
    call: "/update_weights_from_disk",
    dirKey: "model_path",
    dirFlag: "--model-path",
    versionFlag: "--weight-version",
    keep: (argv) => {
      const model = argv[argv.indexOf("--model-path") + 1];
      return ["--served-model-name", "--tokenizer-path"].flatMap((f) => (argv.includes(f) ? [] : [f, model]));
    },
  },
};
