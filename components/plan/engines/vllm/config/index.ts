import type { EngineConfigPart } from "../../../../config/engine-part";
import { fail } from "../../../../config/rule";
import { checkVllmExtra, vllmFlags } from "./flags";
import { VLLM_RULES } from "./rules";
import { vllmImage } from "./version";

/**
 * vLLM's image the Kubernetes engines default to (the engine, and the Mooncake store, which ships in
 * it) at the newest release; a config's vllm_version picks its own (imageOf).
 */
export const VLLM_IMAGE = vllmImage();

/** vLLM's part of the config layer (prime-rl's server is a variant of it): what it refuses and fills in. */
export const vllmEngineConfig: EngineConfigPart<"vllm"> = {
  name: "vllm",
  extraKey: "vllm_extra",
  image: VLLM_IMAGE,
  imageOf: (cfg) => vllmImage(cfg.vllm_version),
  checkExtra: (value, where, user, inference) => checkVllmExtra(value ?? {}, where, user, inference.vllm_version),
  rules: {
    ...VLLM_RULES,
    "LoRA rank vLLM accepts": (cfg) => {
      const ranks = (vllmFlags(cfg.vllm_version)["--max-lora-rank"].choices as number[]) ?? [];
      const max = Math.max(...ranks);
      return cfg.max_lora_rank !== undefined && cfg.max_lora_rank > max
        ? fail("max_lora_rank", `must be at most ${max} (vLLM accepts ${ranks.join(", ")})`)
        : [];
    },
  },
  autoSetup: {
    // prime-rl's P/D layout; SGLang's P/D serves dense models without it.
    "P/D turns on expert parallelism": (cfg, { given }) => {
      if (!given("enable_expert_parallel") && cfg.deployment.type === "disaggregated")
        cfg.enable_expert_parallel = true;
    },
    // prime-rl rounds up to the next rank vLLM accepts; above the largest is a rule error ("LoRA rank vLLM accepts").
    "LoRA rank rounds up to one vLLM accepts": (cfg) => {
      if (cfg.max_lora_rank === undefined) return;
      const ranks = (vllmFlags(cfg.vllm_version)["--max-lora-rank"].choices as number[]).slice().sort((a, b) => a - b);
      cfg.max_lora_rank = ranks.find((r) => r >= cfg.max_lora_rank!) ?? cfg.max_lora_rank;
    },
  },
};
