import { fail, type Rule } from "../../../../config/rule";

/*
 * What a vLLM engine (engine = "vllm", prime-rl's server among them) cannot take: SGLang's router,
 * table and KV transfer backend. Run only when the config's engine is vLLM (rules.ts checkRules,
 * through the engine registry).
 */
export const VLLM_RULES: Record<string, Rule> = {
  "sglang-router fronts SGLang": (cfg) =>
    cfg.router.type === "sglang-router"
      ? fail(
          "router.type",
          'sglang-router fronts engine = "sglang"; vLLM engines sit behind vllm-router or llm-d',
          "engine",
        )
      : [],
  "sglang_extra is SGLang's": (cfg) =>
    Object.keys(cfg.sglang_extra).length
      ? fail("sglang_extra", 'holds SGLang server flags, which apply with engine = "sglang" only', "engine")
      : [],
  "vLLM's P/D moves KV over NIXL": (cfg) =>
    cfg.deployment.type === "disaggregated" && cfg.deployment.transfer_backend === "mooncake"
      ? fail(
          "deployment.transfer_backend",
          'vLLM\'s prefill/decode engines here move KV with NixlConnector: "nixl" (mooncake is a transfer backend of engine = "sglang")',
          "engine",
        )
      : [],
};
