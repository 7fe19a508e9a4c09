import type { DeploymentPlan } from "./plan/deployment-plan";
import { showUrl } from "./report/plan-json";
import { targetOf } from "./targets";
import type { EndpointsOutput, FleetEndpoints, IslandEndpoints, IslandRouter } from "./trainer/contract";
import { islandRouter } from "./trainer/router-contract";
import { namedServices, type StackPlan } from "./plan/stack-plan";
import { trainerBlocks } from "./trainer/trainer-blocks";
import { engineNamed } from "./plan/engines";

/** The island fields every target reports (SLURM from the job's result line, Kubernetes from names). */
export type IslandUrls = Pick<IslandEndpoints, "island" | "routerUrl" | "adminUrls" | "roles">;

/**
 * The trainer contract, built from what each island reports. Pure: the Pulumi program applies it
 * to the islands' outputs and `planned` applies it to the plan, so both have one shape.
 */
export function fleetEndpoints(
  plan: Pick<DeploymentPlan, "model" | "target" | "engine"> & { routerContract?: IslandRouter | null },
  islands: IslandUrls[],
  apiKeyRequired: boolean,
): FleetEndpoints {
  const { engine, routerContract } = plan;
  const baseUrls = (of: Pick<IslandEndpoints, "routerUrl" | "adminUrls">[]) => clientUrls(of, engine);
  const own = islands.map((i) => {
    const island: Omit<IslandEndpoints, "trainers"> = {
      island: i.island,
      model: plan.model,
      routerUrl: i.routerUrl,
      adminUrls: i.adminUrls,
      roles: i.roles,
      engineCount: i.adminUrls.length,
      // Unknown only for a view read from endpoints written before the field existed.
      ...(routerContract !== undefined && { router: routerContract }),
    };
    return {
      ...island,
      trainers: trainerBlocks({
        engine,
        model: plan.model,
        baseUrls: baseUrls([island]),
        adminUrls: island.adminUrls,
        roles: island.roles,
        apiKeyRequired,
      }),
    };
  });
  const all = {
    engine,
    model: plan.model,
    baseUrls: baseUrls(own),
    adminUrls: own.flatMap((i) => i.adminUrls),
    roles: own.flatMap((i) => i.roles),
    apiKeyRequired,
  };
  return { ...all, target: plan.target, engineCount: all.adminUrls.length, islands: own, trainers: trainerBlocks(all) };
}

/**
 * Where clients send requests: routers when every island has one; otherwise every engine's API base
 * (a router-less island is served by its engines), from its admin URL (SGLang's admin routes sit at
 * the root, its API under /v1).
 */
function clientUrls(
  islands: Pick<IslandEndpoints, "routerUrl" | "adminUrls">[],
  engine: DeploymentPlan["engine"],
): string[] {
  const { admin, api } = engineNamed(engine).routes;
  const apiOf = (adminUrl: string) => (admin ? adminUrl.slice(0, -admin.length) : adminUrl) + api;
  return islands.flatMap((i) => (i.routerUrl ? [i.routerUrl] : i.adminUrls.map(apiOf)));
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
    engine: plan.engine,
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

/**
 * The `endpoints` output of a stack: its one service's contract exactly as before services existed,
 * or with several services each one's contract under `services.<name>`. `islands`: per service, in
 * the stack's order.
 */
export function stackEndpoints(stack: StackPlan, islands: IslandUrls[][], apiKeyRequired: boolean): EndpointsOutput {
  const each = stack.services.map((plan, k) =>
    fleetEndpoints({ ...plan, routerContract: islandRouter(plan.routerSettings) }, islands[k], apiKeyRequired),
  );
  if (!namedServices(stack)) return each[0];
  return {
    target: stack.services[0].target,
    apiKeyRequired,
    engineCount: each.reduce((s, e) => s + e.engineCount, 0),
    services: Object.fromEntries(stack.services.map((plan, k) => [plan.service!, each[k]])),
  };
}

/** The `planned` output: the one service's as before, or each service's under `services.<name>` beside the stack's totals. */
export function plannedStackOutputs(stack: StackPlan) {
  if (!namedServices(stack)) return plannedOutputs(stack.services[0]);
  return {
    target: stack.services[0].target,
    totals: stack.totals,
    services: Object.fromEntries(stack.services.map((plan) => [plan.service!, plannedOutputs(plan)])),
  };
}
