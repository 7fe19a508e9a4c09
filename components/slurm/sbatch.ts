import type { DeploymentPlan, IslandPlan, SlurmSettings } from "../plan/deployment-plan";
import { activityView } from "../host/activity";
import { SECRETS, secretOrder, type SecretName } from "../credentials";
import { heredocDelimiter, shq } from "../shell";
import { needsScratch, nodeLines, setupLines } from "../host/processes";
import { cacheBase, cacheSetupLines, engineProgram } from "../host/cache";
import { renderTemplate } from "../templates";
import { exclusiveNodes, gresRequest, slurmSettings } from "./settings";
import { islandName } from "../plan/naming";
import { engineNamed } from "../plan/engines";

/** Programs the pre-launch cleanup kills by exact name (one pgrep: a single pass over the process table). */
const PROGRAMS = ["vllm", "vllm-router", "epp", "envoy", "pd-sidecar", "mooncake_master", "mooncake_client"];

/**
 * Scratch directories on the node's own /tmp, as prime-rl's _launch_rank.sh.j2 makes them
 * (/tmp/vllm-rpc-$USER-$SLURM_JOB_ID-<port>): node-local and short, as Unix socket paths must be
 * (vLLM puts its IPC sockets under VLLM_RPC_BASE_PATH), and cleared by the next job's cleanup.
 */
const SCRATCH_BASE = 'FLEET_SCRATCH="/tmp/vllm-fleet-$(id -u)-$SLURM_JOB_ID"';

/** The fleet's part of every job name: [slurm] job_name and the Pulumi stack (once when they are the same). */
export function jobBase(plan: DeploymentPlan): string {
  const target = slurmSettings(plan);
  const stack = plan.stack.replace(/[^A-Za-z0-9._-]/g, "-");
  return target.job_name === stack ? stack : `${target.job_name}-${stack}`;
}

/** The unique SLURM job name of an island: adoption and scancel find the job by it. */
export function jobName(plan: DeploymentPlan, island: number): string {
  return islandName(jobBase(plan), plan.service, island);
}

/**
 * The fleet's folder on the cluster: output_dir as set, else vllm-fleet/<job name without -i<k>>.
 * The default carries the Pulumi stack, so two stacks of one stack file (dev, prod) never share a
 * folder and never remove each other's endpoints.json.
 */
export function fleetDir(plan: DeploymentPlan): string {
  return plan.outputDir ?? `vllm-fleet/${jobBase(plan)}`;
}

/** Where an island keeps its script, logs and endpoints.json (relative paths: under the login home). */
export function islandDir(plan: DeploymentPlan, island: IslandPlan): string {
  return `${fleetDir(plan).replace(/\/+$/, "")}/${island.name}`;
}

/**
 * One island's #SBATCH directives. A co-scheduled island (hetjob.ts) is a component of a job with
 * another name, whose batch output only the first component names (`output` null: none).
 */
export function directives(
  plan: DeploymentPlan,
  island: IslandPlan,
  as: { jobName: string; output: string | null } = {
    jobName: jobName(plan, island.index),
    output: `${islandDir(plan, island)}/slurm-%j.out`,
  },
): string[] {
  const t = slurmSettings(plan);
  const d = [
    `--job-name=${as.jobName}`,
    `--nodes=${island.nodes.length}`,
    "--ntasks-per-node=1",
    `--gres=${gresRequest(plan)}`,
    ...(as.output === null ? [] : [`--output=${as.output}`]),
    // A fleet whose node failed must end and give its GPUs back: a requeued copy would come up on
    // other nodes, behind URLs the stack outputs no longer hold.
    "--no-requeue",
  ];
  if (exclusiveNodes(plan)) d.push("--exclusive");
  for (const key of ["partition", "account", "qos", "time", "nodelist", "exclude", "constraint"] as const) {
    if (t[key]) d.push(`--${key}=${t[key]}`);
  }
  if (t.mem !== undefined) d.push(`--mem=${t.mem}`);
  if (t.cpus_per_task !== undefined) d.push(`--cpus-per-task=${t.cpus_per_task}`);
  return d;
}

export function launcherWrap(t: SlurmSettings): string[] {
  if (t.launcher.type !== "apptainer") return [];
  const binds = t.launcher.binds.length ? ["--bind", shq(t.launcher.binds.join(","))] : [];
  return ["apptainer", "exec", "--nv", ...binds, shq(t.launcher.image)];
}

/** The sbatch script of one island, and the two bodies it feeds to srun (checked on their own). */
export interface IslandScript {
  script: string;
  launchBody: string;
  cleanupBody: string;
}

/** What srun runs on an island's nodes: the launch and cleanup bodies, and srun's container options. */
export function islandBodies(
  plan: DeploymentPlan,
  island: IslandPlan,
  secrets: SecretName[],
): { launchBody: string; cleanupBody: string; srunExtra: string[] } {
  const t = slurmSettings(plan, "renderIslandScript");
  const wrap = launcherWrap(t);
  const launchBody = renderTemplate("slurm/launch.sh.mustache", {
    setup: [
      ...setupLines(t.launcher, plan.kvTiers !== null, secrets, needsScratch(island) ? SCRATCH_BASE : undefined),
      ...cacheSetupLines(
        island,
        cacheBase(t.cache_dir, plan.outputDir),
        "slurm.cache_dir",
        wrap,
        engineProgram(island),
      ),
    ],
    nodes: island.nodes.map((n) => ({
      index: n.index,
      lines: nodeLines(island, n.index, secrets, { wrap, cache: true }),
    })),
    // The keeper (templates/host/keeper.sh.mustache) counts restarts with these.
    ...plan.restart,
    ...activityView(island),
  }).trimEnd();
  // Each engine's own process name (Engine.processName, e.g. prime-rl's `inference` console script),
  // cleaned up only where the plan runs it.
  const engineNames = island.engines.flatMap((e) => engineNamed(e.engine).processName ?? []);
  // LMCache's server retitles itself `lmcache` (its console script): a name other jobs may run too.
  const programs = [...new Set([...PROGRAMS, ...engineNames, ...(island.lmcache ? ["lmcache"] : [])])];
  const cleanupBody = renderTemplate("slurm/cleanup.sh.mustache", { programs: programs.join("|") }).trimEnd();
  const srunExtra =
    t.launcher.type === "pyxis"
      ? [
          `--container-image=${shq(t.launcher.image)}`,
          ...(t.launcher.mounts.length ? [`--container-mounts=${shq(t.launcher.mounts.join(","))}`] : []),
        ]
      : [];
  return { launchBody, cleanupBody, srunExtra };
}

/**
 * What an island's sruns need in a batch script (its own job's or a hetjob component's): its
 * folder and node count, the cleanup on whole nodes, and the launch body, each with its heredoc
 * delimiter.
 */
export function srunView(plan: DeploymentPlan, island: IslandPlan, secrets: SecretName[]) {
  const { launchBody, cleanupBody, srunExtra } = islandBodies(plan, island, secrets);
  return {
    view: {
      islandDir: shq(islandDir(plan, island)),
      nodeCount: island.nodes.length,
      cleanup: exclusiveNodes(plan),
      cleanupBody,
      cleanupDelimiter: heredocDelimiter("FLEET_CLEANUP", cleanupBody),
      srunExtra,
      launchBody,
      launchDelimiter: heredocDelimiter("FLEET_LAUNCH", launchBody),
    },
    launchBody,
    cleanupBody,
  };
}

/** The sbatch script of one island: the whole island is one gang-scheduled job. */
export function renderIslandScript(
  plan: DeploymentPlan,
  island: IslandPlan,
  configuredSecrets: readonly SecretName[] = [],
): IslandScript {
  const secrets = secretOrder(configuredSecrets);
  const { view, launchBody, cleanupBody } = srunView(plan, island, secrets);
  const script = renderTemplate("slurm/island.sbatch.mustache", {
    stack: plan.stack,
    // Nothing here may depend on the island count: the script's hash replaces the island's job, and
    // adding an island must leave the others running (issue 25).
    island: island.name,
    summary: `${island.nodes.length} node(s), ${island.engines.length} engine(s), model ${plan.model}`.replace(
      /\n/g,
      " ",
    ),
    directives: directives(plan, island),
    secretFiles: secrets.map((s) => SECRETS[s].file),
    hasSecrets: secrets.length > 0,
    ...view,
  });
  return { script, launchBody, cleanupBody };
}
