import type { DeploymentPlan, LocalSettings } from "../plan/deployment-plan";

/** The plan's `[local]` settings; `who` names the renderer when a plan for another target reaches it. */
export function localSettings(plan: Pick<DeploymentPlan, "settings">, who = "the local target"): LocalSettings {
  if (plan.settings.kind !== "local") throw new Error(`${who} needs a local target`);
  return plan.settings;
}
