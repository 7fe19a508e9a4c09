import * as pulumi from "@pulumi/pulumi";
import { fleetEndpointsSchema, type FleetEndpoints } from "./contract";

/** Checks another stack's `endpoints` output; the error names the stack and the first fields that are wrong. */
export function parseFleetEndpoints(raw: unknown, stack: string): FleetEndpoints {
  const parsed = fleetEndpointsSchema.safeParse(raw);
  if (!parsed.success) {
    const where = parsed.error.issues
      .slice(0, 3)
      .map((i) => `${i.path.join(".") || "(top)"}: ${i.message}`)
      .join("; ");
    throw new Error(
      `stack ${stack}: its "endpoints" output is not a vllm-fleet trainer contract (${where}); is it a vllm-fleet stack after \`pulumi up\`?`,
    );
  }
  return parsed.data;
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
 */
export function readFleet(stack: string, opts?: pulumi.CustomResourceOptions): FleetReference {
  const ref = new pulumi.StackReference(stack, { name: stack }, opts);
  const endpoints = ref.requireOutput("endpoints").apply((raw) => parseFleetEndpoints(raw, stack));
  const apiKey = ref.getOutput("apiKey").apply((k) => (typeof k === "string" ? k : undefined));
  return { endpoints, apiKey };
}
