import { z } from "zod";
import { GPU_TYPE_NAMES } from "../gpu-types";
import { count, envVars, port, table, typeChoices } from "./primitives";
import { routerTable } from "./router";

const common = {
  /** In the RL layout, AUTO_SETUP "RL [deployment] gpus_per_node sizes the island's nodes" replaces this default. */
  gpus_per_node: z.number().int().min(1).max(64).default(8).describe("GPUs on each node (default 8)"),
  gpu_type: z
    .enum(GPU_TYPE_NAMES, {
      error: () => `must be one of ${GPU_TYPE_NAMES.join(", ")} (or set gpu_memory_gib instead)`,
    })
    .optional()
    .describe(
      "The GPU board, for the GPU-memory check (default: the type slurm.gres or the Kubernetes node selector names, else an assumed 80 GB H100)",
    ),
  gpu_memory_gib: z
    .number()
    .gt(0, "must be > 0")
    .max(4096, "must be at most 4096")
    .optional()
    .describe("Memory of one GPU in GiB, as nvidia-smi reports it; overrides gpu_type's table value"),
  router: routerTable.prefault({}),
};

/** `type` may be omitted: this is the table's default shape. */
export const singleNodeDeployment = table({ type: z.literal("single_node").default("single_node"), ...common });

export const multiNodeDeployment = table({
  type: z.literal("multi_node"),
  num_nodes: count
    .default(2)
    .describe("Nodes: one replica each, or one wide-EP replica across all with enable_expert_parallel"),
  ...common,
});

export const disaggregatedDeployment = table({
  type: z.literal("disaggregated"),
  num_prefill_nodes: count.default(1).describe("Nodes per prefill replica"),
  num_decode_nodes: count.default(1).describe("Nodes per decode replica"),
  num_prefill_replicas: count.default(1).describe("Prefill replicas (default 1)"),
  num_decode_replicas: count.default(1).describe("Decode replicas (default 1)"),
  prefill_env_vars: envVars.default({}).describe("Exported on prefill nodes after env_vars"),
  decode_env_vars: envVars.default({}).describe("Exported on decode nodes after env_vars"),
  transfer_backend: z
    .enum(["nixl", "mooncake"])
    .optional()
    .describe(
      "How KV moves from prefill to decode engines: nixl (vLLM's NixlConnector, the only one for vLLM) or, with SGLang, nixl or mooncake (default: each engine's own, nixl for vLLM and mooncake for SGLang)",
    ),
  prefill_port: port.default(8100).describe("Prefill engine port (default 8100)"),
  decode_port: port.default(8200).describe("Decode engine port (default 8200)"),
  ...common,
});

/** `[deployment]`: the shape. `type` defaults to single_node when omitted. */
export const deploymentTable = z.discriminatedUnion(
  "type",
  [singleNodeDeployment, multiNodeDeployment, disaggregatedDeployment],
  typeChoices("single_node", "multi_node", "disaggregated"),
);
