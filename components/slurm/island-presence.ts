import type * as command from "@pulumi/command";
import * as pulumi from "@pulumi/pulumi";
import { observePresence, stackJobs, type Presence } from "../host/presence";
import type { StackPlan } from "../plan/stack-plan";
import { loginShell, type LoginConnection } from "./login-shell";
import { slurmTarget } from "./target";

/**
 * What the login node says of each of the stack's jobs before Pulumi plans, by job name: one ssh
 * round trip with the status query, warning about each job that is gone (host/presence.ts).
 */
export function slurmPresence(
  stack: StackPlan,
  connection: pulumi.Input<command.types.input.remote.ConnectionArgs>,
): pulumi.Output<Record<string, Presence>> {
  const { island, scheduler } = slurmTarget.fleet;
  // An island's job, or the co-scheduled job its islands share (hetjob.ts coScheduledPlacements).
  const jobs = stackJobs(stack, island!);
  const seen = pulumi
    .output(connection)
    .apply((c) => observePresence(loginShell(c as LoginConnection), scheduler!, jobs, (m) => void pulumi.log.warn(m)));
  // The key made the connection secret; what the scheduler says is not.
  return pulumi.unsecret(seen);
}
