import type { DeploymentPlan } from "./deployment-plan";

/** What a whole stack asks for: its services' totals added up. */
export type StackTotals = DeploymentPlan["totals"];

/**
 * A whole stack: one plan per service, in the file's order. A file without `[services]` has one
 * service, unnamed (its plan's `service` is undefined), and everything about it is what it was
 * before services existed.
 */
export interface StackPlan {
  stack: string;
  services: DeploymentPlan[];
  totals: StackTotals;
}

/** Whether the stack names its services (a file with `[services]`). */
export const namedServices = (stack: StackPlan): boolean => stack.services.some((p) => p.service !== undefined);

/** The stack's totals: its services' added up. */
export function stackTotals(services: DeploymentPlan[]): StackTotals {
  const sum = (k: keyof StackTotals) => services.reduce((s, p) => s + p.totals[k], 0);
  return {
    nodes: sum("nodes"),
    gpus: sum("gpus"),
    gpusAllocated: sum("gpusAllocated"),
    routers: sum("routers"),
    engines: sum("engines"),
  };
}

/** The plan of service `name` (undefined: the stack's only service), or an error listing the services. */
export function serviceOf(stack: StackPlan, name: string | undefined): DeploymentPlan {
  if (name === undefined) {
    if (stack.services.length === 1) return stack.services[0];
    throw new Error(`the stack has ${stack.services.length} services (${serviceNames(stack).join(", ")}): name one`);
  }
  const found = stack.services.find((p) => p.service === name);
  if (!found)
    throw new Error(
      namedServices(stack)
        ? `the stack has no service "${name}"; its services: ${serviceNames(stack).join(", ")}`
        : `the stack has no [services]; it serves one model (${stack.services[0].model}): drop the service name`,
    );
  return found;
}

const serviceNames = (stack: StackPlan): string[] => stack.services.map((p) => p.service ?? p.model);
