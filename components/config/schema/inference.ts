import { z } from "zod";
import { deploymentTable } from "./deployment";
import { modelField, parallelTable } from "./model";
import { offloadTable } from "./offload";
import { envVars, port } from "./primitives";
import { serverTable } from "./server";

/**
 * The inference keys shared by both layouts: the root of a standalone stack file, and the
 * `[inference]` table of an RL-embedded one (seed 001).
 */
export const inferenceShape = {
  model: modelField.optional(),
  parallel: parallelTable.optional(),
  deployment: deploymentTable.optional(),
  kv_cache_offload: offloadTable.optional(),
  vllm_extra: z.record(z.string(), z.unknown()).optional().describe("Extra `vllm serve` flags by snake_case name, checked against the vLLM manifest"),
  env_vars: envVars.optional().describe("Exported for every inference process"),
  server: serverTable.optional(),
  backend_port: port.optional().describe("Engine port behind a router (default server.port + 100)"),
  enable_expert_parallel: z.boolean().optional(),
  enable_dbo: z.boolean().optional(),
  enable_eplb: z.boolean().optional(),
  enable_return_routed_experts: z.boolean().optional().describe("Router replay: return routed experts with every response"),
  enable_lora: z.boolean().optional(),
  max_loras: z.number().int().min(1).max(4096).optional(),
  max_lora_rank: z.number().int().min(1).optional(),
  gpu_memory_utilization: z.number().gt(0, "must be > 0").max(1, "must be <= 1").optional(),
  enable_prefix_caching: z.boolean().optional(),
};
