import type { z } from "zod";
import { type ConfigIssue, joinPath } from "./issues";
import { isTable, type Layout } from "./layout-markers";
import { lookalikeNote } from "./lookalike";
import { inferenceShape } from "./schema/inference";
import { primeInferenceShape } from "./schema/prime";
import { TARGET_PARTS } from "./target-registry";

/* The schema's (zod's) issues in the stack file's words: the key as the file spells it and a plain reason. */

/** A schema issue, marked when it is an unknown key (removing one changes nothing a rule reads). */
export type SchemaIssue = ConfigIssue & { unknownKey?: true };

/** Whether `key`, refused in prime-rl's own table `path` (its [slurm]), is a key of our [vllm_fleet.<path>] table. */
const primeFleetKey = (path: string, key: string): boolean =>
  TARGET_PARTS.some(
    (part) => part.kind === path && part.primeFleetTable !== undefined && key in part.primeFleetTable.shape,
  );

/** Turns zod issues into ConfigIssues with user paths; unknown keys become one issue per key. */
export function fromZod(error: z.ZodError, layout: Layout, prime = false): SchemaIssue[] {
  const out: SchemaIssue[] = [];
  for (const iss of error.issues) {
    const path = joinPath(...(iss.path as (string | number)[]));
    if (iss.code === "unrecognized_keys") {
      const messages = iss.message.split("\n");
      iss.keys.forEach((key, i) => {
        let message = messages[i] ?? `unknown key "${key}"`;
        if (layout === "rl" && path === "inference" && key === "model_catalog") {
          message = `"model_catalog" belongs at the top level of the file, not under [inference]`;
        } else if (layout === "rl" && path === "" && key in (prime ? primeInferenceShape : inferenceShape)) {
          message = `"${key}" belongs under [inference] (this file uses the RL layout because it has an [inference] table)`;
        } else if (prime && key === "release" && /(^|\.)router$/.test(path)) {
          message = `"release" is vllm-fleet's key, which prime-rl's [router] does not have (its VllmRouterConfig forbids extra keys): set router_release under [vllm_fleet] instead`;
        } else if (prime && primeFleetKey(path, key)) {
          message = `"${key}" is a vllm-fleet key that prime-rl's [${path}] does not have: put it under [vllm_fleet.${path}] (prime-rl's [${path}] forbids extra keys)`;
        } else if (layout === "standalone" && path === "" && ["num_infer_replicas", "num_infer_nodes"].includes(key)) {
          message = `"${key}" is an RL-layout key: it goes in the top-level [deployment] of a file whose inference settings are under [inference]`;
        }
        out.push({ path: joinPath(path, key), message, unknownKey: true });
      });
    } else if (iss.code === "invalid_type" && (path === "model" || path === "inference.model")) {
      out.push({ path, message: 'must be a model name string or a [model] table with at least "name"' });
    } else {
      out.push({ path, message: friendly(iss) + lookalikes(iss) });
    }
  }
  return out;
}

/**
 * A refused value (or record key) that looks right but holds a look-alike character says which; a
 * table's bad discriminator is reported with the table as its input.
 */
function lookalikes(iss: z.core.$ZodIssue): string {
  const input = (iss as { input?: unknown }).input;
  const last = iss.path[iss.path.length - 1];
  const value =
    typeof input === "string"
      ? input
      : isTable(input) && typeof last === "string" && typeof input[last] === "string"
        ? input[last]
        : undefined;
  return value === undefined ? "" : lookalikeNote(value, iss.code === "invalid_key" ? "the key" : "the value");
}

function friendly(iss: z.core.$ZodIssue): string {
  const input = (iss as { input?: unknown }).input;
  if (iss.code === "invalid_type" && typeof input === "bigint") return "is too large (beyond 2^53)";
  if (iss.code === "invalid_type" && iss.expected === "int" && typeof input === "number") {
    if (Number.isInteger(input)) return "is too large (beyond 2^53)";
    if (!iss.message.startsWith("Invalid input")) return iss.message; // the schema's own wording
    return "must be a whole number";
  }
  if (iss.code === "invalid_key")
    return (iss as unknown as { issues: { message: string }[] }).issues.map((i) => i.message).join("; ");
  if (iss.code === "invalid_type") {
    if (input === undefined) return `is required (expected ${iss.expected})`;
    if (!iss.message.startsWith("Invalid input")) return iss.message; // the schema's own wording
    return `expected ${iss.expected === "object" ? "a table" : iss.expected}, got ${Array.isArray(input) ? "an array" : typeof input}`;
  }
  if (iss.code === "invalid_value" && "values" in iss)
    return `must be one of ${(iss.values as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`;
  return iss.message
    .replace(/^Invalid input: /, "")
    .replace(/^Too small: expected number to be /, "must be ")
    .replace(/^Too big: expected number to be /, "must be ");
}
