import * as TOML from "@iarna/toml";
import type { z } from "zod";
import type { ConfigIssue } from "./issues";
import { MODEL_KEYS } from "./normalise-prime";
import { rlLayout, standaloneLayout } from "./schema/layouts";
import { primeRlLayout, primeStandaloneLayout, VLLM_CANONICAL_KEYS } from "./schema/prime";
import type { TomlTable } from "./toml";
// prime-rl's [vllm] table is `vllm serve`'s flags: vLLM's manifest spells them.
import { flagName, vllmFlags } from "../plan/engines/vllm/config/flags";
import { VLLM_VERSIONS } from "../plan/engines/vllm/config/version";

/** One `--key.path value` from the command line, in the stack file's own layout. */
export interface Override {
  path: string[];
  /** The value read as a TOML literal (or the text itself when it is none). */
  value: unknown;
  /** The text as typed on the command line, for a key the schema types as a string (applyOverrides). */
  raw?: string;
}

/**
 * Parses dotted command-line overrides: `--server.port 8001 --model.enforce_eager --model.max_model_len 2048`.
 * A flag without a value (or followed by another flag) means true; values are read as TOML literals
 * (numbers, booleans, arrays, inline tables, quoted strings) and otherwise kept as plain strings,
 * except that a key the schema types as a string takes the text as typed (`--slurm.time 04:00:00`
 * is a string, not a TOML time; applyOverrides decides, knowing the file's layout). Dashes in key
 * names are read as underscores, as prime-rl's CLI does.
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
    overrides.push(
      raw === undefined ? { path: keyPath(key), value: true } : { path: keyPath(key), value: literal(raw), raw },
    );
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

/** Which layout the overridden file is in, to type command-line values by its schema. */
export interface OverrideLayout {
  layout: "standalone" | "rl";
  /** prime-rl's current layout (schema/prime.ts). */
  prime: boolean;
}

const schemaOf = ({ layout, prime }: OverrideLayout): z.ZodType =>
  prime ? (layout === "rl" ? primeRlLayout : primeStandaloneLayout) : layout === "rl" ? rlLayout : standaloneLayout;

/** The schema with its wrappers (optional, default, pipe, ...) taken off. */
function unwrap(schema: z.ZodType): z.ZodType {
  let s = schema;
  for (;;) {
    const def = (s as any)._zod.def;
    if (["optional", "nullable", "default", "prefault", "catch", "readonly", "nonoptional"].includes(def.type))
      s = def.innerType;
    else if (def.type === "pipe") s = def.in;
    else if (def.type === "lazy") s = def.getter();
    else return s;
  }
}

/** The schemas a dotted path can reach (one per union option that has it); none for an unknown key. */
function schemasAt(schema: z.ZodType, path: string[]): z.ZodType[] {
  const s = unwrap(schema);
  if (!path.length) return [s];
  const def = (s as any)._zod.def;
  const [key, ...rest] = path;
  if (def.type === "object") return Object.hasOwn(def.shape, key) ? schemasAt(def.shape[key], rest) : [];
  if (def.type === "union") return (def.options as z.ZodType[]).flatMap((o) => schemasAt(o, path));
  if (def.type === "record") return schemasAt(def.valueType, rest);
  return [];
}

/** Whether a value of this schema may be a string (a string, an enum or literal of strings, a union with one). */
function takesString(schema: z.ZodType): boolean {
  const def = (unwrap(schema) as any)._zod.def;
  if (def.type === "string" || def.type === "template_literal") return true;
  if (def.type === "enum") return Object.values(def.entries).some((v) => typeof v === "string");
  if (def.type === "literal") return (def.values as unknown[]).some((v) => typeof v === "string");
  if (def.type === "union") return (def.options as z.ZodType[]).some(takesString);
  return false;
}

/**
 * The value of a command-line override: the text as typed for a key the schema types as a string
 * (unquoted if it was written as a quoted TOML string), else its TOML literal. vllm_extra keys are
 * typed by the `vllm serve` manifest.
 */
function typedValue(o: Override, layout: OverrideLayout | undefined): unknown {
  if (o.raw === undefined || !layout) return o.value;
  const at = o.path.indexOf("vllm_extra");
  const stringy =
    !layout.prime && at >= 0 && at === o.path.length - 2
      ? VLLM_VERSIONS.some((v) => vllmFlags(v)[flagName(o.path[at + 1])]?.type === "str")
      : (() => {
          const leaves = schemasAt(schemaOf(layout), o.path);
          return leaves.length > 0 && leaves.every(takesString);
        })();
  if (!stringy) return o.value;
  return typeof o.value === "string" ? o.value : o.raw;
}

/**
 * Applies overrides to a parsed stack file; overriding into a non-table is an error naming the key.
 * `layout` (the file's) types command-line values by the schema.
 */
export function applyOverrides(
  doc: TomlTable,
  overrides: Override[],
  layout?: OverrideLayout,
): { value: TomlTable; issues: ConfigIssue[] } {
  const value = structuredClone(doc);
  const issues: ConfigIssue[] = [];
  for (const o of overrides) {
    const path = o.path;
    const v = typedValue(o, layout);
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
    // not an engine: prime-rl's [vllm] table
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
