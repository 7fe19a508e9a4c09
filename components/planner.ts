import type { FleetConfig } from "./config/types";
import type { DeploymentPlan } from "./plan/deployment-plan";
import { planDeployment } from "./plan/plan";
import { ConfigError } from "./config/issues";
import { allTargets, targetOf } from "./targets";
import { stackTotals, type StackPlan } from "./plan/stack-plan";

/**
 * The deployment plan of a config, with the hints its target gives the planner, refused when the
 * target cannot run it. Here, not in components/plan/, because the targets read the plan's types:
 * the planner cannot import them. `elsewhere` is passed uncalled: listing every target loads every
 * backend, which only a refusal's message needs.
 */
const elsewhere = () =>
  allTargets()
    .filter((t) => !t.plan.sharedHost)
    .map((t) => t.kind);

export function buildPlan(cfg: FleetConfig, stack: string): DeploymentPlan {
  const target = targetOf(cfg.target.kind);
  const plan = planDeployment(cfg, stack, target.plan);
  const refusals = target.refusals?.(plan, elsewhere) ?? [];
  if (refusals.length) throw new ConfigError(refusals);
  return plan;
}

/** The plan of every service of a stack (one config per service, in the file's order). */
export function buildStackPlan(services: FleetConfig[], stack: string): StackPlan {
  const plans = services.map((cfg) => buildPlan(cfg, stack));
  const refusals = targetOf(plans[0].target).stackRefusals?.(plans, elsewhere) ?? [];
  if (refusals.length) throw new ConfigError(refusals);
  return { stack, services: plans, totals: stackTotals(plans) };
}
