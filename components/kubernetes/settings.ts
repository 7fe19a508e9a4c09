import type { DeploymentPlan, KubernetesSettings } from "../plan/deployment-plan";

/** The plan's `[kubernetes]` settings; a plan for another target is an internal error. */
export function kubernetesSettings(plan: Pick<DeploymentPlan, "settings">): KubernetesSettings {
  if (plan.settings.kind !== "kubernetes")
    throw new Error(`internal error: the Kubernetes target got a plan for ${plan.settings.kind}`);
  return plan.settings;
}
