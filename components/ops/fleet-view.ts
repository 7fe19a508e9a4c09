import type { TargetKind } from "../config/target-registry";
// island/v1 files written before a second host target carry no `target`: SLURM wrote them all.
import { slurmConfig } from "../slurm/config";
import type { IslandRouter } from "../trainer/contract";
import { islandRouter } from "../trainer/router-contract";
import type { DeploymentPlan, EngineName, NodeUrl, RouterPlan, Role } from "../plan/deployment-plan";
import type { StackPlan } from "../plan/stack-plan";
import { routerProcess } from "../host/processes";
import { targetOf } from "../targets";

/**
 * What the fleet CLI operates on, whichever way it learnt about the fleet. From a stack file (the
 * plan) it knows every process and where it runs, so it can follow a job from PENDING on; from an
 * endpoints file (the job's endpoints.json or `pulumi stack output --json`) it knows the URLs.
 */
export interface FleetView {
  model: string;
  /** What serves the model: its trainer blocks and admin routes follow it. */
  engine: EngineName;
  target: TargetKind;
  islands: IslandView[];
  /** The Pulumi stack the plan was made for (job names and resource URNs carry it); unknown from an endpoints file. */
  stack?: string;
  /** The service of a stack with [services] this view is of (resource names carry it). */
  service?: string;
  /** `cost.gpu_hour_price`, from a stack. */
  gpuHourPrice?: number;
  /** Each island's router as the trainer contract states it; unknown from files that predate it. */
  routerContract?: IslandRouter | null;
}

export interface IslandView {
  island: number;
  /** SLURM: the unique job name the scheduler knows the island by. */
  jobName?: string;
  /** SLURM: where the island keeps its job id, logs and endpoints.json on the login node. */
  islandDir?: string;
  /** A job id the endpoints file recorded (a plan does not know it). */
  jobId?: string;
  nodeCount?: number;
  /** The GPUs it holds as the plan says (the target's count: whole nodes where it holds them). */
  gpus?: number;
  /** A co-scheduled island's component in its heterogeneous job, and the group's folder (its batch output). */
  component?: number;
  jobDir?: string;
  engines: ProcessView[];
  router?: ProcessView & { kind: RouterPlan["kind"] };
}

export interface ProcessView {
  /** The process name: its log is <name>.log and its exit marker <name>.exit on its node. */
  id: string;
  role: Role | "router";
  /** Where it runs, when known from the plan: the island's node and port. */
  at?: NodeUrl;
  /** Its base URL (`.../v1`) when already known (Kubernetes names, or an endpoints file). */
  url?: string;
}

/** A plan's view: SLURM URLs wait for the scheduler's node addresses; Kubernetes URLs are names. */
/** The fleet of one service as its plan says; `stack` (every service) places islands that share a job. */
export function viewFromPlan(
  plan: DeploymentPlan,
  stack: StackPlan = { stack: plan.stack, services: [plan], totals: plan.totals },
): FleetView {
  const target = targetOf(plan.target);
  const known = target.knownUrls?.(plan);
  return {
    model: plan.model,
    engine: plan.engine,
    target: plan.target,
    stack: plan.stack,
    ...(plan.service !== undefined && { service: plan.service }),
    routerContract: islandRouter(plan.routerSettings),
    ...(plan.gpuHourPrice !== undefined && { gpuHourPrice: plan.gpuHourPrice }),
    islands: plan.islands.map((island) => {
      const ep = island.endpoints;
      const placement = target.fleet.island?.(stack, plan, island) ?? {};
      const router =
        island.router && ep.router
          ? {
              id: routerProcess(island.router.kind),
              role: "router" as const,
              kind: island.router.kind,
              at: ep.router,
              url: known?.[island.index].routerUrl ?? undefined,
            }
          : undefined;
      const gpus = target.fleet.cost?.gpus(plan, island);
      return {
        island: island.index,
        ...placement,
        ...(gpus !== undefined && { gpus }),
        engines: ep.engines.map((e, k) => ({
          id: e.id,
          role: e.role,
          at: e.url,
          url: known?.[island.index].adminUrls[k],
        })),
        ...(router ? { router } : {}),
      };
    }),
  };
}

/** The fields of the files a user may hand the CLI; anything else is reported, not guessed. */
interface EndpointsIsland {
  island: number;
  jobName?: string;
  jobId?: string | null;
  routerUrl: string | null;
  adminUrls: string[];
  roles: Role[];
  engines?: { id: string; role: Role; url: string }[];
}

/**
 * Reads an island's endpoints.json (`vllm-fleet/island/v1`), or `pulumi stack output --json` (its
 * `islands` and `planned` outputs). Engine ids come from the file when it has them.
 */
export function viewFromEndpoints(doc: unknown, source: string, service?: string): FleetView {
  const d = doc as Record<string, any>;
  if (d && d.format === "vllm-fleet/island/v1") {
    if (d.dryRun) throw new Error(`${source} is a dry run's result: nothing was deployed`);
    // Files written before a second engine existed are vLLM's; before a second host target, SLURM's.
    return {
      model: d.model,
      engine: d.engine ?? "vllm",
      target: d.target ?? slurmConfig.kind,
      ...(d.router !== undefined && { routerContract: d.router }),
      islands: [islandFromEndpoints(d as EndpointsIsland)],
    };
  }
  // A stack of several services: its `planned` output has each one's under services.<name>.
  if (d && Array.isArray(d.islands) && d.planned && d.planned.services && typeof d.planned.services === "object") {
    const names = Object.keys(d.planned.services);
    if (service === undefined || !names.includes(service))
      throw new Error(
        `${source} is a stack of ${names.length} services (${names.join(", ")}): ${service === undefined ? "name one with --service" : `it has no service "${service}"`}`,
      );
    return {
      model: d.planned.services[service].model,
      engine: d.planned.services[service].engine ?? "vllm",
      target: d.planned.target,
      islands: (d.islands as (EndpointsIsland & { service?: string })[])
        .filter((i) => i.service === service)
        .map(islandFromEndpoints),
    };
  }
  if (d && Array.isArray(d.islands) && d.planned && typeof d.planned.model === "string") {
    return {
      model: d.planned.model,
      engine: d.planned.engine ?? "vllm",
      target: d.planned.target,
      islands: (d.islands as EndpointsIsland[]).map(islandFromEndpoints),
    };
  }
  throw new Error(
    `${source} is neither an island's endpoints.json nor \`pulumi stack output --json\` of a vllm-fleet stack`,
  );
}

function islandFromEndpoints(i: EndpointsIsland): IslandView {
  const engines = i.engines ?? i.adminUrls.map((url, k) => ({ id: `engine${k}`, role: i.roles[k], url }));
  return {
    island: i.island,
    ...(i.jobName ? { jobName: i.jobName } : {}),
    ...(i.jobId ? { jobId: i.jobId } : {}),
    engines: engines.map((e) => ({ id: e.id, role: e.role, url: e.url })),
    ...(i.routerUrl
      ? { router: { id: "router", role: "router" as const, kind: "vllm-router" as const, url: i.routerUrl } }
      : {}),
  };
}

/** Every process the CLI watches on an island: its engines in order, then its router. */
export function processesOf(island: IslandView): ProcessView[] {
  return [...island.engines, ...(island.router ? [island.router] : [])];
}

/** A process's base URL: known already, or built from its node's address once the job runs. */
export function processUrl(p: ProcessView, addrs: string[] | undefined): string | undefined {
  if (p.url) return p.url;
  if (!p.at || !addrs || addrs[p.at.node] === undefined) return undefined;
  return `http://${addrs[p.at.node]}:${p.at.port}${p.at.path}`;
}
