import type { DeploymentPlan, SlurmSettings } from "../plan/deployment-plan";

/** The plan's `[slurm]` settings; `who` names the renderer when a plan for another target reaches it. */
export function slurmSettings(plan: Pick<DeploymentPlan, "settings">, who = "the SLURM target"): SlurmSettings {
  if (plan.settings.kind !== "slurm") throw new Error(`${who} needs a SLURM target`);
  return plan.settings;
}
