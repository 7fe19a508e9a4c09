import * as pulumi from "@pulumi/pulumi";
import { observePresence, type Presence, type PresenceJob } from "../host/presence";
import { localShell } from "../host/shell";
import type { StackPlan } from "../plan/stack-plan";
import { islandDir, runName } from "./names";
import { parseRunReport, runQueryScript } from "./run-query";

/** Every run the stack starts on this machine, except a dry run's. */
export const stackRuns = (stack: StackPlan): PresenceJob[] =>
  stack.services.flatMap((plan) =>
    plan.dryRun
      ? []
      : plan.islands.map((island) => ({
          jobName: runName(plan, island.index),
          islandDir: islandDir(plan, island),
          nodeCount: island.nodes.length,
        })),
  );

/**
 * What this machine says of each of the stack's runs before Pulumi plans, by run name: the status
 * query's run records, warning about each run that is gone (host/presence.ts).
 */
export function localPresence(stack: StackPlan): pulumi.Output<Record<string, Presence>> {
  return pulumi.output(
    observePresence(localShell(), { query: runQueryScript, parse: parseRunReport }, stackRuns(stack), (m) =>
      pulumi.log.warn(m),
    ),
  );
}
