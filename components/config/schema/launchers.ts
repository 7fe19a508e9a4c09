import { z } from "zod";
import { absolutePath, filePath, NOT_AN_OPTION, notAnOption, table, text, typeChoices } from "./primitives";

/*
 * How the targets that start the fleet's processes themselves (SLURM's nodes, this machine) find the
 * engine, router and store programs, and where they keep caches: shared by those targets' tables.
 */

/** One entry of a list the launcher joins with commas (--bind, --container-mounts): a comma would split it. */
const listEntry = (flag: string) =>
  text.refine(
    (s) => !s.includes(","),
    `must not contain ',' (${flag} takes a comma-separated list, so it would become two entries)`,
  );

/**
 * Where the engines keep vLLM's compile cache and the Hugging Face downloads across deployments
 * (components/host/cache.ts): one folder per model, engine version and parallel layout below it.
 * The launch body assigns it in a double-quoted shell word, so only plain path characters are taken.
 */
export const cacheDir = filePath
  .refine(
    (s) => /^[A-Za-z0-9._/+,:@=~-]+$/.test(s) && !s.startsWith("~"),
    "may only contain letters, digits and . _ - / + , : @ = ~ (not a leading ~: a relative path is under the home already)",
  )
  .refine((s) => !s.split("/").includes(".."), "must not contain a .. component")
  .optional()
  .describe(
    "Folder on storage every node sees, kept across deployments and shared by every stack that names it: the engines' compile cache (VLLM_CACHE_ROOT) in one folder per model, engine version (found on the node) and parallel layout below it, so another engine version never reuses one, and their model downloads (HF_HOME) in its huggingface folder; relative paths are under the user's home (default: <output_dir>/cache, or vllm-fleet/cache without output_dir)",
  );

/** `type` may be omitted: this is the table's default launcher. */
export const plainLauncher = table({
  type: z.literal("vllm").default("vllm"),
  bin_dir: absolutePath
    .refine((s) => !s.includes(":"), "must not contain ':' (it goes on PATH, where ':' separates directories)")
    .optional()
    .describe("Directory holding vllm, vllm-router, ... (default: whatever is on PATH)"),
});
export const venvLauncher = table({
  type: z.literal("venv"),
  path: filePath.describe("Python virtual environment to activate on every node"),
});
const apptainerLauncher = table({
  type: z.literal("apptainer"),
  image: filePath.refine(notAnOption, NOT_AN_OPTION).describe("Apptainer/Singularity image (.sif) or URI"),
  binds: z
    .array(listEntry("apptainer --bind").refine(notAnOption, NOT_AN_OPTION))
    .default([])
    .describe("Extra --bind specs, e.g. /scratch:/scratch"),
});
const pyxisLauncher = table({
  type: z.literal("pyxis"),
  image: text.describe("Container image for srun --container-image"),
  mounts: z
    .array(listEntry("srun --container-mounts"))
    .default([])
    .describe("--container-mounts entries, e.g. /scratch:/scratch"),
});

/** How the engine, router and store binaries are launched on the nodes. */
export const launcherTable = z.discriminatedUnion(
  "type",
  [plainLauncher, venvLauncher, apptainerLauncher, pyxisLauncher],
  typeChoices("vllm", "venv", "apptainer", "pyxis"),
);

/** Seconds to wait for every endpoint to serve once the processes started. */
export const readyTimeout = z
  .number()
  .int()
  .min(10)
  .max(7 * 86400)
  .default(3600);
