import * as fs from "node:fs";
import * as path from "node:path";
import type { PlanOutFile } from "../../components/backend";
import type { TargetKind } from "../../components/config/target-registry";
import type { DeploymentPlan, IslandPlan, NodeUrl } from "../../components/plan/deployment-plan";
import { islandName } from "../../components/plan/naming";
import type { StackPlan } from "../../components/plan/stack-plan";
import { showValue } from "../../components/plan/values";
import type { ClusterIslandReport, ClusterState, Target } from "../../components/target";
import type { RecordedSettings } from "./config";

/*
 * The fixture target (test only): an island "runs" as the command lines of its engines and router,
 * recorded in settings.record_dir (`run`); its status is what a state file beside them says, or
 * PENDING while nothing is recorded. Only what the planner, `plan --out` and `fleet status` ask of
 * a target (components/target.ts); no `pulumi up` side.
 */

const settingsOf = (plan: DeploymentPlan) => plan.settings as unknown as RecordedSettings;
/** Machine k of the recorder answers at recorded-<k>. */
const url = (u: NodeUrl) => `http://recorded-${u.node}:${u.port}${u.path}`;
const islandFile = (plan: DeploymentPlan, island: number, ext: string) =>
  path.join(settingsOf(plan).record_dir, `${islandName(plan.stack, plan.service, island)}.${ext}`);

/** One line per process: the machine it runs on, then its command line. */
export function commandLines(island: IslandPlan): string {
  const lines = island.engines.map(
    (e) => `machine ${e.node}: ${e.argv.map((v) => showValue(v, island.index)).join(" ")}`,
  );
  if (island.router) lines.push(`machine 0: the ${island.router.kind} router`);
  return lines.join("\n") + "\n";
}

/** "Runs" every island of a plan: records its command lines (what `pulumi up` would do for a real target). */
export function run(plan: DeploymentPlan): string[] {
  fs.mkdirSync(settingsOf(plan).record_dir, { recursive: true });
  return plan.islands.map((island) => {
    const file = islandFile(plan, island.index, "commands");
    fs.writeFileSync(file, commandLines(island));
    return file;
  });
}

/** Records an island's state, as its processes would report it. */
export function recordState(plan: DeploymentPlan, island: number, state: ClusterState, detail: string): void {
  fs.writeFileSync(islandFile(plan, island, "state.json"), JSON.stringify({ state, detail }));
}

function observe(plan: DeploymentPlan): ClusterIslandReport[] {
  return plan.islands.map((island) => {
    const nodes = island.nodes.map((_, k) => `recorded-${k}`);
    if (!fs.existsSync(islandFile(plan, island.index, "commands")))
      return { island: island.index, state: "PENDING", detail: "not recorded yet", processes: {}, nodes };
    const stateFile = islandFile(plan, island.index, "state.json");
    const { state, detail } = fs.existsSync(stateFile)
      ? (JSON.parse(fs.readFileSync(stateFile, "utf8")) as { state: ClusterState; detail: string })
      : { state: "LAUNCHING" as const, detail: "recorded; no state reported yet" };
    return { island: island.index, state, detail, processes: {}, nodes };
  });
}

export const recordedTarget: Target = {
  kind: "recorded" as TargetKind,
  title: "recorded",
  plan: {
    poolRef: (_settings, { service }, island) => ({
      name: islandName("vllm-fleet", service, island),
      namespace: "recorded",
      discovery: "file",
    }),
    wholeNodes: () => undefined,
    gpuTypeHint: () => undefined,
  },
  // The recorder has settings.machines machines; the config part's rule already refuses more.
  refusals: (plan) =>
    plan.islands.length * plan.islands[0].nodes.length > settingsOf(plan).machines
      ? [
          {
            path: "recorded.machines",
            message: `holds ${settingsOf(plan).machines} machines, fewer than the fleet's nodes`,
          },
        ]
      : [],
  planOut: (stack: StackPlan): PlanOutFile[] =>
    stack.services.flatMap((plan) =>
      plan.islands.map((island) => ({
        path: `recorded/${islandName(plan.stack, plan.service, island.index)}.commands`,
        text: commandLines(island),
      })),
    ),
  knownUrls: (plan) =>
    plan.islands.map((island) => ({
      routerUrl: island.endpoints.router ? url(island.endpoints.router) : null,
      adminUrls: island.endpoints.engines.map((e) => url(e.url)),
    })),
  fleet: {
    shell: "none",
    inClusterUrls: false,
    cluster: {
      observe: async (plan) => observe(plan),
      scrape: async () => [],
      logs: async () => [],
    },
  },
};
