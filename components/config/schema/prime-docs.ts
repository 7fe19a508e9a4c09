import { z } from "zod";
import {
  PRIME_RL_IGNORED_TABLES,
  PRIME_SFT_IGNORED_TABLES,
  primeDeploymentTable,
  primeInferenceShape,
  primeOffloadTable,
  primeRlDeploymentTable,
  primeRlLayout,
  primeRouterTable,
  primeServerTable,
  primeSftDeploymentTable,
  primeSftLayout,
  primeSlurmTable,
  primeStandaloneLayout,
  primeVllmShape,
} from "./prime";
import { primeDoc } from "./prime-doc-registry";
import { NEWEST_VLLM_VERSION, vllmVersion } from "../../plan/engines/vllm/config/version";
import { TARGET_PARTS } from "../target-registry";

/*
 * What prime-rl's layout means, key by key: its description and prime-rl's own default, kept as zod
 * metadata on the schemas of prime.ts (a zod registry, read by `z.toJSONSchema` in bin/schema.ts),
 * so schema/prime-rl.schema.json and the prime-rl part of docs/stack-file.md come from the zod
 * schemas alone. The loader's schema leaves every key optional (what the file says must stay
 * distinguishable from a default), so prime-rl's defaults are written here: `default` where
 * vllm-fleet acts on the key with that same default, prose in the description where it differs
 * or ignores the key. Defaults follow packages/prime-rl-configs/src/prime_rl/configs/inference.py
 * and rl.py.
 */

export { primeDocs, type PrimeDoc } from "./prime-doc-registry";

const doc = primeDoc;

const IGNORED = "Accepted and ignored";
const PLANNED = "Accepted and ignored: vllm-fleet plans it from the deployment";

const inf = primeInferenceShape;
doc(inf.server, "Where clients connect");
doc(inf.router, 'The router in front of the engines (prime-rl default: vllm-router; no "none": a router is required)');
doc(
  inf.backend_port,
  "Engine port behind the router (prime-rl default 8100; with a router and backend_port unset, server.port + 100)",
);
doc(
  inf.vllm,
  "vLLM's settings. Any other key is a `vllm serve` argument by its snake_case (or kebab-case) name, passed through; a string that parses as JSON is read as JSON (checked against the vLLM manifest)",
);
doc(inf.log, `${IGNORED}: the logging of prime-rl's own processes`);
const log = inf.log.unwrap().shape;
doc(log.level, 'Log level (prime-rl default "info")');
doc(log.vf_level, "verifiers' log level");
doc(log.json_logging, "JSON log lines (prime-rl default false)");
doc(log.log_data, "Log request data");
doc(log.interval, "Seconds between metric logs (prime-rl default 10)");
doc(inf.env_vars, "Exported for every inference process (protected names refused)", {});
doc(
  inf.use_deep_gemm,
  "Sets VLLM_USE_DEEP_GEMM and VLLM_MOE_USE_DEEP_GEMM to 1 (or 0) over env_vars: for block-FP8 checkpoints",
  false,
);
doc(
  inf.weight_broadcast,
  "How the trainer's weights reach the engines: picks prime-rl's worker extension when the engines run prime-rl's server (ignored with vllm_fleet.engine = \"vllm\"); in an RL file the top-level [weight_broadcast] decides",
);
doc(
  inf.weight_broadcast.unwrap().shape.type,
  'The worker extension class: in a standalone file "filesystem" unless set; in an RL file the top-level [weight_broadcast] type, "nccl" unless set (or "filesystem" when the trainer trains LoRA). Other keys are accepted and ignored',
);
doc(inf.kv_cache_offload, "KV-cache offload to CPU memory (and disk behind it); none by default");
doc(inf.use_pd_kv_transfer, `${IGNORED}: set for disaggregated deployments`, false);
doc(inf.enable_fp32_lm_head, 'Adds additional_config "fp32_lm_head": true', true);
doc(inf.enable_fp32_router_logits, 'Adds additional_config "fp32_router_logits": true (DeepseekV2-style MoE)', true);
doc(inf.deployment, "The shape: one node, independent nodes, or prefill/decode disaggregation");
doc(
  inf.slurm,
  "Submit through SLURM (prime-rl runs locally without it; vllm-fleet needs a target: this, [kubernetes], or one named with --target / vllm-fleet:target)",
);
doc(
  inf.output_dir,
  'Scripts, logs and endpoints.json on the cluster (prime-rl default "outputs"; vllm-fleet\'s: vllm-fleet/<job name>)',
);
doc(inf.dry_run, "Render and upload the job script without submitting it", false);
doc(
  inf.renderer,
  "prime-rl 8324600: serve /v1/chat/completions through this chat renderer (`name`, and its template fields such as `enable_thinking`) instead of vLLM's chat template and parsers. Passed to prime-rl's server as `--renderer.<key>`; needs vllm_fleet.engine = \"prime-rl\" (the default with it)",
);
doc(
  inf.enable_return_sampling_mask,
  "prime-rl 8324600: per-token sampling masks on /inference/v1/generate: `vllm serve --return-sampling-mask`, with VLLM_USE_V2_MODEL_RUNNER=1 unless env_vars sets it",
  false,
);
doc(
  inf.fp8_ue8m0_weight_scales,
  'prime-rl 8324600: online block-wise FP8 weights with power-of-two (UE8M0) block scales: PRIME_FP8_UE8M0_WEIGHT_SCALES=1 for prime-rl\'s vLLM patch; needs vllm_fleet.engine = "prime-rl" (the default with it)',
  false,
);
doc(
  inf.fp8_stochastic_weight_rounding,
  'prime-rl 8324600: online block-wise FP8 weights rounded stochastically: PRIME_FP8_STOCHASTIC_WEIGHT_ROUNDING=1 for prime-rl\'s vLLM patch; needs vllm_fleet.engine = "prime-rl" (the default with it)',
  false,
);
doc(
  inf.vllm_plugins,
  'prime-rl 8324600: callables (package.module:function or /absolute/path/file.py:function) prime-rl\'s server runs in every vLLM process before the model loads: PRIME_VLLM_PLUGINS, a JSON list; a file path must be absolute (the engines start elsewhere); needs vllm_fleet.engine = "prime-rl" (the default with it)',
  [],
);
doc(
  inf.enable_return_sampling_mask_logprobs,
  "prime-rl 8324600: also the sampler's logprob of every mask id: PRIME_RETURN_SAMPLING_MASK_LOGPROBS=1 for prime-rl's vLLM patch; needs enable_return_sampling_mask and vllm_fleet.engine = \"prime-rl\" (the default with it)",
  false,
);

const v = primeVllmShape;
doc(v.model, "Served model: Hugging Face id or path (in an RL file, [model] name)", "Qwen/Qwen3-0.6B");
doc(v.dtype, "Weight and activation dtype", "auto");
doc(v.max_model_len, "Maximum context length (default: the model's)");
doc(v.enforce_eager, "Disable CUDA graphs", false);
doc(v.trust_remote_code, "Run the checkpoint's own model code", false);
doc(
  v.chat_template,
  "Chat template: a path on the cluster or the template itself (in an RL file, [tokenizer] / [trainer.tokenizer] chat_template when unset)",
);
doc(v.tool_call_parser, 'vLLM tool-call parser; "auto" picks one from the model id (prime-rl\'s table)', "auto");
doc(v.reasoning_parser, 'vLLM reasoning parser; "auto" picks one from the model id (prime-rl\'s table)', "auto");
doc(v.tensor_parallel_size, "GPUs per model shard", 1);
doc(
  v.data_parallel_size,
  "Data-parallel ranks (in an RL single_node file, num_infer_gpus / tp; multi_node fills each node with gpus_per_node / tp)",
  1,
);
doc(v.data_parallel_size_local, PLANNED);
doc(v.data_parallel_rpc_port, `${PLANNED} (prime-rl default 13345)`);
doc(v.api_server_count, `${PLANNED} (prime-rl default 1)`);
doc(v.gpu_memory_utilization, "Fraction of GPU memory vLLM may use", 0.9);
doc(v.enable_prefix_caching, "Prefix caching (default: vLLM's; KV-cache offload turns it on)");
doc(v.enable_lora, "Serve LoRA adapters", false);
doc(v.max_loras, "LoRA adapters per batch (prime-rl 559b447 default 8; 8324600 default 1)");
doc(v.max_lora_rank, "Largest LoRA rank, rounded up to one vLLM accepts (8, 16, 32, 64, 128, 256, 320, 512)");
doc(v.enable_expert_parallel, "Expert parallelism for MoE models (disaggregated deployments turn it on)", false);
doc(v.enable_eplb, "Expert-parallel load balancing", false);
doc(v.enable_dbo, "Dual-batch overlap", false);
doc(v.enable_return_routed_experts, "Return the routed experts with every response (router replay)", false);
doc(v.seed, "`vllm serve --seed`", 0);
doc(
  v.quantization,
  '`vllm serve --quantization` (default: what the checkpoint says); prime-rl 8324600 takes only "fp8_per_block"',
);
doc(
  v.max_cpu_loras,
  "LoRA adapters kept in CPU memory, passed with enable_lora (prime-rl 559b447 default 100; 8324600 has no default: passed only when set)",
);
doc(
  v.enable_ep_weight_filter,
  "Each expert-parallel rank loads only its own experts (`vllm serve --enable-ep-weight-filter`; prime-rl 559b447: passed only when set; 8324600 default true)",
);
doc(v.lora_target_modules, "Modules LoRA adapters may target");
doc(
  v.all2all_backend,
  "Expert-parallel all-to-all backend (disaggregated roles get deepep_high_throughput / deepep_low_latency)",
  "allgather_reducescatter",
);
doc(
  v.rope_scaling,
  "RoPE scaling; `vllm serve` has no --rope-scaling in the vLLM this program targets (use hf_overrides), so it is refused",
);

const server = primeServerTable.shape;
doc(server.host, "Bind address of the router (default: all interfaces)");
doc(server.port, "Client-facing port: the router's", 8000);
doc(server.liveness_timeout_seconds, `${IGNORED}: timeout of prime-rl's /liveness call (prime-rl default 30)`);

const [single, multi, disagg] = primeDeploymentTable.options;
for (const o of [single, multi, disagg]) doc(o.shape.gpus_per_node, "GPUs on each node", 8);
doc(multi.shape.num_nodes, "Nodes, each an independent replica behind the router", 2);
doc(disagg.shape.prefill_nodes_per_replica, "Nodes per prefill replica", 1);
doc(disagg.shape.decode_nodes_per_replica, "Nodes per decode replica", 1);
doc(disagg.shape.num_prefill_replicas, "Prefill replicas", 1);
doc(disagg.shape.num_decode_replicas, "Decode replicas", 1);
doc(disagg.shape.prefill_port, "Prefill engine port (rank k: prefill_port + k)", 8100);
doc(disagg.shape.decode_port, "Decode engine port (rank k: decode_port + k)", 8200);
doc(disagg.shape.prefill_env_vars, "Exported on prefill nodes, after env_vars", {});
doc(disagg.shape.decode_env_vars, "Exported on decode nodes, after env_vars", {});
doc(disagg.shape.prefill_vllm_overrides, "`vllm serve` arguments for prefill engines, over [vllm]'s", {});
doc(disagg.shape.decode_vllm_overrides, "`vllm serve` arguments for decode engines, over [vllm]'s", {});

const [native, mooncake] = primeOffloadTable.options;
for (const o of [native, mooncake]) {
  doc(o.shape.cpu, "The CPU tier (required)");
  doc(o.shape.disk, "A disk tier behind the CPU tier");
}
doc(mooncake.shape.device_name, 'RDMA devices, e.g. "mlx5_0,mlx5_1" (empty: auto-detect)', "");

const slurm = primeSlurmTable.shape;
doc(
  slurm.job_name,
  'Base job name: each island\'s job is <job_name>-<stack>-i<k> (prime-rl default "prime-rl"; vllm-fleet\'s "vllm-fleet")',
);
doc(slurm.partition, 'sbatch --partition (prime-rl default "cluster"; vllm-fleet: the cluster\'s default partition)');
doc(slurm.account, "sbatch --account");
doc(slurm.time, "sbatch --time, e.g. 04:00:00");
doc(slurm.nodelist, "sbatch --nodelist");
doc(slurm.exclude, "sbatch --exclude");
doc(slurm.project_dir, `${IGNORED}: prime-rl's checkout for its own sbatch templates`);
doc(slurm.template_path, `${IGNORED}: vllm-fleet renders its own job script`);
doc(slurm.pre_run_command, `${IGNORED}: never run`);
doc(slurm.cleanup_grace_period, `${IGNORED} (prime-rl default 3600)`);
doc(slurm.shared_fs, `${IGNORED} (prime-rl default true)`);

const ours = primeStandaloneLayout.shape;
// [kubernetes] is the older layout's table as it is (the key reference says so): no docs of its own.
doc(
  ours.vllm_fleet,
  "vllm-fleet's own settings for a prime-rl file (prime-rl does not have this table; keep it out of files prime-rl reads)",
);
doc(
  ours.vllm_fleet?.unwrap().shape.engine,
  'What each engine runs: "prime-rl" (its `inference` server, with the weight-update worker extension and admin routes) or "vllm" (stock `vllm serve`). Default "prime-rl" in an RL file and with renderer or enable_return_sampling_mask_logprobs, "vllm" in another standalone one',
);
doc(
  ours.vllm_fleet?.unwrap().shape.prime_rl_commit,
  'The prime-rl commit whose defaults fill what the file leaves out: "559b447" (max_loras 8, max_cpu_loras 100, router policy consistent_hash) or "8324600" (max_loras 1, no max_cpu_loras, router policy sticky_least_loaded, enable_ep_weight_filter true, output_dir $PRL_OUTPUT_DIR, enable_prompt_tokens_details and enable_scale_out on every engine). Default "559b447", or "8324600" for a file using renderer, enable_return_sampling_mask(_logprobs), fp8_ue8m0_weight_scales, fp8_stochastic_weight_rounding or vllm_plugins ([prime-rl.md](prime-rl.md#after-559b447))',
);
doc(
  ours.vllm_fleet?.unwrap().shape.router_release,
  'Which vllm-router build the launcher provides (the older layout\'s [deployment.router] release): "vllm-router-0.1.17" (the pinned upstream) or "primeintellect-v0.2.1" (PrimeIntellect\'s fork, prime-rl\'s since its PR #3563: sticky_least_loaded, least_loaded and POST /finish_session). Install that build where the launcher finds vllm-router',
  "vllm-router-0.1.17",
);
doc(ours.vllm_fleet?.unwrap().shape.vllm_version, vllmVersion.description!, NEWEST_VLLM_VERSION);

const rl = primeRlLayout.shape;
doc(rl.inference, "The inference settings: the keys of a standalone prime-rl inference file");
doc(rl.deployment, "The RL run's nodes: one node shared by trainer and inference, or separate nodes");
const [rlSingle, rlMulti] = primeRlDeploymentTable.options;
for (const o of [rlSingle, rlMulti]) doc(o.shape.gpus_per_node, "GPUs on each node", 8);
doc(
  rlSingle.shape.num_train_gpus,
  "The trainer's GPUs (not deployed by vllm-fleet; with num_infer_gpus, at most gpus_per_node)",
  1,
);
doc(rlSingle.shape.num_infer_gpus, "Inference GPUs: data_parallel_size = num_infer_gpus / tensor_parallel_size", 1);
doc(rlMulti.shape.num_train_nodes, "Trainer nodes (required; not deployed by vllm-fleet)");
doc(rlMulti.shape.num_infer_nodes, "Inference nodes per replica (default: what [inference.deployment] gives)");
doc(rlMulti.shape.num_infer_replicas, "Copies of the inference island, all behind one router", 1);
doc(rlMulti.shape.nodes_per_fsdp_group, `${IGNORED}: the trainer's`);
doc(rlMulti.shape.orchestrator_on_inference, `${IGNORED}: the orchestrator's placement`, false);
doc(rl.model, "The RL run's model");
const model = rl.model?.unwrap().shape;
doc(model?.name, "Served model when inference.vllm.model is unset (it must agree when both are set)");
doc(model?.vlm, `${IGNORED}: the trainer's`);
doc(rl.env_vars, "Exported for every process of the run, inference included (inference.env_vars over it)", {});
doc(rl.output_dir, "Used as inference.output_dir when that is unset");
doc(rl.dry_run, "Used as inference.dry_run when that is unset", false);
doc(rl.slurm, "Used as inference.slurm when that is unset");
const READ: Partial<Record<(typeof PRIME_RL_IGNORED_TABLES)[number], string>> = {
  trainer:
    "The trainer's settings: enable_router_replay turns on routed experts, model.lora makes the weight broadcast filesystem unless set, tokenizer.chat_template is inference.vllm.chat_template when that and [tokenizer]'s are unset; the rest is ignored",
  tokenizer: "Its chat_template is inference.vllm.chat_template when that is unset; the rest is ignored",
  weight_broadcast:
    'Its type picks the engines\' worker extension, over inference.weight_broadcast: "nccl" unless set, or "filesystem" when the trainer trains LoRA',
};
for (const key of PRIME_RL_IGNORED_TABLES)
  doc(
    (rl as Record<string, z.ZodType>)[key],
    READ[key] ?? `${IGNORED}: the trainer's, orchestrator's or launcher's settings`,
  );

const [vllmRouter, llmdRouter] = primeRouterTable.options;
doc(vllmRouter.shape.policy, "vllm-router's load-balancing policy", "consistent_hash");
doc(
  vllmRouter.shape.request_timeout_secs,
  "Seconds vllm-router lets one request run, a streamed completion included (--request-timeout-secs; prime-rl default 14400). Unset: 14400 in a file read as prime-rl 8324600 ([vllm_fleet] prime_rl_commit), otherwise the router's own 1800, as prime-rl 559b447 passed none",
);
doc(llmdRouter.shape.scorers, "Base scorer weights for every profile of llm-d's EPP");
doc(llmdRouter.shape.prefill_scorer_overrides, "Prefill profile weights over scorers (P/D)");
doc(llmdRouter.shape.decode_scorer_overrides, "Decode profile weights over scorers (P/D)");
doc(llmdRouter.shape.non_cached_tokens, "Fewer prompt tokens not in the prefix cache than this: decode only (P/D)");
doc(llmdRouter.shape.decode_sidecar_port, "pd-sidecar port on decode nodes (on Kubernetes the prefill port)");

// [vllm_fleet.<kind>]: each target's table where prime-rl has one of that name (target-part.ts primeFleetTable).
const fleetTables = ours.vllm_fleet?.unwrap().shape as Record<string, z.ZodType>;
for (const part of TARGET_PARTS) if (part.primeFleetTable) doc(fleetTables[part.kind], part.primeFleetDescription!);

// prime-rl's SFT file: [inference] serves the online evals of its [eval] (configs/sft.py).
const sft = primeSftLayout.shape;
doc(sft.inference, "The online evals' inference: the keys of a standalone prime-rl inference file (needs [eval])");
doc(sft.deployment, "The SFT run's nodes: the evals' inference on the trainer's node, or on nodes of its own");
const [sftSingle, sftMulti] = primeSftDeploymentTable.options;
for (const o of [sftSingle, sftMulti]) doc(o.shape.gpus_per_node, "GPUs on each node", 8);
doc(sftSingle.shape.num_train_gpus, "The trainer's GPUs (not deployed by vllm-fleet)", 1);
doc(sftSingle.shape.num_infer_gpus, "Inference GPUs on the trainer's node", 1);
doc(sftSingle.shape.num_eval_gpus, "Another name for num_infer_gpus (set one of them)");
doc(sftMulti.shape.num_train_nodes, `${IGNORED}: the trainer's nodes (prime-rl default 2)`);
doc(
  sftMulti.shape.num_infer_nodes,
  "Inference nodes of the evals' own job, each filled with gpus_per_node / tp ranks behind one router (at least 1; prime-rl default 0, no evals)",
);
doc(sftMulti.shape.num_eval_nodes, "Another name for num_infer_nodes (set one of them)");
doc(sftMulti.shape.nodes_per_fsdp_group, `${IGNORED}: the trainer's`);
doc(sftMulti.shape.num_train_gpus, `${IGNORED}: prime-rl drops it from a multi_node deployment`);
doc(sftMulti.shape.num_infer_gpus, `${IGNORED}: prime-rl drops it from a multi_node deployment`);
doc(
  sft.model,
  "The trainer's model: its name is served (inference.vllm.model must agree), its lora turns LoRA on for inference; the rest is ignored",
);
doc(sft.model?.unwrap().shape.name, "Served model when inference.vllm.model is unset");
doc(sft.env_vars, "Exported for every process of the run, inference included (inference.env_vars over it)", {});
doc(sft.output_dir, "Used as inference.output_dir when that is unset");
doc(sft.slurm, "Used as inference.slurm when that is unset");
doc(sft.dry_run, "Used as inference.dry_run when that is unset", false);
for (const key of PRIME_SFT_IGNORED_TABLES)
  doc(
    (sft as Record<string, z.ZodType>)[key],
    key === "weight_broadcast"
      ? 'Its type picks the engines\' worker extension, over inference.weight_broadcast: "nccl" unless set, or "filesystem" when the model trains LoRA'
      : key === "eval"
        ? "The online evals (required with [inference]); otherwise ignored"
        : `${IGNORED}: the SFT trainer's and its evals' settings`,
  );
