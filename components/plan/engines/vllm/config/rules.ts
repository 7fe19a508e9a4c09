import type { ConfigView } from "../../../../config/fleet-config";
import { fail, type Rule } from "../../../../config/rule";
import { serverPatchesUsed } from "../../../../config/prime-server-patches";

/** Where the file sets a kv_transfer_config of its own: vllm_extra, or a P/D role's table. */
function ownConnectorKeys(cfg: ConfigView): string[] {
  const roles = (["prefill", "decode"] as const).filter((r) => cfg.role_vllm_extra?.[r]?.kv_transfer_config);
  return [
    ...(cfg.vllm_extra.kv_transfer_config ? ["vllm_extra.kv_transfer_config"] : []),
    ...roles.map((r) => `role_vllm_extra.${r}.kv_transfer_config`),
  ];
}

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
  // vLLM takes one --kv-transfer-config: the user's own, or the one the planner builds (kv-transfer.ts).
  "one KV connector: the user's or the planner's": (cfg) => {
    const own = ownConnectorKeys(cfg);
    if (!own.length) return [];
    const planner = [
      ...(cfg.kv_cache_offload ? ["kv_cache_offload"] : []),
      ...(cfg.deployment.type === "disaggregated" ? ["deployment.type"] : []),
    ];
    if (!planner.length) return [];
    const why = planner.map((k) =>
      k === "deployment.type" ? '{key:deployment.type} = "disaggregated" (NIXL)' : `{key:${k}}`,
    );
    return fail(
      own[0],
      `is a KV connector of your own, and the planner builds vLLM's one --kv-transfer-config from ${why.join(" and ")}: drop one of them`,
      ...own.slice(1),
      ...planner,
    );
  },
  "vLLM's P/D moves KV over NIXL": (cfg) =>
    cfg.deployment.type === "disaggregated" && cfg.deployment.transfer_backend === "mooncake"
      ? fail(
          "deployment.transfer_backend",
          'vLLM\'s prefill/decode engines here move KV with NixlConnector: "nixl" (mooncake is a transfer backend of engine = "sglang")',
          "engine",
        )
      : [],
  // prime-rl 8324600's renderer routes and sampling-mask logprobs patch live in its own server.
  "prime-rl's renderer runs in prime-rl's server": (cfg) =>
    cfg.prime_engine?.renderer !== undefined && cfg.prime_engine.engine === "vllm"
      ? fail(
          "prime_engine.renderer",
          'is served by prime-rl\'s `inference` server (its /v1/chat/completions through the renderer), which stock `vllm serve` lacks: set {key:prime_engine.engine} = "prime-rl"',
          "prime_engine.engine",
        )
      : [],
  "prime-rl's FP8 weight patches and vLLM plugins run in prime-rl's server": (cfg) => {
    const pe = cfg.prime_engine;
    if (pe?.engine !== "vllm") return [];
    const used = serverPatchesUsed(pe);
    return used.flatMap((k) =>
      fail(
        `prime_engine.${k}`,
        'is read by prime-rl\'s server and its vLLM patches, which stock `vllm serve` lacks: set {key:prime_engine.engine} = "prime-rl"',
        "prime_engine.engine",
      ),
    );
  },
  "prime-rl's sampling-mask logprobs run in prime-rl's server": (cfg) =>
    cfg.prime_engine?.enable_return_sampling_mask_logprobs === true && cfg.prime_engine.engine === "vllm"
      ? fail(
          "prime_engine.enable_return_sampling_mask_logprobs",
          'is a patch of prime-rl\'s server (PRIME_RETURN_SAMPLING_MASK_LOGPROBS), which stock `vllm serve` lacks: set {key:prime_engine.engine} = "prime-rl"',
          "prime_engine.engine",
        )
      : [],
};
