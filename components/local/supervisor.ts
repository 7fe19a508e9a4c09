import { secretOrder, type SecretName } from "../credentials";
import { activityView } from "../host/activity";
import { needsScratch, nodeLines, setupLines } from "../host/processes";
import { cacheBase, cacheSetupLines, engineProgram } from "../host/cache";
import type { DeploymentPlan, IslandPlan } from "../plan/deployment-plan";
import { renderTemplate } from "../templates";
import { RUN_ENDED_FILE } from "./held-query";
import { localSettings } from "./settings";

/**
 * Scratch directories under /tmp, short as Unix socket paths must be (vLLM puts its IPC sockets
 * under VLLM_RPC_BASE_PATH), this run's own: the supervisor's pid is unique while it runs.
 */
const SCRATCH_BASE = 'FLEET_SCRATCH="/tmp/vllm-fleet-$(id -u)-$$"';

/** Where node k's GPUs start among the fleet's: after the GPUs of the nodes before it. */
export function gpuOffsets(island: IslandPlan): number[] {
  let next = 0;
  return island.nodes.map((n) => {
    const offset = next;
    next += n.gpusUsed;
    return offset;
  });
}

/** The GPUs an island's engines take on this machine (none on the CPU build). */
export function gpusNeeded(plan: DeploymentPlan, island: IslandPlan): number {
  if (localSettings(plan).device === "cpu") return 0;
  return island.nodes.reduce((s, n) => s + n.gpusUsed, 0);
}

/**
 * The supervisor script of one island: every node of the plan is this machine, so it starts all
 * the island's processes (as SLURM's launch body does per node), each with its own log under its
 * node's folder, and stops them all when the first one exits.
 */
export function renderSupervisor(
  plan: DeploymentPlan,
  island: IslandPlan,
  configuredSecrets: readonly SecretName[] = [],
): string {
  const t = localSettings(plan, "renderSupervisor");
  const secrets = secretOrder(configuredSecrets);
  const offsets = gpuOffsets(island);
  return renderTemplate("local/supervisor.sh.mustache", {
    stack: plan.stack,
    island: island.name,
    summary:
      `${island.nodes.length} node(s) of the plan, ${island.engines.length} engine(s), model ${plan.model}`.replace(
        /\n/g,
        " ",
      ),
    hasSecrets: secrets.length > 0,
    setup: [
      ...setupLines(t.launcher, plan.kvTiers !== null, secrets, needsScratch(island) ? SCRATCH_BASE : undefined),
      ...cacheSetupLines(island, cacheBase(t.cache_dir, plan.outputDir), "local.cache_dir", [], engineProgram(island)),
    ],
    cpu: t.device === "cpu",
    nodes: island.nodes.map((n) => ({
      index: n.index,
      gpuOffset: offsets[n.index],
      lines: nodeLines(island, n.index, secrets, { wrap: [], apiKeyInEnv: true, cache: true }),
    })),
    // The keeper (templates/host/keeper.sh.mustache) counts restarts with these.
    ...plan.restart,
    ...activityView(island),
    endedFile: RUN_ENDED_FILE,
  });
}
