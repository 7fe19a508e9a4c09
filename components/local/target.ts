import type { Target } from "../target";
import type { NodeUrl } from "../plan/deployment-plan";
import { islandName } from "../plan/naming";
import { localPlanOut } from "./plan-out";
import { islandDir, runName } from "./names";
import { localRefusals } from "./refusals";
import { localSettings } from "./settings";
import { parseRunReport, runQueryScript } from "./run-query";
import { localHeldQueryScript, parseLocalHeldReport } from "./held-query";
import { renderTemplate } from "../templates";

/** Every node of the plan is this machine: its processes answer on the loopback address. */
const here = (u: NodeUrl) => `http://127.0.0.1:${u.port}${u.path}`;

/** The local target as the planner, `plan` and the fleet CLI see it (the Pulumi side is ./deploy). */
export const localTarget: Target = {
  kind: "local",
  title: "local",
  plan: {
    // No InferencePool here: the name is a label and the EPP reads its endpoints from a file.
    poolRef: (_settings, { service }, island) => ({
      name: islandName("vllm-fleet", service, island),
      namespace: "local",
      discovery: "file",
    }),
    // The engines take exactly the GPUs they use; the rest stay free for other work.
    wholeNodes: () => undefined,
    gpuTypeHint: () => undefined,
    sharedHost: true,
  },
  refusals: localRefusals,
  // One machine, one service: several would share its GPUs from the first and its fixed ports.
  stackRefusals: (plans, clusterTargets) =>
    plans.length > 1
      ? [
          {
            path: "services",
            message: `holds ${plans.length} services (${plans.map((p) => p.service).join(", ")}), and the local target runs one service per stack for now (the services would share this machine's first GPUs and fixed ports): deploy each service as a stack of its own, or the stack with ${clusterTargets()
              .map((k) => `[${k}]`)
              .join(" or ")}`,
          },
        ]
      : [],
  planOut: (stack) => stack.services.flatMap(localPlanOut),
  // Ports are planned and the host is this one: the URLs are final at plan time.
  knownUrls: (plan) =>
    plan.islands.map((island) => ({
      routerUrl: island.endpoints.router ? here(island.endpoints.router) : null,
      adminUrls: island.endpoints.engines.map((e) => here(e.url)),
    })),
  placementText: (plan, island) => [
    `    on this machine, in ~/${islandDir(plan, island)} (run ${runName(plan, island.index)})`,
    ...(localSettings(plan).device === "cpu"
      ? ["    device = cpu: the engine's CPU build; no GPU is counted, and CUDA_VISIBLE_DEVICES stays empty"]
      : []),
  ],
  fleet: {
    shell: "here",
    scheduler: { query: runQueryScript, parse: parseRunReport },
    cost: {
      gpus: (plan, island) =>
        localSettings(plan).device === "cpu" ? 0 : island.nodes.reduce((n, node) => n + node.gpusUsed, 0),
      query: localHeldQueryScript,
      parse: parseLocalHeldReport,
    },
    logsScript: (islands, lines, job) => renderTemplate("local/logs.sh.mustache", { islands, lines, job }),
    inClusterUrls: false,
    island: (_stack, plan, island) => ({
      jobName: runName(plan, island.index),
      islandDir: islandDir(plan, island),
      nodeCount: island.nodes.length,
    }),
  },
};
