import type { FleetConfig } from "./config/types";
import type { DeploymentPlan } from "./plan/deployment-plan";
import { planDeployment } from "./plan/plan";
import { targetOf } from "./targets";

/**
 * The deployment plan of a config, with the hints its target gives the planner. Here, not in
 * components/plan/, because the targets read the plan's types: the planner cannot import them.
 */
export function buildPlan(cfg: FleetConfig, stack: string): DeploymentPlan {
  return planDeployment(cfg, stack, targetOf(cfg.target.kind).plan);
}
