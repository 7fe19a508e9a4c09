import { z } from "zod";
import { inferenceShape, inferenceTable } from "./inference";
import { PRIME_RL_IGNORED_TABLES } from "./prime";
import { count, filePath, modelId, outputDir, SERVICE_NAME, table } from "./primitives";
import { serviceTargetTables, targetTables } from "../target-registry";
import { closest, didYouMean } from "../suggest";

/** The target keys: every registered target's table (target-registry.ts), at the root of both layouts. */
export const targetShape = {
  ...targetTables(),
  /** Or slurm.output_dir; unset, the plan uses vllm-fleet/<job name> (components/slurm/sbatch.ts fleetDir). */
  output_dir: outputDir
    .optional()
    .describe(
      "Where scripts, logs and endpoints.json go on the cluster (default vllm-fleet/<job_name>-<Pulumi stack>, under the login user's home)",
    ),
  dry_run: z.boolean().default(false).describe("Render and upload the job script without submitting it"),
};

/** Read where the program runs (not on the cluster), so a relative path is relative to the stack file. */
const catalogShape = {
  model_catalog: filePath
    .optional()
    .describe(
      "A model catalog (YAML with `models:` keyed by Hugging Face id) merged over the built-in one; a relative path is relative to this stack file",
    ),
};

/**
 * The standalone layout: `[model]`, `[parallel]`, `[deployment]`, `[slurm]`, `[server]` at the root,
 * as prime-rl's standalone inference configs were before its pass-through `[vllm]` table (PR #3202).
 */
export const standaloneLayout = table({ ...inferenceShape, ...targetShape, ...catalogShape });

/** Top-level RL `[deployment]`: island count; trainer keys are accepted for RL configs pasted whole. */
export const rlDeploymentTable = table({
  type: z.enum(["single_node", "multi_node"]).optional(),
  num_train_nodes: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe("Trainer nodes (informational: trainers are not deployed here)"),
  num_infer_nodes: count.optional().describe("Nodes per inference island; must match [inference.deployment] when set"),
  num_infer_replicas: count.default(1).describe("Number of inference islands, each behind its own router"),
  gpus_per_node: z
    .number()
    .int()
    .min(1)
    .max(64)
    .optional()
    .describe("GPUs on each node; sizes the island's nodes when [inference.deployment] leaves it unset"),
});

/**
 * prime-rl's RL tables a whole RL file in this layout carries (prime-rl's docs/inference.md put [orchestrator]
 * and [trainer] beside [inference] model = "..."): accepted, listed as ignored, never read. The
 * same list as prime-rl's layout accepts (schema/prime.ts PRIME_RL_IGNORED_TABLES), less [trainer],
 * whose enable_router_replay this layout reads.
 */
export const RL_PASSENGERS = PRIME_RL_IGNORED_TABLES.filter(
  (k): k is Exclude<(typeof PRIME_RL_IGNORED_TABLES)[number], "trainer"> => k !== "trainer",
);

/**
 * The RL-embedded layout, as in a prime-rl RL config: inference under `[inference]`, the island
 * multiplier in top-level `[deployment]` (prime-rl's docs/inference.md, "P/D Disaggregation").
 */
export const rlLayout = table({
  inference: inferenceTable,
  deployment: rlDeploymentTable.optional(),
  model: table({ name: modelId.describe("Hugging Face model id or path of the trained model") })
    .optional()
    .describe("RL model table; its name is served when [inference] names none"),
  // Its other keys are the trainer's, accepted and ignored (normalise.ts olderRlIgnored).
  trainer: z
    .looseObject({
      enable_router_replay: z
        .boolean()
        .default(false)
        .describe("Router replay: turns on enable_return_routed_experts (prime-rl's auto_setup_router_replay)"),
    })
    // A near miss of the one key read is a typo, not a trainer setting.
    .superRefine((t, ctx) => {
      for (const k of Object.keys(t))
        if (k !== "enable_router_replay" && closest(k, ["enable_router_replay"]))
          ctx.addIssue({
            code: "custom",
            path: [k],
            message: `unknown key "${k}"${didYouMean(k, ["enable_router_replay"])}`,
          });
    })
    .optional()
    .describe("The trainer's settings (an RL file pasted whole): enable_router_replay is read, the rest ignored"),
  ...Object.fromEntries(
    RL_PASSENGERS.map((k) => [k, z.unknown().optional().describe("prime-rl's RL setting: accepted and ignored")]),
  ),
  ...targetShape,
  ...catalogShape,
});

/**
 * One service of a file with [services] (components/config/services.ts), as the standalone layout
 * writes it, with what its job asks SLURM for. (A service in prime-rl's layout is checked by the
 * loader; editors get the older layout's keys here.)
 */
export const serviceTable = table({ ...inferenceShape, ...serviceTargetTables() });

/** A stack of several services: each `[services.<name>]` a model's inference settings, the target and output shared. */
export const servicesLayout = table({
  services: z
    .record(z.string().regex(SERVICE_NAME), serviceTable)
    .describe("The stack's services by name: a policy beside its judge, each with its own model, shape and router"),
  ...targetShape,
  ...catalogShape,
});

/** Either layout, or a stack of services; editors get this as the stack file's JSON Schema. */
export const stackFileSchema = z.union([standaloneLayout, rlLayout, servicesLayout]);

/** Either layout as a valid file writes it (before the schema's defaults). */
export type StandaloneLayout = z.input<typeof standaloneLayout>;
export type RlLayout = z.input<typeof rlLayout>;
