import type { EngineConfigPart } from "../../../../config/engine-part";
import { SGLANG_ROUTER_POLICIES } from "../../../../config/schema/router";
import { checkSglangExtra } from "./flags";
import { SGLANG_RULES } from "./rules";

export { sglangFlags, sglangSource, checkSglangExtra, type SglangFlagSpec } from "./flags";

/** SGLang's image at the version its manifest is pinned to (components/upstream/sglang-server.json); CUDA 13 since v0.5.20. */
export const SGLANG_IMAGE = "lmsysorg/sglang:v0.5.23";

/** SGLang's part of the config layer (docs/sglang.md): what it refuses and where it is served. */
export const sglangEngineConfig: EngineConfigPart<"sglang"> = {
  name: "sglang",
  extraKey: "sglang_extra",
  image: SGLANG_IMAGE,
  checkExtra: (value, where, user) => checkSglangExtra(value ?? {}, where, user),
  rules: SGLANG_RULES,
  autoSetup: {
    // SGLang's engines speak SGLang's P/D bootstrap and metrics, which vllm-router and llm-d do not.
    "SGLang engines sit behind sglang-router": (cfg, { given }) => {
      if (given("router.type") || cfg.router.type !== "vllm-router") return;
      const policy = given("router.policy") ? cfg.router.policy : "cache_aware";
      const { request_timeout_secs, extra } = cfg.router;
      cfg.router = {
        type: "sglang-router",
        policy: policy as (typeof SGLANG_ROUTER_POLICIES)[number],
        ...(request_timeout_secs !== undefined && { request_timeout_secs }),
        ...(extra && { extra }),
      };
    },
  },
};
