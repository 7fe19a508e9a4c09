import { z } from "zod";
import { table, typeChoices } from "../../config/schema/primitives";
import { cacheDir, plainLauncher, readyTimeout, venvLauncher } from "../../config/schema/launchers";

/** How the engine, router and store programs are found on this machine: on PATH (or bin_dir), or in a venv. */
export const localLauncherTable = z.discriminatedUnion(
  "type",
  [plainLauncher, venvLauncher],
  typeChoices("vllm", "venv"),
);

/** A GPU index as `nvidia-smi -L` and CUDA_VISIBLE_DEVICES number them. */
const gpuIndex = z.number().int().min(0).max(1023);

/** `[local]`: run the fleet's processes on the machine that runs Pulumi (prime-rl's default, without [slurm]). */
export const localTable = table({
  device: z
    .enum(["gpu", "cpu"])
    .default("gpu")
    .describe(
      'What the engines run on: "gpu" (each engine gets its CUDA_VISIBLE_DEVICES slice) or "cpu" (the engine\'s CPU build on a machine without GPUs: vLLM\'s, or SGLang\'s with sglang_extra.device = "cpu"; no GPU is counted or assigned). Default "gpu"',
    ),
  gpus: z
    .array(gpuIndex)
    .refine((a) => new Set(a).size === a.length, "must not name a GPU twice")
    .optional()
    .describe(
      "The GPUs the fleet may use, as nvidia-smi -L numbers them, e.g. [0, 1, 2, 3] (default: every GPU nvidia-smi -L lists when the fleet starts)",
    ),
  ready_timeout: readyTimeout.describe(
    "Seconds to wait for every endpoint to serve once the processes started (default 3600)",
  ),
  cache_dir: cacheDir.describe(
    "Folder kept across deployments and shared by every stack that names it: the engines' compile cache (VLLM_CACHE_ROOT) in one folder per model, engine version (found when the fleet starts) and parallel layout below it, so another engine version never reuses one, and their model downloads (HF_HOME) in its huggingface folder; relative paths are under the user's home (default: <output_dir>/cache, or vllm-fleet/cache without output_dir)",
  ),
  launcher: localLauncherTable
    .prefault({})
    .describe("How the engines, routers and stores are found on this machine: on PATH or bin_dir, or in a venv"),
});
