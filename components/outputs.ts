import type { DeploymentPlan } from "./plan/types";
import { k8sEndpoints } from "./render/k8s/fleet";
import { showUrl } from "./report/plan-json";

/**
 * Endpoints as planned. On SLURM nodes are not allocated yet, so hosts are symbolic (<i0-n0>); on
 * Kubernetes the names are chosen, so URLs are the real in-cluster ones. The order of admin URLs is
 * final either way: trainers can check the contract (count, roles, order) from a preview.
 */
export function plannedOutputs(plan: DeploymentPlan) {
  const k8s = plan.target === "kubernetes" ? k8sEndpoints(plan) : undefined;
  return {
    model: plan.model,
    shape: plan.shape,
    target: plan.target,
    totals: plan.totals,
    islands: plan.islands.map((island) => ({
      island: island.index,
      routerUrl: k8s ? k8s[island.index].routerUrl : island.endpoints.router ? showUrl(island.index, island.endpoints.router) : null,
      adminUrls: k8s ? k8s[island.index].adminUrls : island.endpoints.engines.map((e) => showUrl(island.index, e.url)),
      roles: island.endpoints.engines.map((e) => e.role),
    })),
  };
}
