import type { FleetConfig } from "../../../config/types";
import type { ExtraValue } from "../../../config/flag-values";
import type { EngineLayout } from "../../engine";
import { resolveParserWith, type ParserTable } from "../../parser-detection";
import { t, type Value } from "../../values";
import { sglangMemFractionStatic } from "./reserve";

/** How the planner starts SGLang's server: its module, as SGLang's docs do (the wheel has no server script of its own). */
export const SGLANG_SERVER = ["python3", "-m", "sglang.launch_server"] as const;

/** `--flag value` tokens for one sglang_extra entry: switches bare, lists spread, tables as JSON. */
export function sglangExtraArgs(key: string, value: ExtraValue): string[] {
  const flag = "--" + key.replace(/_/g, "-");
  if (value === true) return [flag];
  if (value === false) return [];
  if (Array.isArray(value)) return [flag, ...value.map(String)];
  if (typeof value === "object" && value !== null) return [flag, JSON.stringify(value)];
  return [flag, String(value)];
}

/**
 * The parallel flags of one SGLang server. SGLang counts every GPU of a server in --tp-size. A
 * dense server with DP ranks runs --dp-size replicas of --tp-size GPUs each (its DP controller); an
 * expert-parallel one is DeepSeek-style DP attention: --tp-size is all the GPUs, --attn-dp-size the
 * attention groups (0.5.23's spelling of the deprecated --dp-size with --enable-dp-attention,
 * srt/arg_groups/parallel_hook.py), --ep-size the experts' spread. A replica spanning nodes (always
 * expert-parallel: config rule "an SGLang server spans nodes with expert parallelism") is one server
 * group: --nnodes, --node-rank and the head's --dist-init-addr.
 */
function parallelArgs(cfg: FleetConfig, p: EngineLayout): Value[] {
  const dp = p.dp;
  const nodes = dp ? dp.size / dp.local : 1;
  const world = p.tp * (dp?.size ?? 1);
  const out: Value[] = [];
  if (cfg.enable_expert_parallel) {
    out.push("--tp-size", String(world));
    if (dp) out.push("--attn-dp-size", String(dp.size));
    out.push("--ep-size", String(world));
  } else {
    out.push("--tp-size", String(p.tp));
    if (dp) out.push("--dp-size", String(dp.size));
  }
  if (dp && nodes > 1)
    out.push(
      "--nnodes",
      String(nodes),
      "--node-rank",
      String(dp.startRank / dp.local),
      "--dist-init-addr",
      t`${dp.address}:${dp.rpcPort}`,
    );
  return out;
}

/**
 * The complete `python3 -m sglang.launch_server` command line for one server: model, bind address,
 * parallel layout, memory, the user's model and feature keys, P/D, metrics, then sglang_extra. Every
 * flag exists in SGLang's manifest (checked by the planner before it returns).
 */
export function sglangServerArgv(
  cfg: FleetConfig,
  p: EngineLayout,
  parsers: { tool: ParserTable; reasoning: ParserTable },
  gpuBytes?: number,
): Value[] {
  const m = cfg.model;
  const argv: Value[] = [...SGLANG_SERVER, "--model-path", m.name];
  const add = (...tokens: Value[]) => argv.push(...tokens);
  // A node that joins a head's process group serves no HTTP; SGLang still binds its own default port.
  if (!p.headless)
    add("--host", cfg.router.type === "none" ? (cfg.server.host ?? "0.0.0.0") : "0.0.0.0", "--port", String(p.port));
  add(...parallelArgs(cfg, p));
  if (cfg.enable_eplb) add("--enable-eplb");
  add("--mem-fraction-static", String(sglangMemFractionStatic(cfg, p, gpuBytes)));
  if (m.max_model_len !== undefined) add("--context-length", String(m.max_model_len));
  // --disable-cuda-graph is deprecated in 0.5.23 (no longer a CLI field): both phases' own switches.
  if (m.enforce_eager) add("--disable-prefill-cuda-graph", "--disable-decode-cuda-graph");
  if (m.dtype) add("--dtype", m.dtype);
  if (m.trust_remote_code) add("--trust-remote-code");
  if (m.chat_template) add("--chat-template", m.chat_template);
  // The catalog's parsers are vLLM's names: unless the user named one, SGLang's table picks by model.
  const setting = (key: "tool_call_parser" | "reasoning_parser") =>
    cfg.explicit.has(`model.${key}`) || m[key] === undefined ? m[key] : "auto";
  const tool = resolveParserWith(parsers, "tool", setting("tool_call_parser"), m.name);
  if (tool) add("--tool-call-parser", tool);
  const reasoning = resolveParserWith(parsers, "reasoning", setting("reasoning_parser"), m.name);
  if (reasoning) add("--reasoning-parser", reasoning);
  if (cfg.enable_lora) {
    add("--enable-lora", "--max-loras-per-batch", String(cfg.max_loras));
    if (cfg.max_lora_rank !== undefined) add("--max-lora-rank", String(cfg.max_lora_rank));
  }
  // SGLang's radix cache is its prefix cache, on by default.
  if (cfg.enable_prefix_caching === false) add("--disable-radix-cache");
  const pd = p.disaggregation;
  if (pd && p.role !== "replica") {
    add("--disaggregation-mode", p.role, "--disaggregation-transfer-backend", pd.transferBackend);
    if (pd.bootstrapPort !== undefined) add("--disaggregation-bootstrap-port", String(pd.bootstrapPort));
  }
  // /metrics answers only with it; the fleet CLI and monitoring read it.
  add("--enable-metrics");
  for (const [key, value] of Object.entries(cfg.sglang_extra)) add(...sglangExtraArgs(key, value));
  return argv;
}
