import * as TOML from "@iarna/toml";
import type { ConfigIssue } from "./issues";
import { MODEL_KEYS } from "./normalise-prime";
import { VLLM_CANONICAL_KEYS } from "./schema/prime";
import type { TomlTable } from "./toml";

/** One `--key.path value` from the command line, in the stack file's own layout. */
export interface Override {
  path: string[];
  value: unknown;
}

/**
 * Parses dotted command-line overrides: `--server.port 8001 --model.enforce_eager --model.max_model_len 2048`.
 * A flag without a value (or followed by another flag) means true; values are read as TOML literals
 * (numbers, booleans, arrays, inline tables, quoted strings) and otherwise kept as plain strings.
 * Dashes in key names are read as underscores, as prime-rl's CLI does.
 */
export function parseOverrides(args: string[]): { overrides: Override[]; rest: string[] } {
  const overrides: Override[] = [];
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith("--") || arg === "--") {
      rest.push(arg);
      continue;
    }
    let key = arg.slice(2);
    let raw: string | undefined;
    const eq = key.indexOf("=");
    if (eq >= 0) {
      raw = key.slice(eq + 1);
      key = key.slice(0, eq);
    } else if (i + 1 < args.length && !args[i + 1].startsWith("--")) {
      raw = args[++i];
    }
    overrides.push({ path: keyPath(key), value: raw === undefined ? true : literal(raw) });
  }
  return { overrides, rest };
}

/** `server.max-model-len` -> ["server", "max_model_len"]: dashes read as underscores, as prime-rl's CLI does. */
function keyPath(key: string): string[] {
  return key.split(".").map((p) => p.replace(/-/g, "_"));
}

function literal(raw: string): unknown {
  try {
    return (TOML.parse(`v = ${raw}`) as { v: unknown }).v;
  } catch {
    return raw;
  }
}

/** Applies overrides to a parsed stack file; overriding into a non-table is an error naming the key. */
export function applyOverrides(doc: TomlTable, overrides: Override[]): { value: TomlTable; issues: ConfigIssue[] } {
  const value = structuredClone(doc);
  const issues: ConfigIssue[] = [];
  for (const { path, value: v } of overrides) {
    let table: any = value;
    let ok = true;
    for (const [i, key] of path.slice(0, -1).entries()) {
      if (table[key] === undefined) table[key] = {};
      if (typeof table[key] !== "object" || Array.isArray(table[key])) {
        issues.push({
          path: path.slice(0, i + 1).join("."),
          message: `--${path.join(".")} cannot be applied: ${path.slice(0, i + 1).join(".")} is not a table`,
        });
        ok = false;
        break;
      }
      table = table[key];
    }
    if (ok) table[path[path.length - 1]] = v instanceof Object && !Array.isArray(v) ? plainObject(v) : v;
  }
  return { value, issues };
}

function plainObject(v: object): unknown {
  return JSON.parse(JSON.stringify(v));
}

/**
 * Overrides from the Pulumi config object `overrides` ({"slurm.partition": "gpu", ...}): the same
 * dotted keys as `plan --key.path value`, for per-environment tweaks without editing the stack file.
 */
export function overridesFromObject(raw: unknown, source = "overrides"): Override[] {
  if (raw === undefined || raw === null) return [];
  if (typeof raw !== "object" || Array.isArray(raw))
    throw new Error(`${source} must be an object of "dotted.key": value pairs`);
  return Object.entries(raw as Record<string, unknown>).map(([key, value]) => {
    if (!/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/.test(key))
      throw new Error(`${source}: "${key}" is not a dotted key such as slurm.partition`);
    return { path: keyPath(key), value };
  });
}

/**
 * prime-rl's spellings (`--vllm.model X --vllm.enforce-eager --vllm.max-num-seqs 64`, in an RL
 * file also `--inference.vllm.*`) for a file in the older layout: each is rewritten to the key that
 * layout has for it ([model], [parallel], the inference keys, vllm_extra). A file in prime-rl's
 * layout takes them as they are.
 */
export function olderLayoutSpellings(doc: TomlTable, overrides: Override[]): Override[] {
  const rl = "inference" in doc;
  const holder = (rl ? doc.inference : doc) as Record<string, unknown> | undefined;
  const base = rl ? ["inference"] : [];
  // `model = "<id>"` is shorthand for a [model] table: made one when a [model] key other than the name is overridden.
  const shorthand = typeof holder?.model === "string" ? holder.model : undefined;
  const expand: Override[] = [];
  const rewritten = overrides.map((o) => {
    const at = o.path[0] === "vllm" ? 1 : rl && o.path[0] === "inference" && o.path[1] === "vllm" ? 2 : -1;
    if (at < 0 || o.path.length <= at) return o;
    const [key, ...rest] = o.path.slice(at);
    let path: string[];
    if (key === "model") path = ["model", "name"];
    else if (key === "tensor_parallel_size") path = ["parallel", "tp"];
    else if (key === "data_parallel_size") path = ["parallel", "dp"];
    else if (MODEL_KEYS.has(key)) path = ["model", key];
    else if (VLLM_CANONICAL_KEYS.has(key)) path = [key];
    else path = ["vllm_extra", key];
    if (path[0] === "model" && shorthand !== undefined && !expand.length)
      expand.push({ path: [...base, "model"], value: { name: shorthand } });
    return { ...o, path: [...base, ...path, ...rest] };
  });
  return [...expand, ...rewritten];
}
