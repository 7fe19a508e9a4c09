import type { DeploymentPlan, IslandPlan } from "../plan/deployment-plan";
import { islandName } from "../plan/naming";

/** The Pulumi stack, made safe for file and process names. */
const safeStack = (plan: DeploymentPlan) => plan.stack.replace(/[^A-Za-z0-9._-]/g, "-");

/** The fleet's part of every run name. */
const runBase = (plan: DeploymentPlan) => `vllm-fleet-${safeStack(plan)}`;

/** The unique name of an island's run: its folder's owner file and every message carry it. */
export function runName(plan: DeploymentPlan, island: number): string {
  return islandName(runBase(plan), plan.service, island);
}

/**
 * The fleet's folder on this machine: output_dir as set, else vllm-fleet/local-<stack>; a relative
 * path is under the home directory, as on a SLURM login node. The stack in the default keeps two
 * stacks of one stack file (dev, prod) out of each other's folders.
 */
export function fleetDir(plan: DeploymentPlan): string {
  return plan.outputDir ?? `vllm-fleet/local-${safeStack(plan)}`;
}

/** Where an island keeps its script, run record, logs and endpoints.json. */
export function islandDir(plan: DeploymentPlan, island: IslandPlan): string {
  return `${fleetDir(plan).replace(/\/+$/, "")}/${island.name}`;
}
