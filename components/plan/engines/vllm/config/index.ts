import type { EngineConfigPart } from "../../../../config/engine-part";
import { checkVllmExtra } from "../../../../config/vllm-flags";
import { VLLM_RULES } from "./rules";

/** vLLM's release the Kubernetes images default to (the engine, and the Mooncake store, which ships in it). */
export const VLLM_IMAGE = "vllm/vllm-openai:v0.32.0";

/** vLLM's part of the config layer (prime-rl's server is a variant of it): what it refuses and fills in. */
export const vllmEngineConfig: EngineConfigPart<"vllm"> = {
  name: "vllm",
  extraKey: "vllm_extra",
  image: VLLM_IMAGE,
  checkExtra: (value, where, user) => checkVllmExtra(value ?? {}, where, user),
  rules: VLLM_RULES,
  autoSetup: {
    // prime-rl's P/D layout; SGLang's P/D serves dense models without it.
    "P/D turns on expert parallelism": (cfg, { given }) => {
      if (!given("enable_expert_parallel") && cfg.deployment.type === "disaggregated")
        cfg.enable_expert_parallel = true;
    },
  },
};
