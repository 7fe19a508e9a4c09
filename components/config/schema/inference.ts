import { z } from "zod";
import { deploymentTable } from "./deployment";
import { modelField, parallelTable } from "./model";
import { offloadTable } from "./offload";
import { envVars, port, table } from "./primitives";
import { restartTable } from "./restart";
import { idleReleaseAfter } from "./idle-release";
import { costTable } from "./cost";
import { serverTable } from "./server";
import { DEFAULT_ENGINE, engineNamesForSchema } from "./engine-names";
import { vllmVersion } from "../../plan/engines/vllm/config/version";

export { ENGINE_NAMES } from "./engine-names";

/** How many `vllm serve` processes a node runs: one for all its DP ranks, or one per DP rank. */
export const engineProcesses = z.enum(["per_node", "per_rank"]);

/**
 * The inference keys shared by both layouts: the root of a standalone stack file, and the
 * `[inference]` table of an RL-embedded one. Every key reaches the canonical config
 * (types.ts FleetConfig) under its own name; the keys without a static default are derived when the
 * file leaves them unset, by the AUTO_SETUP rule named beside them (rules.ts).
 */
export const inferenceShape = {
  engine: z
    .enum(engineNamesForSchema())
    .default(DEFAULT_ENGINE)
    .describe(
      'What serves the model: "vllm" (`vllm serve`) or "sglang" (`python3 -m sglang.launch_server`, behind sglang-router; docs/sglang.md lists what it does not take)',
    ),
  model: modelField.optional(),
  parallel: parallelTable.prefault({}),
  deployment: deploymentTable.prefault({}),
  kv_cache_offload: offloadTable.optional(),
  /** prime-rl's layout: [vllm_fleet] vllm_version (schema/prime.ts). */
  vllm_version: vllmVersion,
  vllm_extra: z
    .record(z.string(), z.unknown())
    .default({})
    .describe("Extra `vllm serve` flags by snake_case name, checked against the manifest of vllm_version"),
  sglang_extra: z
    .record(z.string(), z.unknown())
    .default({})
    .describe('Extra SGLang server flags by snake_case name (engine = "sglang"), checked against SGLang\'s manifest'),
  env_vars: envVars.default({}).describe("Exported for every inference process"),
  server: serverTable.prefault({}),
  restart: restartTable.prefault({}),
  idle_release_after: idleReleaseAfter,
  cost: costTable.prefault({}),
  /** Derived: AUTO_SETUP "engines behind a router listen on server.port + 100". */
  backend_port: port.optional().describe("Engine port behind a router (default server.port + 100)"),
  /** Also set by the model catalog's launch value, and AUTO_SETUP "P/D turns on expert parallelism". */
  enable_expert_parallel: z
    .boolean()
    .default(false)
    .describe(
      "Expert parallelism for MoE models; with multi_node, one wide-EP replica spans every node (default false; true for P/D with vLLM)",
    ),
  enable_dbo: z.boolean().default(false).describe("vLLM's dual batch overlap of compute and all2all (default false)"),
  enable_eplb: z
    .boolean()
    .default(false)
    .describe(
      "Expert-parallel load balancing: experts move between ranks by load; needs enable_expert_parallel (default false)",
    ),
  /** The RL layout's trainer.enable_router_replay turns it on (normalise.ts toCanonicalInput). */
  enable_return_routed_experts: z
    .boolean()
    .default(false)
    .describe("Router replay: return routed experts with every response"),
  enable_lora: z.boolean().default(false).describe("Serve LoRA adapters beside the base model (default false)"),
  max_loras: z
    .number()
    .int()
    .min(1)
    .max(4096)
    .default(8)
    .describe("LoRA adapters in one batch, with enable_lora (default 8)"),
  /** AUTO_SETUP "LoRA rank rounds up to one vLLM accepts". */
  max_lora_rank: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe("Largest LoRA rank served, rounded up to a rank vLLM accepts (default: vLLM's)"),
  gpu_memory_utilization: z
    .number()
    .gt(0, "must be > 0")
    .max(1, "must be <= 1")
    .default(0.9)
    .describe("Share of each GPU's memory the engine may take, weights and KV cache (default 0.9)"),
  /** Derived: AUTO_SETUP "KV offload turns on prefix caching"; otherwise unset means vLLM's default. */
  enable_prefix_caching: z
    .boolean()
    .optional()
    .describe("Reuse the KV cache of shared prompt prefixes (default: on with kv_cache_offload, else the engine's)"),
  /** prime-rl's layout: [vllm_fleet] engine_processes (schema/prime.ts). AUTO_SETUP "Kubernetes runs one engine process per node". */
  engine_processes: engineProcesses
    .default("per_node")
    .describe(
      '"per_node": one engine process per node, serving all its DP ranks (vLLM\'s internal or hybrid load balancing). "per_rank" (prime-rl\'s topology): on SLURM, multi_node and disaggregated deployments (and every island of an RL multi_node run) start one process per DP rank on port + k with its own GPUs, each a router worker; expert-parallel replicas and P/D sub-replicas become external-LB DP groups. single_node deployments and Kubernetes always run one per node',
    ),
};

/** The inference keys as one table (the RL layout's `[inference]`); its output is the canonical inference config. */
export const inferenceTable = table(inferenceShape);
