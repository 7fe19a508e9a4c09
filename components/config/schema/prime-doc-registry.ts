import { z } from "zod";

/*
 * Where prime-rl's layout keeps what each key means (prime-docs.ts): a zod registry of descriptions
 * and prime-rl's defaults, read by `z.toJSONSchema` in bin/schema.ts. A leaf module, so a target's
 * config part can document the keys it adds to prime-rl's layout ([vllm_fleet.slurm]).
 */

export interface PrimeDoc {
  description: string;
  default?: unknown;
}

/** Descriptions and prime-rl defaults of prime-rl's layout (test/bin/schema.test.ts: every key has one). */
export const primeDocs = z.registry<PrimeDoc, z.core.$ZodType>();

/** Documents one key of prime-rl's layout: its description, and prime-rl's default where vllm-fleet acts on it with that default. */
export function primeDoc(schema: z.ZodType | undefined, description: string, def?: unknown): void {
  if (!schema) throw new Error(`prime-docs: no schema for "${description}"`);
  primeDocs.add(schema, def === undefined ? { description } : { description, default: def });
}
