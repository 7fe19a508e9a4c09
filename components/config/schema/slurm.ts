import { z } from "zod";
import {
  absolutePath,
  filePath,
  hostlist,
  NOT_AN_OPTION,
  notAnOption,
  outputDir,
  slurmMemory,
  slurmName,
  slurmTime,
  table,
  text,
  typeChoices,
} from "./primitives";

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

/** `[slurm]`: submit one sbatch job per island through the login node. */
export const slurmTable = table({
  job_name: slurmName.default("vllm-fleet").describe("Base job name; each island's job is <job_name>-<stack>-i<k>"),
  partition: slurmName.optional(),
  account: slurmName.optional(),
  qos: slurmName.optional(),
  time: slurmTime.optional().describe("Wall-clock limit, e.g. 04:00:00"),
  nodelist: hostlist.optional(),
  exclude: hostlist.optional(),
  constraint: z
    .string()
    .regex(/^[A-Za-z0-9_.&|\[\]()*:,-]+$/, "must be a SLURM constraint expression such as h100|a100")
    .optional(),
  /** Another spelling of the top-level output_dir (normalise.ts toCanonicalInput carries it there). */
  output_dir: outputDir
    .optional()
    .describe("Logs, scripts and endpoints.json; relative paths are under the login user's home"),
  cache_dir: cacheDir,
  exclusive: z
    .boolean()
    .optional()
    .describe(
      "Request whole nodes (default: true when every replica fills its nodes' GPUs, else false so the rest of a node stays schedulable)",
    ),
  mem: slurmMemory
    .optional()
    .describe("Memory per node (sbatch --mem), e.g. 64G or 500000M; 0 asks for all of it (default: the partition's)"),
  cpus_per_task: z
    .number()
    .int()
    .min(1)
    .max(4096)
    .optional()
    .describe("CPUs per node for its one task (sbatch --cpus-per-task; default: the partition's)"),
  co_schedule: z
    .boolean()
    .optional()
    .describe(
      "Submit every island of every service as one heterogeneous job, started only once all of it is allocated (default: true with several [services], else false)",
    ),
  gres: z
    .string()
    .regex(/^[A-Za-z0-9_:,]+$/, "must be a GRES spec such as gpu:8 or gpu:h100:8")
    .optional()
    .describe("Override the per-node GRES request (default gpu:<gpus_per_node>)"),
  pending_timeout: z
    .number()
    .int()
    .min(10)
    .max(7 * 86400)
    .default(3600)
    .describe("Seconds to wait for the job to start running (default 3600)"),
  ready_timeout: z
    .number()
    .int()
    .min(10)
    .max(7 * 86400)
    .default(3600)
    .describe("Seconds to wait for every endpoint to serve once running (default 3600)"),
  launcher: launcherTable.prefault({}),
});

/**
 * `[services.<name>.slurm]`: what one service's job (or hetjob component) asks the scheduler for,
 * over the file's `[slurm]`. The rest of `[slurm]` (login, launcher, timeouts, job name) is the stack's.
 */
export const serviceSlurmTable = table({
  partition: slurmTable.shape.partition,
  account: slurmTable.shape.account,
  qos: slurmTable.shape.qos,
  time: slurmTable.shape.time,
  nodelist: slurmTable.shape.nodelist,
  exclude: slurmTable.shape.exclude,
  constraint: slurmTable.shape.constraint,
  exclusive: slurmTable.shape.exclusive,
  gres: slurmTable.shape.gres,
  mem: slurmTable.shape.mem,
  cpus_per_task: slurmTable.shape.cpus_per_task,
});
