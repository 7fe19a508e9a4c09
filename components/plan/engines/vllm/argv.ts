import type { FleetConfig, WeightBroadcastType } from "../../../config/types";
import type { ExtraValue } from "../../../config/flag-values";
import { flagName, vllmFlags } from "./config/flags";
import { VLLM_VERSIONS } from "./config/version";
import { ROLE_ALL2ALL } from "../../../config/topology";
import type { EngineLayout } from "../../engine";
import { resolveParserWith, type ParserTable } from "../../parser-detection";
import type { Value } from "../../values";
import { DEFAULT_PRIME_RL_COMMIT, PRIME_LORA_DEFAULTS } from "../../../config/prime-commit";

const DECODE_COMPILATION = { cudagraph_mode: "FULL_DECODE_ONLY" };

/**
 * A switch turned off, as the vLLM release spells it: `--no-enable-x` (0.32), `--disable-x` (0.33,
 * which pairs --enable-x with --disable-x and only hides the --no- forms).
 */
export function switchOff(flag: string, version?: string): string {
  const off = vllmFlags(version)[flag]?.negative_form;
  if (!off) throw new Error(`internal error: ${flag} of vLLM ${version} cannot be turned off`);
  return off;
}

/** `--flag value` tokens for one vllm_extra entry, following the manifest's type at the vLLM release. */
export function extraArgs(key: string, value: ExtraValue, version?: string): string[] {
  const flag = flagName(key);
  const spec = vllmFlags(version)[flag];
  if (spec?.type === "bool") return value === true ? [flag] : spec.negative_form ? [spec.negative_form] : [];
  if (Array.isArray(value)) return [flag, ...value.map(String)];
  if (typeof value === "object") return [flag, JSON.stringify(value)];
  return [flag, String(value)];
}

/**
 * The complete `vllm serve` command line for one engine process: model, bind address, parallel
 * layout, the user's model and feature keys (`parsers`: the tables "auto" parsers come from), the KV
 * connector, then vllm_extra. Every flag exists in the vLLM manifest (checked by the planner before
 * it returns). The vLLM engine's `argv` (engines/vllm/engine.ts).
 */
export function vllmServeArgv(
  cfg: FleetConfig,
  p: EngineLayout,
  parsers: { tool: ParserTable; reasoning: ParserTable },
): Value[] {
  const m = cfg.model;
  const argv: Value[] = ["vllm", "serve", m.name];
  const add = (...tokens: Value[]) => argv.push(...tokens);

  if (p.headless) add("--headless");
  else add("--host", cfg.router.type === "none" ? (cfg.server.host ?? "0.0.0.0") : "0.0.0.0", "--port", String(p.port));
  add("--tensor-parallel-size", String(p.tp));
  if (p.dp?.mode === "external") {
    // One API server per DP rank, the URL selecting the rank (prime-rl's _launch_rank.sh.j2).
    add("--data-parallel-size", String(p.dp.size), "--data-parallel-size-local", "1");
    add("--data-parallel-rank", String(p.dp.startRank));
    add("--data-parallel-address", p.dp.address, "--data-parallel-rpc-port", String(p.dp.rpcPort));
  } else if (p.dp) {
    add("--data-parallel-size", String(p.dp.size));
    if (p.dp.mode === "hybrid" || p.dp.local !== p.dp.size) {
      add("--data-parallel-size-local", String(p.dp.local));
      if (p.dp.startRank > 0) add("--data-parallel-start-rank", String(p.dp.startRank));
      add("--data-parallel-address", p.dp.address, "--data-parallel-rpc-port", String(p.dp.rpcPort));
      if (p.dp.mode === "hybrid") add("--data-parallel-hybrid-lb");
    }
  }
  if (!p.headless) add("--api-server-count", String(p.apiServerCount));

  if (cfg.enable_expert_parallel) add("--enable-expert-parallel");
  // prime-rl's per-role overrides come after its role defaults (templates/inference.sbatch.j2 ROLE_EXTRA).
  const roleExtra = p.role === "replica" ? undefined : cfg.role_vllm_extra?.[p.role];
  if (p.role !== "replica" && roleExtra?.all2all_backend === undefined) add("--all2all-backend", ROLE_ALL2ALL[p.role]);
  if (cfg.enable_eplb) add("--enable-eplb");
  if (cfg.enable_dbo) add("--enable-dbo");
  if (cfg.enable_return_routed_experts) add("--enable-return-routed-experts");
  add("--gpu-memory-utilization", String(cfg.gpu_memory_utilization));
  if (m.max_model_len !== undefined) add("--max-model-len", String(m.max_model_len));
  if (m.enforce_eager) add("--enforce-eager");
  if (m.dtype) add("--dtype", m.dtype);
  if (m.trust_remote_code) add("--trust-remote-code");
  if (m.chat_template) add("--chat-template", m.chat_template);
  const parser = (kind: "tool" | "reasoning", setting: string | undefined, model: string) =>
    resolveParserWith(parsers, kind, setting, model);
  const toolParser = parser("tool", m.tool_call_parser, m.name);
  if (toolParser) add("--enable-auto-tool-choice", "--tool-call-parser", toolParser);
  const reasoningParser = parser("reasoning", m.reasoning_parser, m.name);
  if (reasoningParser) add("--reasoning-parser", reasoningParser);
  if (cfg.enable_lora) {
    add("--enable-lora", "--max-loras", String(cfg.max_loras));
    if (cfg.max_lora_rank !== undefined) add("--max-lora-rank", String(cfg.max_lora_rank));
    // prime-rl 559b447 always hands vLLM its max_cpu_loras (default 100; 8324600 has none); it only matters with LoRA on.
    const cpuLoras =
      cfg.prime_engine && PRIME_LORA_DEFAULTS[cfg.prime_engine.commit ?? DEFAULT_PRIME_RL_COMMIT].max_cpu_loras;
    if (cfg.prime_rl && cpuLoras && cfg.vllm_extra.max_cpu_loras === undefined)
      add("--max-cpu-loras", String(cpuLoras));
  }
  if (cfg.enable_prefix_caching === true) add("--enable-prefix-caching");
  if (cfg.enable_prefix_caching === false) add(switchOff("--enable-prefix-caching", cfg.vllm_version));
  if (p.kvTransferConfig) add("--kv-transfer-config", JSON.stringify(p.kvTransferConfig));

  const extra = { ...cfg.vllm_extra };
  delete extra.headless; // the planner decides which processes run headless
  delete extra.kv_transfer_config; // the user's own connector, as p.kvTransferConfig above
  if (p.role === "decode") {
    const user = (extra.compilation_config ?? {}) as Record<string, unknown>;
    extra.compilation_config = { ...user, ...DECODE_COMPILATION };
  }
  Object.assign(extra, roleExtra);
  if (cfg.prime_engine) Object.assign(extra, primeServerExtra(cfg.prime_engine, extra));
  for (const [key, value] of Object.entries(extra)) add(...extraArgs(key, value, cfg.vllm_version));
  return argv;
}

/**
 * prime-rl's weight-update worker extension per weight_broadcast.type
 * (src/prime_rl/inference/vllm/server.py WORKER_EXTENSION_CLS).
 */
export const PRIME_WORKER_EXTENSION: Record<WeightBroadcastType, string> = {
  nccl: "prime_rl.inference.vllm.worker.nccl.NCCLWeightUpdateWorker",
  filesystem: "prime_rl.inference.vllm.worker.filesystem.FileSystemWeightUpdateWorker",
  nixl: "prime_rl.inference.vllm.worker.nixl.NIXLWeightUpdateWorker",
};

/** The program prime-rl's engines run: its `inference` console script (pyproject.toml [project.scripts]). */
export const PRIME_INFERENCE_PROGRAM = "inference";

/** The flag prefix prime-rl's CLI gives VllmConfig's keys (`--vllm.<vllm serve flag>`). */
const PRIME_VLLM_PREFIX = "--vllm.";

/** The flag prefix of InferenceConfig.renderer's keys (prime-rl 8324600). */
const PRIME_RENDERER_PREFIX = "--renderer.";

/**
 * The same engine as prime-rl runs it: its `inference` entrypoint (src/prime_rl/entrypoints/inference.py),
 * which parses InferenceConfig from the command line, builds vLLM's namespace from [server] and
 * [vllm] (configs/inference.py to_namespace) and serves vLLM with its worker extension and admin
 * routes (inference/vllm/server.py). `vllm serve`'s flags become [vllm] keys: `--vllm.<flag> value`,
 * a bare `--vllm.<flag>` for a switch and `--vllm.<flag> false` for its `--no-` form (VllmConfig
 * takes any vLLM argument as an extra); `--host`/`--port` become [server]'s. weight_broadcast.type
 * picks the worker extension; the class is also passed as `--vllm.worker-extension-cls`, the value
 * prime-rl's server sets, so the plan shows it. A renderer (prime-rl 8324600's [renderer]) is
 * InferenceConfig's own: `--renderer.<key> <value>`, a JSON value for a table or list.
 */
export function primeInferenceArgv(
  vllmArgv: Value[],
  weightBroadcast: WeightBroadcastType,
  renderer?: Record<string, unknown>,
): Value[] {
  // not an engine: the program name on a vllm serve command line
  if (vllmArgv[0] !== "vllm" || vllmArgv[1] !== "serve")
    throw new Error("internal error: primeInferenceArgv needs a vllm serve command line");
  const out: Value[] = [PRIME_INFERENCE_PROGRAM, "--vllm.model", vllmArgv[2]];
  // Every release's off spelling (the line is the config's release's): prime-rl says `<flag> false`.
  const negations = new Map<string, string>();
  for (const version of VLLM_VERSIONS)
    for (const [flag, spec] of Object.entries(vllmFlags(version)))
      if (spec.negative_form) negations.set(spec.negative_form, flag);
  const rest = vllmArgv.slice(3);
  for (let i = 0; i < rest.length; i++) {
    const tok = rest[i];
    if (tok === "--host" || tok === "--port") {
      out.push(`--server.${tok.slice(2)}`, rest[++i]);
      continue;
    }
    if (typeof tok !== "string" || !tok.startsWith("--"))
      throw new Error(`internal error: unexpected ${JSON.stringify(tok)} in an engine command line`);
    const positive = negations.get(tok);
    if (positive) {
      out.push(PRIME_VLLM_PREFIX + positive.slice(2), "false");
      continue;
    }
    out.push(PRIME_VLLM_PREFIX + tok.slice(2));
    while (i + 1 < rest.length && !(typeof rest[i + 1] === "string" && (rest[i + 1] as string).startsWith("--")))
      out.push(rest[++i]);
  }
  out.push("--weight-broadcast.type", weightBroadcast);
  out.push(PRIME_VLLM_PREFIX + "worker-extension-cls", PRIME_WORKER_EXTENSION[weightBroadcast]);
  for (const [key, value] of Object.entries(renderer ?? {}))
    out.push(
      `${PRIME_RENDERER_PREFIX}${key.replace(/_/g, "-")}`,
      typeof value === "object" ? JSON.stringify(value) : String(value),
    );
  return out;
}

/** prime-rl's spelling of a `vllm serve` flag: `--vllm.<name>` (its Engine.spellFlag). */
export const primeFlag = (flag: string): string => PRIME_VLLM_PREFIX + flag.slice(2);

/** How a vLLM-family command line spells a `vllm serve` flag: as is, or prime-rl's `--vllm.<name>`. */
export function engineFlag(argv: readonly Value[], flag: string): string {
  return argv[0] === PRIME_INFERENCE_PROGRAM ? primeFlag(flag) : flag;
}

/**
 * The `vllm serve` command line a prime-rl `inference` one stands for (the inverse of
 * primeInferenceArgv without its prime-rl-only flags), a switch turned off spelled as the vLLM
 * release (the config's vllm_version; unset, the newest) spells it: what the planner checks against
 * that release's manifest.
 */
export function vllmArgvOf(argv: Value[], version?: string): Value[] {
  if (argv[0] !== PRIME_INFERENCE_PROGRAM) return argv;
  const out: Value[] = ["vllm", "serve"];
  for (let i = 1; i < argv.length; i++) {
    const tok = argv[i];
    if (tok === "--vllm.model") out.splice(2, 0, argv[++i]);
    else if (tok === "--server.host" || tok === "--server.port")
      out.push(`--${(tok as string).slice("--server.".length)}`);
    else if (tok === "--weight-broadcast.type") i++;
    else if (typeof tok === "string" && tok.startsWith(PRIME_RENDERER_PREFIX)) i++;
    else if (typeof tok === "string" && tok.startsWith(PRIME_VLLM_PREFIX)) {
      const flag = `--${tok.slice(PRIME_VLLM_PREFIX.length)}`;
      const off = vllmFlags(version)[flag]?.negative_form;
      if (argv[i + 1] === "false" && off) {
        out.push(off);
        i++;
      } else out.push(flag);
    } else out.push(tok);
  }
  return out;
}

/**
 * prime-rl's layout: the arguments prime-rl's own server adds to every engine's (configs/inference.py
 * InferenceConfig.to_namespace): logprobs_mode processed_logprobs unless given, and additional_config
 * with fp32_lm_head / fp32_router_logits set to true when enabled (over the user's additional_config;
 * 8324600: hf_overrides head_dtype / moe_router_dtype "float32", over the user's hf_overrides).
 * Since 8324600 also enable_prompt_tokens_details and enable_scale_out (vLLM serves
 * /inference/v1/generate only with it) unless given, and return_sampling_mask with
 * enable_return_sampling_mask.
 */
export function primeServerExtra(
  pe: NonNullable<FleetConfig["prime_engine"]>,
  extra: Record<string, ExtraValue>,
): Record<string, ExtraValue> {
  const out: Record<string, ExtraValue> = {};
  if (extra.logprobs_mode === undefined) out.logprobs_mode = "processed_logprobs";
  if ((pe.commit ?? DEFAULT_PRIME_RL_COMMIT) === DEFAULT_PRIME_RL_COMMIT) {
    const additional = { ...((extra.additional_config ?? {}) as Record<string, unknown>) };
    if (pe.enable_fp32_lm_head) additional.fp32_lm_head = true;
    if (pe.enable_fp32_router_logits) additional.fp32_router_logits = true;
    if (Object.keys(additional).length) out.additional_config = additional;
  } else {
    // 8324600: vLLM reads both dtypes off the HF config, so its server injects hf_overrides instead.
    const overrides = { ...((extra.hf_overrides ?? {}) as Record<string, unknown>) };
    if (pe.enable_fp32_lm_head) overrides.head_dtype = "float32";
    if (pe.enable_fp32_router_logits) overrides.moe_router_dtype = "float32";
    if (Object.keys(overrides).length) out.hf_overrides = overrides;
  }
  if ((pe.commit ?? DEFAULT_PRIME_RL_COMMIT) !== DEFAULT_PRIME_RL_COMMIT) {
    if (extra.enable_prompt_tokens_details === undefined) out.enable_prompt_tokens_details = true;
    if (extra.enable_scale_out === undefined) out.enable_scale_out = true;
  }
  if (pe.enable_return_sampling_mask === true) out.return_sampling_mask = true;
  return out;
}
