import { fail, type Rule } from "../../../../config/rule";
import { sglangFlags } from "./flags";

/*
 * What engine = "sglang" cannot take, each refused naming its key: the features this project plans
 * only as vLLM features (docs/sglang.md), and vLLM's own table. Run only when the config's engine is
 * SGLang (rules.ts checkRules, through the engine registry).
 */

const sglang = 'engine = "sglang"';

/** Read on use: SGLang's manifest (79 KB) is loaded only for a file that names an SGLang parser. */
const choicesOf = (flag: string) => (sglangFlags()[flag]?.choices ?? []) as string[];

/** A parser the user named must be one SGLang registers ("auto" is ours: the planner's table picks). */
const sglangParser =
  (key: "tool_call_parser" | "reasoning_parser", flag: string): Rule =>
  (cfg) => {
    const named = cfg.model[key];
    if (named === undefined || named === "auto" || !cfg.explicit.has(`model.${key}`)) return [];
    const choices = choicesOf(flag).filter((c) => c !== "auto");
    return choices.includes(named)
      ? []
      : fail(`model.${key}`, `SGLang has no ${flag.slice(2)} "${named}"; its names: ${choices.join(", ")}`, "engine");
  };

export const SGLANG_RULES: Record<string, Rule> = {
  "SGLang's tool-call parsers": sglangParser("tool_call_parser", "--tool-call-parser"),
  "SGLang's reasoning parsers": sglangParser("reasoning_parser", "--reasoning-parser"),
  "SGLang is served behind sglang-router": (cfg) =>
    cfg.router.type === "vllm-router" || cfg.router.type === "llm-d"
      ? fail(
          "router.type",
          `${sglang} is served behind sglang-router (router.type = "sglang-router", the default with SGLang) or none: ${cfg.router.type} ${cfg.router.type === "llm-d" ? "schedules on vLLM's metrics and KV events" : "speaks vLLM's P/D protocol, not SGLang's bootstrap"}`,
          "engine",
        )
      : [],
  "KV offload tiers are vLLM connectors": (cfg) =>
    cfg.kv_cache_offload
      ? fail(
          "kv_cache_offload",
          `the CPU, disk and Mooncake tiers are vLLM KV connectors (OffloadingConnector, MooncakeStoreConnector), which ${sglang} has no form of; SGLang's own hierarchical cache can be passed as sglang_extra (enable_hierarchical_cache, hicache_*), unsized by the planner`,
          "engine",
        )
      : [],
  "vllm_extra is vLLM's": (cfg) =>
    Object.keys(cfg.vllm_extra).length
      ? fail("vllm_extra", `holds \`vllm serve\` flags; with ${sglang} put SGLang's flags in sglang_extra`, "engine")
      : [],
  "dual batch overlap is vLLM's": (cfg) =>
    cfg.enable_dbo
      ? fail(
          "enable_dbo",
          `is vLLM's dual batch overlap; with ${sglang} its counterpart is sglang_extra.enable_two_batch_overlap = true`,
          "engine",
        )
      : [],
  "router replay is vLLM's": (cfg) =>
    cfg.enable_return_routed_experts
      ? fail(
          "enable_return_routed_experts",
          `router replay (routed experts returned with every response) is planned for vLLM only, not for ${sglang}`,
          "engine",
        )
      : [],
  // SGLang's DP controller spans nodes only as DP attention (with EP); without it a wide server is one
  // TP group, which the memory planner (replicas of tp GPUs) would not describe.
  "an SGLang server spans nodes with expert parallelism": (cfg) => {
    const d = cfg.deployment;
    if (cfg.enable_expert_parallel || d.type !== "disaggregated") return [];
    const key = d.num_prefill_nodes > 1 ? "num_prefill_nodes" : d.num_decode_nodes > 1 ? "num_decode_nodes" : undefined;
    return key
      ? fail(
          `deployment.${key}`,
          `an ${sglang} server spans nodes only as one expert-parallel server (DP attention over --nnodes): set enable_expert_parallel = true for a MoE model, or give each prefill and decode server one node`,
          "engine",
          "enable_expert_parallel",
        )
      : [];
  },
  "SGLang runs one server per node": (cfg) =>
    cfg.engine_processes === "per_rank"
      ? fail(
          "engine_processes",
          `"per_rank" is vLLM's external load balancing; ${sglang} runs one server per node, whose own DP controller serves the node's ranks`,
          "engine",
        )
      : [],
};
