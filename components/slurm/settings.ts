import type { DeploymentPlan, SlurmSettings } from "../plan/deployment-plan";

/** The plan's `[slurm]` settings; `who` names the renderer when a plan for another target reaches it. */
export function slurmSettings(plan: Pick<DeploymentPlan, "settings">, who = "the SLURM target"): SlurmSettings {
  if (plan.settings.kind !== "slurm") throw new Error(`${who} needs a SLURM target`);
  return plan.settings;
}

/** The most GPUs any node of the plan's islands uses. */
const gpusUsedPerNode = (plan: Pick<DeploymentPlan, "islands">): number =>
  Math.max(0, ...plan.islands.flatMap((i) => i.nodes.map((n) => n.gpusUsed)));

/**
 * Whether the jobs ask for whole nodes (sbatch --exclusive): `slurm.exclusive` when set, else only
 * when every node's engines use all its GPUs (`deployment.gpus_per_node`). A node that keeps GPUs
 * free is left for other jobs to share.
 */
export function exclusiveNodes(plan: Pick<DeploymentPlan, "settings" | "islands" | "gpusPerNode">): boolean {
  const t = slurmSettings(plan);
  return t.exclusive ?? plan.islands.every((i) => i.nodes.every((n) => n.gpusUsed >= plan.gpusPerNode));
}

/** The GPUs each node's job asks for: `slurm.gres`, else all of the node's (whole nodes) or those its engines use. */
export function gresRequest(plan: Pick<DeploymentPlan, "settings" | "islands" | "gpusPerNode">): string {
  const t = slurmSettings(plan);
  return t.gres ?? `gpu:${exclusiveNodes(plan) ? plan.gpusPerNode : gpusUsedPerNode(plan)}`;
}
