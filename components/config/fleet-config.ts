import type { z } from "zod";
import type { CatalogEntry } from "./schema/catalog";
import type { deploymentTable } from "./schema/deployment";
import type { inferenceTable } from "./schema/inference";
import type { modelTable } from "./schema/model";
import type { offloadTable } from "./schema/offload";
import type { routerTable } from "./schema/router";
import type { launcherTable } from "./schema/launchers";
import type { ExtraValue } from "./flag-values";

/** The inference keys as the schema outputs them: its types, with its defaults applied (schema/inference.ts). */
type Inference = z.output<typeof inferenceTable>;

/** What every target's settings carry: the kind that selected them. */
export interface TargetSettingsBase {
  kind: string;
}

/**
 * The canonical, fully defaulted stack configuration both layouts normalise into, for targets whose
 * settings are `T` (components/config/types.ts FleetConfig: the registered targets'). A target's config
 * part reads it as `ConfigView`, so it never needs the registry that lists it. Every inference
 * key is the schema's own (name, type, default and description: schema/inference.ts); declared
 * here are only the values normalisation reshapes or computes (normalise.ts, and rules.ts
 * AUTO_SETUP for the values derived from other keys).
 */
export interface FleetConfigOf<T extends TargetSettingsBase> extends Omit<
  Inference,
  "model" | "deployment" | "kv_cache_offload" | "vllm_extra" | "sglang_extra" | "backend_port"
> {
  /**
   * The service of the stack this config serves (`[services.<name>]`); undefined for a file without
   * [services], whose one service is unnamed so every name stays what it was (plan/naming.ts).
   */
  service?: string;
  /** Which stack-file layout the user wrote; error paths are reported in that layout's terms. */
  layout: "standalone" | "rl";
  /** The served model (the catalog's id when the file names an alias); name "" only while "no model" is reported. */
  model: ModelConfig;
  deployment: DeploymentConfig;
  /** `[deployment.router]`, lifted out of the deployment. */
  router: RouterConfig;
  /** null: no offload (or a table without its cpu tier, which is being reported). */
  kv_cache_offload: OffloadConfig | null;
  /** Checked against the vLLM manifest, keyed by snake_case name, JSON strings parsed (plan/engines/vllm/config/flags.ts). */
  vllm_extra: Record<string, ExtraValue>;
  /** Checked against SGLang's manifest, keyed by snake_case name (components/plan/engines/sglang/config/flags.ts). */
  sglang_extra: Record<string, ExtraValue>;
  /** Engine port when a router listens on server.port (AUTO_SETUP when unset). */
  backend_port: number;
  /** Copies of the whole inference island, each behind its own router (RL num_infer_replicas). */
  islands: number;
  /** The settings of the target the file selects (`[slurm]`, `[kubernetes]`, `[local]`, ...), defaults in. */
  target: T;
  /**
   * The top-level output_dir or slurm.output_dir; unset, each island's folder is under
   * vllm-fleet/<job name> (components/slurm/sbatch.ts fleetDir), which carries the Pulumi stack.
   */
  output_dir?: string;
  dry_run: boolean;
  /** Canonical dotted paths of every key the user set (auto-setup rules depend on it). */
  explicit: ReadonlySet<string>;
  /** The RL layout's top-level [deployment] keys that constrain the island (checked, not deployed). */
  rl_deployment?: {
    type?: string;
    num_infer_nodes?: number;
    num_train_gpus?: number;
    num_infer_gpus?: number;
    gpus_per_node?: number;
  };
  /** prime-rl's layout: disaggregated per-role extra `vllm serve` flags (deployment.prefill_vllm_overrides / decode_vllm_overrides). */
  role_vllm_extra?: { prefill?: Record<string, ExtraValue>; decode?: Record<string, ExtraValue> };
  /** prime-rl's layout: the file's keys and tables accepted but not acted on (trainer, orchestrator, ...), as written. */
  ignored?: string[];
  /** Set when the file uses prime-rl's current layout ([vllm], top-level [router]); paths are reported in its terms. */
  prime_rl?: true;
  /**
   * prime-rl's layout: the inference keys prime-rl's own server turns into engine flags and
   * environment (its configs/inference.py to_namespace, inference/server.py setup_vllm_env), with
   * prime-rl's defaults; the planner applies them (plan/engines/vllm/argv.ts and env.ts).
   */
  prime_engine?: PrimeEngineConfig;
  /** Facts worth telling the user that are not errors. */
  notes: string[];
  /**
   * The served model's catalog entry, for planners (GPU memory from `arch`, a `list` verb). Its
   * `launch` holds the catalog's defaults; the values in effect are `model`, `parallel`, ...
   */
  catalog?: CatalogEntry & { id: string };
}

export type ModelConfig = z.output<typeof modelTable>;

/** prime-rl's engine-level inference keys (InferenceConfig in its configs/inference.py). */
export interface PrimeEngineConfig {
  /** additional_config.fp32_lm_head (prime-rl default true). */
  enable_fp32_lm_head: boolean;
  /** additional_config.fp32_router_logits (prime-rl default true). */
  enable_fp32_router_logits: boolean;
  /** VLLM_USE_DEEP_GEMM and VLLM_MOE_USE_DEEP_GEMM, "1" or "0", always set (prime-rl default false). */
  use_deep_gemm: boolean;
  /** [vllm_fleet] engine: prime-rl's own `inference` server, or stock `vllm serve`. */
  engine: PrimeEngineKind;
  /** weight_broadcast.type: picks prime-rl's weight-update worker extension (prime-rl engine only). */
  weight_broadcast: WeightBroadcastType;
  /** The prime-rl commit whose defaults the file is read with ([vllm_fleet] prime_rl_commit; config/prime-commit.ts); absent: 559b447. */
  commit?: PrimeCommit;
  /** [inference] renderer (8324600): prime-rl's server answers /v1/chat/completions through it (prime-rl engine only). */
  renderer?: Record<string, unknown>;
  /** vLLM's --return-sampling-mask, and the V2 model runner it needs (8324600; absent: false). */
  enable_return_sampling_mask?: boolean;
  /** PRIME_RETURN_SAMPLING_MASK_LOGPROBS=1 for prime-rl's vLLM patch (needs the mask; prime-rl engine only; absent: false). */
  enable_return_sampling_mask_logprobs?: boolean;
  /** PRIME_FP8_UE8M0_WEIGHT_SCALES=1 for prime-rl's FP8 weight patch (8324600; prime-rl engine only; absent: false). */
  fp8_ue8m0_weight_scales?: boolean;
  /** PRIME_FP8_STOCHASTIC_WEIGHT_ROUNDING=1 for prime-rl's FP8 weight patch (8324600; prime-rl engine only; absent: false). */
  fp8_stochastic_weight_rounding?: boolean;
  /** PRIME_VLLM_PLUGINS, a JSON list prime-rl's server runs before the model loads (8324600; prime-rl engine only). */
  vllm_plugins?: string[];
}

export type PrimeEngineKind = "prime-rl" | "vllm";
export type PrimeCommit = "559b447" | "8324600";
export type WeightBroadcastType = "nccl" | "filesystem" | "nixl";

/** Each member of a union without key K. */
type Without<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** `[deployment]` without its router, which the canonical config holds beside it. */
export type DeploymentConfig = Without<z.output<typeof deploymentTable>, "router">;

/** What the GPU-memory planner knows about the boards (components/plan/gpu-memory.ts). */
/** The config as a part that must not depend on the target registry reads it (a target's rules, the shared helpers). */
export type ConfigView = FleetConfigOf<TargetSettingsBase>;

export type GpuFacts = Pick<DeploymentConfig, "gpus_per_node" | "gpu_type" | "gpu_memory_gib">;

export type RouterConfig = z.output<typeof routerTable>;

/** `[kv_cache_offload]` once normalisation has checked that the cpu tier has its size and a disk tier its path. */
type Checked<T> = T extends unknown
  ? Omit<T, "cpu" | "disk"> & { cpu: { num_bytes: number }; disk?: { path: string } }
  : never;
export type OffloadConfig = Checked<z.output<typeof offloadTable>>;

export type Launcher = z.output<typeof launcherTable>;

/** The four deployment shapes (docs/shapes.md): single node, independent replicas, wide-EP, P/D. */
export type Shape = "single_node" | "multi_replica" | "wide_ep" | "disaggregated";

export function shapeOf(cfg: Pick<ConfigView, "deployment" | "enable_expert_parallel">): Shape {
  switch (cfg.deployment.type) {
    case "single_node":
      return "single_node";
    case "multi_node":
      return cfg.enable_expert_parallel ? "wide_ep" : "multi_replica";
    case "disaggregated":
      return "disaggregated";
  }
}
