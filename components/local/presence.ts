import * as pulumi from "@pulumi/pulumi";
import { observePresence, stackJobs, type Presence } from "../host/presence";
import { localShell } from "../host/shell";
import type { StackPlan } from "../plan/stack-plan";
import { localTarget } from "./target";

/**
 * What this machine says of each of the stack's runs before Pulumi plans, by run name: the status
 * query's run records, warning about each run that is gone (host/presence.ts).
 */
export function localPresence(stack: StackPlan): pulumi.Output<Record<string, Presence>> {
  const { island, scheduler } = localTarget.fleet;
  return pulumi.output(
    observePresence(localShell(), scheduler!, stackJobs(stack, island!), (m) => void pulumi.log.warn(m)),
  );
}
