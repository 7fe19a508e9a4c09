import * as pulumi from "@pulumi/pulumi";
import { fleetEndpointsSchema, stackEndpointsSchema, type FleetEndpoints } from "./contract";

/**
 * Checks another stack's `endpoints` output; the error names the stack and the first fields that
 * are wrong. A stack of several services gives the contract of `service`, which it must name.
 */
export function parseFleetEndpoints(raw: unknown, stack: string, service?: string): FleetEndpoints {
  // A stack of services is checked as one, so an error names the field, not the union's two branches.
  const schema =
    typeof raw === "object" && raw !== null && "services" in raw ? stackEndpointsSchema : fleetEndpointsSchema;
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const where = parsed.error.issues
      .slice(0, 3)
      .map((i) => `${i.path.join(".") || "(top)"}: ${i.message}`)
      .join("; ");
    throw new Error(
      `stack ${stack}: its "endpoints" output is not a vllm-fleet trainer contract (${where}); is it a vllm-fleet stack after \`pulumi up\`?`,
    );
  }
  const out = parsed.data;
  if (!("services" in out)) {
    if (service !== undefined)
      throw new Error(`stack ${stack} serves one model (${out.model}) and has no services: drop service "${service}"`);
    return out;
  }
  const names = Object.keys(out.services);
  if (service === undefined || !(service in out.services))
    throw new Error(
      `stack ${stack} has ${names.length} services (${names.join(", ")}): ${service === undefined ? "name one (readFleet(stack, { service }))" : `none is "${service}"`}`,
    );
  return out.services[service];
}

export interface FleetReference {
  endpoints: pulumi.Output<FleetEndpoints>;
  /** The engines' API key (secret), or undefined when the fleet has none. */
  apiKey: pulumi.Output<string | undefined>;
}

/**
 * A trainer stack's view of a fleet stack (`org/project/stack`), read through a StackReference:
 *
 *   const fleet = readFleet("acme/vllm-fleet/prod");
 *   fleet.endpoints.adminUrls   // every engine, in the planner's order
 *   readFleet("acme/vllm-fleet/rl", { service: "judge" })   // one service of a stack with [services]
 */
export function readFleet(stack: string, opts?: pulumi.CustomResourceOptions & { service?: string }): FleetReference {
  const { service, ...resourceOpts } = opts ?? {};
  const ref = new pulumi.StackReference(stack, { name: stack }, resourceOpts);
  const endpoints = ref.requireOutput("endpoints").apply((raw) => parseFleetEndpoints(raw, stack, service));
  const apiKey = ref.getOutput("apiKey").apply((k) => (typeof k === "string" ? k : undefined));
  return { endpoints, apiKey };
}
