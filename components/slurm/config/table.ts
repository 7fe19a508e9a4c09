import { z } from "zod";
import { hostlist, outputDir, slurmMemory, slurmName, slurmTime, table, bare } from "../../config/schema/primitives";
import { cacheDir, launcherTable, readyTimeout } from "../../config/schema/launchers";
import { primeDoc } from "../../config/schema/prime-doc-registry";

/** `[slurm]`: submit one sbatch job per island through the login node. */
export const slurmTable = table({
  job_name: slurmName.default("vllm-fleet").describe("Base job name; each island's job is <job_name>-<stack>-i<k>"),
  partition: slurmName.optional().describe("sbatch --partition (default: the cluster's default partition)"),
  account: slurmName.optional().describe("sbatch --account (default: the user's default account)"),
  qos: slurmName.optional().describe("sbatch --qos (default: the account's default QOS)"),
  time: slurmTime.optional().describe("Wall-clock limit, e.g. 04:00:00"),
  nodelist: hostlist.optional().describe("sbatch --nodelist: nodes the job must use (default: any)"),
  exclude: hostlist.optional().describe("sbatch --exclude: nodes the job must not use (default: none)"),
  constraint: z
    .string()
    .regex(/^[A-Za-z0-9_.&|\[\]()*:,-]+$/, "must be a SLURM constraint expression such as h100|a100")
    .optional()
    .describe("sbatch --constraint, e.g. h100|a100 (default: none)"),
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
  ready_timeout: readyTimeout.describe("Seconds to wait for every endpoint to serve once running (default 3600)"),
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

/**
 * `[vllm_fleet.slurm]`: vllm-fleet's SLURM settings that prime-rl's SlurmConfig has no key for
 * (prime-rl's [slurm] forbids extra keys, and its own sbatch templates run `uv run` in project_dir,
 * which vllm-fleet does not): where the engines' programs live, and the submit/readiness budgets.
 * Merged over the keys vllm-fleet reads from prime-rl's [slurm]; a file with this table and no
 * [kubernetes] targets SLURM.
 */
const { qos, constraint, gres } = slurmTable.shape;
export const primeFleetSlurmTable = table({
  qos,
  constraint,
  gres,
  exclusive: bare(slurmTable.shape.exclusive),
  mem: slurmTable.shape.mem,
  cpus_per_task: slurmTable.shape.cpus_per_task,
  co_schedule: slurmTable.shape.co_schedule,
  cache_dir: slurmTable.shape.cache_dir,
  pending_timeout: bare(slurmTable.shape.pending_timeout),
  ready_timeout: bare(slurmTable.shape.ready_timeout),
  launcher: launcherTable
    .optional()
    .describe(
      "How engines, routers and stores are started on the nodes (as [slurm.launcher] of the seed layout); prime-rl's engine needs its `inference` program there",
    ),
});

const fleetSlurm = primeFleetSlurmTable.shape;
primeDoc(fleetSlurm.qos, "sbatch --qos");
primeDoc(fleetSlurm.constraint, "sbatch --constraint, e.g. h100|a100");
primeDoc(fleetSlurm.gres, "The per-node GRES request (default gpu:<gpus_per_node>)");
primeDoc(fleetSlurm.exclusive, "Request whole nodes", true);
primeDoc(fleetSlurm.pending_timeout, "Seconds to wait for the job to start running", 3600);
primeDoc(fleetSlurm.ready_timeout, "Seconds to wait for every endpoint to serve once running", 3600);
