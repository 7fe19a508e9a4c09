import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import type { FleetEndpoints } from "../outputs";

const role = z.enum(["replica", "prefill", "decode"]);
const blocks = z.object({ primeRl: z.string(), nexrl: z.string(), openaiEnv: z.record(z.string(), z.string()) });
const island = z.object({
  island: z.number().int(),
  model: z.string(),
  routerUrl: z.string().nullable(),
  adminUrls: z.array(z.string()),
  roles: z.array(role),
  engineCount: z.number().int(),
  trainers: blocks,
});

/** What a trainer stack relies on; checked, so a wrong stack name fails with a reason, not `undefined`. */
const endpointsSchema = z.object({
  model: z.string(),
  target: z.enum(["slurm", "kubernetes"]),
  baseUrls: z.array(z.string()),
  adminUrls: z.array(z.string()),
  roles: z.array(role),
  engineCount: z.number().int(),
  apiKeyRequired: z.boolean(),
  islands: z.array(island),
  trainers: blocks,
});

/** Checks another stack's `endpoints` output; the error names the stack and the first fields that are wrong. */
export function parseFleetEndpoints(raw: unknown, stack: string): FleetEndpoints {
  const parsed = endpointsSchema.safeParse(raw);
  if (!parsed.success) {
    const where = parsed.error.issues.slice(0, 3).map((i) => `${i.path.join(".") || "(top)"}: ${i.message}`).join("; ");
    throw new Error(`stack ${stack}: its "endpoints" output is not a vllm-fleet trainer contract (${where}); is it a vllm-fleet stack after \`pulumi up\`?`);
  }
  return parsed.data as FleetEndpoints;
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
