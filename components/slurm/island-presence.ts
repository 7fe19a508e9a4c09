import type * as command from "@pulumi/command";
import * as pulumi from "@pulumi/pulumi";
import { observePresence, type Presence, type PresenceJob } from "../host/presence";
import type { StackPlan } from "../plan/stack-plan";
import { coScheduledGroups, hetjobDir, hetjobName } from "./hetjob";
import { loginShell, type LoginConnection } from "./login-shell";
import { islandDir, jobName } from "./sbatch";
import { parseSchedulerReport, schedulerQueryScript } from "./scheduler";

/** Every job the stack submits (an island's, or the co-scheduled one), except a dry run's. */
export function stackJobs(stack: StackPlan): PresenceJob[] {
  const jobs: PresenceJob[] = [];
  const grouped = new Set<string>();
  for (const group of coScheduledGroups(stack)) {
    if (group.length < 2) continue;
    group.forEach(({ plan, island }) => grouped.add(`${plan.service ?? ""}/${island.index}`));
    if (!group[0].plan.dryRun) jobs.push({ jobName: hetjobName(group), islandDir: hetjobDir(group) });
  }
  for (const plan of stack.services)
    for (const island of plan.islands)
      if (!plan.dryRun && !grouped.has(`${plan.service ?? ""}/${island.index}`))
        jobs.push({
          jobName: jobName(plan, island.index),
          islandDir: islandDir(plan, island),
          nodeCount: island.nodes.length,
        });
  return jobs;
}

/**
 * What the login node says of each of the stack's jobs before Pulumi plans, by job name: one ssh
 * round trip with the status query, warning about each job that is gone (host/presence.ts).
 */
export function slurmPresence(
  stack: StackPlan,
  connection: pulumi.Input<command.types.input.remote.ConnectionArgs>,
): pulumi.Output<Record<string, Presence>> {
  const jobs = stackJobs(stack);
  const seen = pulumi
    .output(connection)
    .apply((c) =>
      observePresence(
        loginShell(c as LoginConnection),
        { query: schedulerQueryScript, parse: parseSchedulerReport },
        jobs,
        (m) => void pulumi.log.warn(m),
      ),
    );
  // The key made the connection secret; what the scheduler says is not.
  return pulumi.unsecret(seen);
}
