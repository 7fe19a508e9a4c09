import type { DeploymentPlan, SlurmSettings } from "../plan/deployment-plan";

/** The plan's `[slurm]` settings; `who` names the renderer when a plan for another target reaches it. */
export function slurmSettings(plan: Pick<DeploymentPlan, "settings">, who = "the SLURM target"): SlurmSettings {
  if (plan.settings.kind !== "slurm") throw new Error(`${who} needs a SLURM target`);
  return plan.settings;
}

/**
 * The fewest and the most GPUs any node of the islands uses, scanned once per plan (a plan is not
 * changed once made): every island's script asks, and a scan per island grew with islands squared.
 */
const nodeUsageByIslands = new WeakMap<DeploymentPlan["islands"], { fewest: number; most: number }>();
function nodeUsage(islands: DeploymentPlan["islands"]): { fewest: number; most: number } {
  let usage = nodeUsageByIslands.get(islands);
  if (!usage) {
    usage = { fewest: Infinity, most: 0 };
    for (const island of islands)
      for (const n of island.nodes) {
        usage.fewest = Math.min(usage.fewest, n.gpusUsed);
        usage.most = Math.max(usage.most, n.gpusUsed);
      }
    nodeUsageByIslands.set(islands, usage);
  }
  return usage;
}

/** The most GPUs any node of the plan's islands uses. */
const gpusUsedPerNode = (plan: Pick<DeploymentPlan, "islands">): number => nodeUsage(plan.islands).most;

/**
 * Whether the jobs ask for whole nodes (sbatch --exclusive): `slurm.exclusive` when set, else only
 * when every node's engines use all its GPUs (`deployment.gpus_per_node`). A node that keeps GPUs
 * free is left for other jobs to share.
 */
export function exclusiveNodes(plan: Pick<DeploymentPlan, "settings" | "islands" | "gpusPerNode">): boolean {
  const t = slurmSettings(plan);
  return t.exclusive ?? nodeUsage(plan.islands).fewest >= plan.gpusPerNode;
}

/** The GPUs each node's job asks for: `slurm.gres`, else all of the node's (whole nodes) or those its engines use. */
export function gresRequest(plan: Pick<DeploymentPlan, "settings" | "islands" | "gpusPerNode">): string {
  const t = slurmSettings(plan);
  return t.gres ?? `gpu:${exclusiveNodes(plan) ? plan.gpusPerNode : gpusUsedPerNode(plan)}`;
}
