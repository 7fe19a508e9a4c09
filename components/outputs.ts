import type { DeploymentPlan } from "./plan/types";
import { showUrl } from "./report/plan-json";

/**
 * Endpoints as planned, before any node is allocated: hosts are symbolic (<i0-n0>), the order of
 * admin URLs is final. Trainers can check the contract (count, roles, order) from a preview.
 */
export function plannedOutputs(plan: DeploymentPlan) {
  return {
    model: plan.model,
    shape: plan.shape,
    target: plan.target,
    totals: plan.totals,
    islands: plan.islands.map((island) => ({
      island: island.index,
      routerUrl: island.endpoints.router ? showUrl(island.index, island.endpoints.router) : null,
      adminUrls: island.endpoints.engines.map((e) => showUrl(island.index, e.url)),
      roles: island.endpoints.engines.map((e) => e.role),
    })),
  };
}
