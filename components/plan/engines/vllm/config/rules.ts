import type { ConfigView } from "../../../../config/fleet-config";
import { fail, type Rule } from "../../../../config/rule";

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
};
