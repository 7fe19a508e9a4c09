import { z } from "zod";
import { primeRendererTable, vllmPlugin } from "./prime-later";
import { modelTable, parallelTable } from "./model";
import { engineProcesses, inferenceShape } from "./inference";
import { restartTable } from "./restart";
import { idleReleaseAfter } from "./idle-release";
import { costTable } from "./cost";
import { llmdRouter, primeVllmRouter, routerRelease } from "./router";
import { vllmVersion } from "../../plan/engines/vllm/config/version";
import { serverTable } from "./server";
import {
  argText,
  bare,
  count,
  envVars,
  filePath,
  hostlist,
  longText,
  modelId,
  outputDir,
  port,
  slurmName,
  slurmTime,
  table,
  typeChoices,
} from "./primitives";
import { cpuTier, diskTier, mooncakeOffload } from "./offload";
import { primeFleetTables, primeTargetTables } from "../target-registry";
import { PRIME_RL_COMMITS } from "../prime-commit";

/*
 * prime-rl's current stack-file layout (PR #3202, "vllm pass-through inference config"), as its
 * own config classes declare it: packages/prime-rl-configs/src/prime_rl/configs/inference.py
 * (InferenceConfig, VllmConfig, the router, deployment, KV-offload and SLURM configs) and
 * configs/rl.py (RLConfig and its top-level [deployment]). Every prime-rl table forbids unknown
 * keys except [vllm], which passes any `vllm serve` argument through by its snake_case name.
 * normalise-prime.ts maps a validated file onto the canonical config; the keys vllm-fleet does
 * not act on are listed as ignored (PRIME_IGNORED).
 */

/** VllmConfig's declared fields (inference.py); any other key is an extra `vllm serve` argument. */
export const primeVllmShape = {
  model: modelId.optional().describe('Served model (prime-rl default "Qwen/Qwen3-0.6B"; in an RL file, [model] name)'),
  dtype: z.enum(["auto", "float16", "bfloat16", "float32"]).optional(),
  max_model_len: bare(modelTable.shape.max_model_len),
  enforce_eager: z.boolean().optional(),
  trust_remote_code: z.boolean().optional(),
  chat_template: longText.optional(),
  tool_call_parser: argText.optional(),
  reasoning_parser: argText.optional(),
  tensor_parallel_size: bare(parallelTable.shape.tp),
  /**
   * Derived in an RL file by AUTO_SETUP "RL single node: inference takes num_infer_gpus"; for
   * multi_node by AUTO_SETUP "prime-rl fills each multi_node node with gpus_per_node / tp ranks".
   */
  data_parallel_size: bare(parallelTable.shape.dp),
  data_parallel_size_local: count.optional().describe("Planned by vllm-fleet from the deployment (accepted, ignored)"),
  data_parallel_rpc_port: port.optional().describe("Planned by vllm-fleet (accepted, ignored)"),
  api_server_count: z.number().int().min(0).optional().describe("Planned by vllm-fleet (accepted, ignored)"),
  gpu_memory_utilization: bare(inferenceShape.gpu_memory_utilization),
  enable_prefix_caching: z.boolean().optional(),
  enable_lora: z.boolean().optional(),
  max_loras: bare(inferenceShape.max_loras),
  max_lora_rank: z.number().int().min(1).max(512, "must be at most 512").optional(),
  enable_expert_parallel: z.boolean().optional(),
  enable_eplb: z.boolean().optional(),
  enable_dbo: z.boolean().optional(),
  enable_return_routed_experts: z.boolean().optional(),
  // 8324600 types it (default true); at 559b447 it is an extra `vllm serve` argument like any other.
  enable_ep_weight_filter: z.boolean().optional(),
  // Typed by VllmConfig but passed on as `vllm serve` flags (checked against the vLLM manifest).
  seed: z.number().int().optional(),
  quantization: argText.optional(),
  max_cpu_loras: z.number().int().min(1).optional(),
  lora_target_modules: z.array(z.string()).optional(),
  all2all_backend: z
    .enum([
      "allgather_reducescatter",
      "deepep_high_throughput",
      "deepep_low_latency",
      "flashinfer_nvlink_one_sided",
      "flashinfer_nvlink_two_sided",
    ])
    .optional(),
  rope_scaling: z.union([z.record(z.string(), z.unknown()), z.string()]).optional(),
};

/** `[vllm]`: extra="allow", so unknown keys pass through to vllm_extra (checked there). */
export const primeVllmTable = z.looseObject(primeVllmShape);

const gpusPerNode = z.number().int().min(1).max(64).optional().describe("GPUs on each node (prime-rl default 8)");

const vllmOverrides = z.record(z.string(), z.unknown());

export const primeDeploymentTable = z.discriminatedUnion(
  "type",
  [
    table({ type: z.literal("single_node").default("single_node"), gpus_per_node: gpusPerNode }),
    table({
      type: z.literal("multi_node"),
      num_nodes: count.optional().describe("prime-rl default 2"),
      gpus_per_node: gpusPerNode,
    }),
    table({
      type: z.literal("disaggregated"),
      gpus_per_node: gpusPerNode,
      prefill_nodes_per_replica: count.optional(),
      decode_nodes_per_replica: count.optional(),
      num_prefill_replicas: count.optional(),
      num_decode_replicas: count.optional(),
      prefill_port: port.optional(),
      decode_port: port.optional(),
      prefill_env_vars: envVars.optional(),
      decode_env_vars: envVars.optional(),
      prefill_vllm_overrides: vllmOverrides.optional().describe("Extra `vllm serve` arguments for prefill engines"),
      decode_vllm_overrides: vllmOverrides.optional().describe("Extra `vllm serve` arguments for decode engines"),
    }),
  ],
  typeChoices("single_node", "multi_node", "disaggregated"),
);

/** prime-rl's router is vllm-router or llm-d (`None` cannot be written in TOML). */
export const primeRouterTable = z.discriminatedUnion(
  "type",
  [primeVllmRouter, llmdRouter],
  typeChoices("vllm-router", "llm-d"),
);

export const primeServerTable = table({
  ...serverTable.shape,
  liveness_timeout_seconds: z
    .number()
    .gt(0, "must be > 0")
    .optional()
    .describe("prime-rl's /liveness RPC timeout (accepted, ignored)"),
});

/** prime-rl's mooncake offload has no protocol key. */
const { protocol: _protocol, ...mooncakeShape } = mooncakeOffload.shape;
export const primeOffloadTable = z.discriminatedUnion(
  "type",
  [table({ type: z.literal("native"), cpu: cpuTier.optional(), disk: diskTier.optional() }), table(mooncakeShape)],
  typeChoices("native", "mooncake"),
);

/** prime-rl's SlurmConfig; the launcher keys (project_dir and below) are accepted and ignored. */
export const primeSlurmTable = table({
  job_name: slurmName.optional(),
  partition: slurmName.optional(),
  account: slurmName.optional(),
  time: slurmTime.optional(),
  nodelist: hostlist.optional(),
  exclude: hostlist.optional(),
  project_dir: filePath.optional(),
  template_path: filePath.optional(),
  pre_run_command: z.string().optional(),
  cleanup_grace_period: z.number().int().min(0).optional(),
  shared_fs: z.boolean().optional(),
});

const logTable = table({
  level: z.string().optional(),
  vf_level: z.string().optional(),
  json_logging: z.boolean().optional(),
  log_data: z.boolean().optional(),
  interval: z.number().gt(0).optional(),
});

const weightBroadcast = z.looseObject({ type: z.enum(["nccl", "filesystem", "nixl"]).optional() });

/** InferenceConfig (inference.py): the root of a standalone file, `[inference]` of an RL one. */
export const primeInferenceShape = {
  server: primeServerTable.optional(),
  router: primeRouterTable.optional(),
  backend_port: port.optional(),
  vllm: primeVllmTable.optional(),
  log: logTable.optional(),
  env_vars: envVars.optional(),
  use_deep_gemm: z.boolean().optional(),
  weight_broadcast: weightBroadcast.optional(),
  kv_cache_offload: primeOffloadTable.optional(),
  use_pd_kv_transfer: z.boolean().optional(),
  enable_fp32_lm_head: z.boolean().optional(),
  enable_fp32_router_logits: z.boolean().optional(),
  deployment: primeDeploymentTable.optional(),
  slurm: primeSlurmTable.optional(),
  output_dir: outputDir.optional(),
  dry_run: z.boolean().optional(),
  // prime-rl 8324600 (config/prime-commit.ts LATER_INFERENCE_KEYS).
  renderer: primeRendererTable.optional(),
  enable_return_sampling_mask: z.boolean().optional(),
  enable_return_sampling_mask_logprobs: z.boolean().optional(),
  fp8_ue8m0_weight_scales: z.boolean().optional(),
  fp8_stochastic_weight_rounding: z.boolean().optional(),
  vllm_plugins: z.array(vllmPlugin).optional(),
};

/** vllm-fleet's own settings for a prime-rl file: which server each engine process runs, how many, and how. */
export const vllmFleetTable = table({
  ...primeFleetTables(),
  // The router's release (router.ts routerRelease): prime-rl's [router] forbids keys it lacks.
  router_release: bare(routerRelease),
  prime_rl_commit: z
    .enum(PRIME_RL_COMMITS)
    .optional()
    .describe(
      'The prime-rl commit the file was written for, whose defaults fill what it leaves out: "559b447" (default; max_loras 8, max_cpu_loras 100, router policy consistent_hash) or "8324600" (max_loras 1, no max_cpu_loras, policy sticky_least_loaded, enable_ep_weight_filter, output_dir from $PRL_OUTPUT_DIR, enable_prompt_tokens_details and enable_scale_out on every engine). Default "559b447", or "8324600" when the file uses a key only that commit has (renderer, enable_return_sampling_mask(_logprobs), fp8_ue8m0_weight_scales, fp8_stochastic_weight_rounding, vllm_plugins)',
    ),
  // vLLM's release (plan/engines/vllm/config/version.ts): prime-rl's [vllm] table passes its keys to vLLM.
  vllm_version: bare(vllmVersion),
  engine: z
    .enum(["prime-rl", "vllm"])
    .optional()
    .describe(
      'What each engine runs: "prime-rl" (its `inference` server with the weight-update worker extension and admin routes) or "vllm" (stock `vllm serve`). Default "prime-rl" for an RL file and for a file with renderer or enable_return_sampling_mask_logprobs (prime-rl\'s server serves them), "vllm" for another standalone inference file',
    ),
  restart: restartTable
    .optional()
    .describe("What an island does when one of its processes exits ([restart] in vllm-fleet's own layout)"),
  idle_release_after: idleReleaseAfter,
  cost: costTable.optional().describe("What `fleet cost` prices the GPU-hours at ([cost] in vllm-fleet's own layout)"),
  engine_processes: engineProcesses
    .default("per_rank")
    .describe(
      '"per_rank" (prime-rl\'s topology): on SLURM, multi_node and disaggregated deployments run one engine process per DP rank on port + k with its own GPUs, expert-parallel and P/D groups as external-LB DP groups, every rank a router worker. "per_node": one process per node serving all its ranks. single_node deployments and Kubernetes always run one per node',
    ),
});

/** vllm-fleet's own tables, beside prime-rl's: the targets' (those prime-rl has no table of that name for) and [vllm_fleet]. */
const ours = {
  ...primeTargetTables(),
  vllm_fleet: vllmFleetTable.optional(),
};

export const primeStandaloneLayout = table({ ...primeInferenceShape, ...ours });

/** RLConfig's top-level [deployment] (rl.py): single_node splits one node, multi_node counts nodes. */
export const primeRlDeploymentTable = z.discriminatedUnion(
  "type",
  [
    table({
      type: z.literal("single_node").default("single_node"),
      gpus_per_node: gpusPerNode,
      num_train_gpus: z.number().int().optional().describe("prime-rl default 1"),
      num_infer_gpus: z.number().int().optional().describe("prime-rl default 1"),
    }),
    table({
      type: z.literal("multi_node"),
      gpus_per_node: gpusPerNode,
      num_train_nodes: z.number().int(),
      num_infer_nodes: z.number().int().min(0, "must be >= 0").optional(),
      num_infer_replicas: count.optional(),
      nodes_per_fsdp_group: z.number().int().optional(),
      orchestrator_on_inference: z.boolean().optional(),
    }),
  ],
  typeChoices("single_node", "multi_node"),
);

/** RL tables vllm-fleet accepts without interpreting: they configure the trainer and orchestrator. */
export const PRIME_RL_IGNORED_TABLES = [
  "trainer",
  "orchestrator",
  "run",
  "clean",
  "log",
  "ckpt",
  "resume",
  "monitors",
  "tokenizer",
  "max_steps",
  "seq_len",
  "weight_broadcast",
  "rollout_transport",
] as const;

const anything = z.unknown();

/** RLConfig (rl.py): inference under [inference], the run's own tables beside it. */
export const primeRlLayout = table({
  inference: table(primeInferenceShape),
  deployment: primeRlDeploymentTable.optional(),
  model: table({ name: modelId.optional(), vlm: anything.optional() }).optional(),
  env_vars: envVars.optional(),
  output_dir: outputDir.optional(),
  slurm: primeSlurmTable.optional(),
  dry_run: z.boolean().optional(),
  ...Object.fromEntries(PRIME_RL_IGNORED_TABLES.map((k) => [k, anything.optional()])),
  // Its type picks the engines' worker extension (normalise-prime.ts weightBroadcastType): checked.
  weight_broadcast: weightBroadcast.optional(),
  ...ours,
});

/**
 * SFTConfig's top-level [deployment] (configs/sft.py): the inference for its online evals takes
 * num_infer_gpus of the trainer's node, or num_infer_nodes nodes of their own (a separate SLURM job).
 */
export const primeSftDeploymentTable = z.discriminatedUnion(
  "type",
  [
    table({
      type: z.literal("single_node").default("single_node"),
      gpus_per_node: gpusPerNode,
      num_train_gpus: z.number().int().optional().describe("prime-rl default 1"),
      num_infer_gpus: z.number().int().optional().describe("prime-rl default 1"),
      num_eval_gpus: z.number().int().optional().describe("prime-rl's other name for num_infer_gpus"),
    }),
    table({
      type: z.literal("multi_node"),
      gpus_per_node: gpusPerNode,
      num_train_nodes: count.optional().describe("prime-rl default 2"),
      num_infer_nodes: z.number().int().min(0, "must be >= 0").optional().describe("prime-rl default 0"),
      num_eval_nodes: z
        .number()
        .int()
        .min(0, "must be >= 0")
        .optional()
        .describe("prime-rl's other name for num_infer_nodes"),
      nodes_per_fsdp_group: z.number().int().optional(),
      // sft.py normalize_deployment drops these from a multi_node deployment.
      num_train_gpus: z.number().int().optional(),
      num_infer_gpus: z.number().int().optional(),
    }),
  ],
  typeChoices("single_node", "multi_node"),
);

/** SFTConfig tables vllm-fleet accepts without interpreting: they configure the SFT trainer and its evals. */
export const PRIME_SFT_IGNORED_TABLES = [
  "tokenizer",
  "renderer",
  "data",
  "val",
  "eval",
  "weight_broadcast",
  "optim",
  "scheduler",
  "ckpt",
  "resume",
  "log",
  "monitors",
  "run",
  "clean",
  "matmul_precision",
  "max_steps",
  "memory_profiler_path",
  "gc",
  "trace_path",
  "dist_timeout_seconds",
  "heartbeat",
] as const;

/** Tables only prime-rl's SFTConfig has: with one of them and neither [trainer] nor [orchestrator], a file is an SFT file. */
const SFT_ONLY = ["data", "val", "eval", "optim", "scheduler"];

/** Whether a file with [inference] is prime-rl's `sft` config (online evals) rather than an RL one. */
export function isSftFile(raw: Record<string, unknown>): boolean {
  return !("trainer" in raw) && !("orchestrator" in raw) && SFT_ONLY.some((k) => k in raw);
}

/** SFTConfig (sft.py): inference for its online evals under [inference]; [model] is the trainer's (its name is served). */
export const primeSftLayout = table({
  inference: table(primeInferenceShape),
  deployment: primeSftDeploymentTable.optional(),
  model: z.looseObject({ name: modelId.optional() }).optional(),
  env_vars: envVars.optional(),
  output_dir: outputDir.optional(),
  slurm: primeSlurmTable.optional(),
  dry_run: z.boolean().optional(),
  ...Object.fromEntries(PRIME_SFT_IGNORED_TABLES.map((k) => [k, anything.optional()])),
  // Its type picks the engines' worker extension (normalise-prime.ts weightBroadcastType): checked.
  weight_broadcast: weightBroadcast.optional(),
  ...ours,
});

/** Keys only prime-rl's current layout has at the inference root: their presence selects it. */
export const PRIME_MARKERS = [
  "vllm",
  "router",
  "log",
  "use_deep_gemm",
  "weight_broadcast",
  "use_pd_kv_transfer",
  "enable_fp32_lm_head",
  "enable_fp32_router_logits",
];

/** Keys only the older layout (ours) has at the inference root. */
export const OLDER_ONLY = Object.keys(inferenceShape).filter((k) => !(k in primeInferenceShape));

/**
 * Keys of prime-rl's [vllm] table that are canonical inference keys under the same name (the rest
 * map to the model, parallel layout or vllm_extra).
 */
export const VLLM_CANONICAL_KEYS: ReadonlySet<string> = new Set([
  "enable_expert_parallel",
  "enable_dbo",
  "enable_eplb",
  "enable_return_routed_experts",
  "enable_lora",
  "max_loras",
  "max_lora_rank",
  "gpu_memory_utilization",
  "enable_prefix_caching",
]);
