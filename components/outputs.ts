import type { DeploymentPlan } from "./plan/deployment-plan";
import { showUrl } from "./report/plan-json";
import { targetOf } from "./targets";
import type { FleetEndpoints, IslandEndpoints } from "./trainer/contract";
import { trainerBlocks } from "./trainer/trainer-blocks";

/** The island fields every target reports (SLURM from the job's result line, Kubernetes from names). */
export type IslandUrls = Pick<IslandEndpoints, "island" | "routerUrl" | "adminUrls" | "roles">;

/**
 * The trainer contract, built from what each island reports. Pure: the Pulumi program applies it
 * to the islands' outputs and `planned` applies it to the plan, so both have one shape.
 */
export function fleetEndpoints(
  plan: Pick<DeploymentPlan, "model" | "target">,
  islands: IslandUrls[],
  apiKeyRequired: boolean,
): FleetEndpoints {
  const own = islands.map((i) => {
    const island: Omit<IslandEndpoints, "trainers"> = {
      island: i.island,
      model: plan.model,
      routerUrl: i.routerUrl,
      adminUrls: i.adminUrls,
      roles: i.roles,
      engineCount: i.adminUrls.length,
    };
    return {
      ...island,
      trainers: trainerBlocks({
        model: plan.model,
        baseUrls: baseUrls([island]),
        adminUrls: island.adminUrls,
        roles: island.roles,
        apiKeyRequired,
      }),
    };
  });
  const all = {
    model: plan.model,
    baseUrls: baseUrls(own),
    adminUrls: own.flatMap((i) => i.adminUrls),
    roles: own.flatMap((i) => i.roles),
    apiKeyRequired,
  };
  return { ...all, target: plan.target, engineCount: all.adminUrls.length, islands: own, trainers: trainerBlocks(all) };
}

/** Routers when every island has one; otherwise every engine (a router-less island is served by its engines). */
function baseUrls(islands: Pick<IslandEndpoints, "routerUrl" | "adminUrls">[]): string[] {
  return islands.flatMap((i) => (i.routerUrl ? [i.routerUrl] : i.adminUrls));
}

/**
 * Endpoints as planned. Where nodes are not allocated yet (SLURM) hosts are symbolic (<i0-n0>);
 * where the target chooses names (Kubernetes) URLs are the real in-cluster ones. The order of admin URLs is
 * final either way: trainers can check the contract (count, roles, order) from a preview.
 */
export function plannedOutputs(plan: DeploymentPlan) {
  const known = targetOf(plan.target).knownUrls?.(plan);
  return {
    model: plan.model,
    shape: plan.shape,
    target: plan.target,
    totals: plan.totals,
    islands: plan.islands.map((island) => ({
      island: island.index,
      routerUrl: known
        ? known[island.index].routerUrl
        : island.endpoints.router
          ? showUrl(island.index, island.endpoints.router)
          : null,
      adminUrls: known
        ? known[island.index].adminUrls
        : island.endpoints.engines.map((e) => showUrl(island.index, e.url)),
      roles: island.endpoints.engines.map((e) => e.role),
    })),
  };
}
