import * as fs from "node:fs";
import * as path from "node:path";
import type { z } from "zod";
import { type Catalog, loadCatalog } from "./catalog";
import { ConfigError, ConfigIssue, joinPath } from "./issues";
import { applyDefaults, toCanonicalInput } from "./normalise";
import { applyOverrides, Override } from "./overrides";
import { UserPaths } from "./paths";
import { checkRules } from "./rules";
import { inferenceShape } from "./schema/inference";
import { rlLayout, standaloneLayout } from "./schema/layouts";
import { parseToml, TomlTable } from "./toml";
import type { FleetConfig } from "./types";

export type Layout = "standalone" | "rl";

/** An RL config nests inference under [inference]; anything else is the standalone layout. */
export function detectLayout(raw: TomlTable): Layout {
  return "inference" in raw ? "rl" : "standalone";
}

/** A schema issue, marked when it is an unknown key (removing one changes nothing a rule reads). */
type SchemaIssue = ConfigIssue & { unknownKey?: true };

/** Turns zod issues into ConfigIssues with user paths; unknown keys become one issue per key. */
function fromZod(error: z.ZodError, layout: Layout): SchemaIssue[] {
  const out: SchemaIssue[] = [];
  for (const iss of error.issues) {
    const path = joinPath(...(iss.path as (string | number)[]));
    if (iss.code === "unrecognized_keys") {
      const messages = iss.message.split("\n");
      iss.keys.forEach((key, i) => {
        let message = messages[i] ?? `unknown key "${key}"`;
        if (layout === "rl" && path === "inference" && key === "model_catalog") {
          message = `"model_catalog" belongs at the top level of the file, not under [inference]`;
        } else if (layout === "rl" && path === "" && key in inferenceShape) {
          message = `"${key}" belongs under [inference] (this file uses the RL layout because it has an [inference] table)`;
        } else if (layout === "standalone" && path === "" && ["num_infer_replicas", "num_infer_nodes"].includes(key)) {
          message = `"${key}" is an RL-layout key: it goes in the top-level [deployment] of a file whose inference settings are under [inference]`;
        }
        out.push({ path: joinPath(path, key), message, unknownKey: true });
      });
    } else if (iss.code === "invalid_type" && (path === "model" || path === "inference.model")) {
      out.push({ path, message: 'must be a model name string or a [model] table with at least "name"' });
    } else {
      out.push({ path, message: friendly(iss) });
    }
  }
  return out;
}

function friendly(iss: z.core.$ZodIssue): string {
  const input = (iss as { input?: unknown }).input;
  if (iss.code === "invalid_type" && typeof input === "bigint") return "is too large (beyond 2^53)";
  if (iss.code === "invalid_type" && iss.expected === "int" && typeof input === "number") {
    if (Number.isInteger(input)) return "is too large (beyond 2^53)";
    if (!iss.message.startsWith("Invalid input")) return iss.message; // the schema's own wording
    return "must be a whole number";
  }
  if (iss.code === "invalid_key") return (iss as unknown as { issues: { message: string }[] }).issues.map((i) => i.message).join("; ");
  if (iss.code === "invalid_type") {
    if (input === undefined) return `is required (expected ${iss.expected})`;
    return `expected ${iss.expected === "object" ? "a table" : iss.expected}, got ${Array.isArray(input) ? "an array" : typeof input}`;
  }
  if (iss.code === "invalid_value" && "values" in iss) return `must be one of ${(iss.values as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`;
  return iss.message.replace(/^Invalid input: /, "").replace(/^Too small: expected number to be /, "must be ").replace(/^Too big: expected number to be /, "must be ");
}

/** Removes the value at a dotted path; false when there was nothing there to remove. */
function deletePath(obj: any, path: string): boolean {
  const parts = path.split(".");
  const last = parts.pop()!;
  const parent = parts.reduce((t, k) => (t && typeof t === "object" ? t[k] : undefined), obj);
  if (!parent || typeof parent !== "object" || !(last in parent)) return false;
  delete parent[last];
  return true;
}

const parentOf = (path: string) => path.split(".").slice(0, -1).join(".");

/** Whether `path` is one of `roots` or lies inside one ("" is the whole file). */
const isUnder = (path: string, roots: string[]) => roots.some((p) => p === "" || path === p || path.startsWith(p + "."));

/**
 * `model = "x"` is shorthand for a [model] table. Expanding it before validation keeps the table
 * schema's precise errors (a union would only say "invalid input" at `model`).
 */
function expandModelShorthand(data: TomlTable, layout: Layout): string | undefined {
  const holder = (layout === "rl" ? data.inference : data) as Record<string, unknown> | undefined;
  if (holder && typeof holder === "object" && typeof holder.model === "string") {
    holder.model = { name: holder.model };
    return layout === "rl" ? "inference.model" : "model";
  }
  return undefined;
}

/**
 * The built-in catalog, with the stack file's `model_catalog` merged over it. A file that cannot be
 * read is the stack file's problem (an issue at model_catalog); a file with bad content throws its
 * own ConfigError, which names that file and the key path inside it.
 */
function stackCatalog(file: unknown, baseDir: string): { catalog: Catalog; issues: ConfigIssue[] } {
  if (typeof file !== "string") return { catalog: loadCatalog(), issues: [] };
  const resolved = path.resolve(baseDir, file);
  if (!fs.existsSync(resolved)) {
    return { catalog: loadCatalog(), issues: [{ path: "model_catalog", message: `cannot read ${resolved} (a relative path is relative to the stack file's directory, ${baseDir})` }] };
  }
  return { catalog: loadCatalog(resolved), issues: [] };
}

/** The value at a canonical dotted path of the config, for messages. */
function valueAt(cfg: FleetConfig, canonical: string): unknown {
  return canonical.split(".").reduce<any>((v, k) => (v && typeof v === "object" ? v[k] : undefined), cfg);
}

/**
 * Validates a parsed stack file and returns the canonical config, or throws one ConfigError that
 * lists every problem: schema problems first, then (with the offending keys set aside) every
 * cross-field rule whose inputs were valid. `baseDir` resolves a relative `model_catalog`.
 */
export function validate(raw: TomlTable, source = "stack file", baseDir = process.cwd()): FleetConfig {
  const { config, issues } = resolve(raw, baseDir);
  if (issues.length || !config) throw new ConfigError(issues, source);
  return config;
}

/**
 * The work of `validate` without the throw: the canonical config (undefined only when the schema
 * could not be satisfied even with the offending keys set aside) and every problem found.
 */
export function resolve(raw: TomlTable, baseDir = process.cwd()): { config?: FleetConfig; issues: ConfigIssue[] } {
  const layout = detectLayout(raw);
  const schema = layout === "rl" ? rlLayout : standaloneLayout;
  // Set-aside keys are deleted from this copy; a table's omitted `type` is the schema's default.
  let data = structuredClone(raw);
  const shorthand = expandModelShorthand(data, layout);
  const atShorthand = (p: string) => (shorthand && p === `${shorthand}.name` ? shorthand : p);
  const schemaIssues: ConfigIssue[] = [];
  const setAside: string[] = [];
  const reported = new Set<string>();
  let parsed: Record<string, unknown> | undefined;
  for (let attempt = 0; attempt < 8; attempt++) {
    const result = schema.safeParse(data, { reportInput: true });
    if (result.success) {
      parsed = result.data as Record<string, unknown>;
      break;
    }
    const earlier = setAside.filter((p) => p !== "");
    const removed: string[] = [];
    for (const { unknownKey, ...found } of fromZod(result.error, layout)) {
      const i = { ...found, path: atShorthand(found.path) };
      // Removing a key can make its table report it "required" in the next pass: already reported.
      if (!isUnder(found.path, earlier) && !reported.has(i.path + i.message)) {
        schemaIssues.push(i);
        reported.add(i.path + i.message);
      }
      if (isUnder(found.path, removed)) continue; // its table is gone already this pass
      // A table with a bad discriminator cannot be read at all: set the whole table aside.
      let target = found.path === "type" ? "" : found.path.endsWith(".type") ? parentOf(found.path) : found.path;
      if (target === "") {
        data = {};
      } else if (!deletePath(data, target)) {
        // Nothing there to remove (a required key is missing): set its table aside instead.
        target = parentOf(target);
        if (target === "") data = {};
        else deletePath(data, target);
      }
      removed.push(target);
      // An unknown key changes nothing a rule reads; only rejected values keep rules from running.
      if (!unknownKey) setAside.push(target);
    }
  }
  if (!parsed) return { issues: schemaIssues };

  const paths = new UserPaths(layout);
  if (shorthand) paths.record("model.name", shorthand);
  // What the file says (the schema's defaults come in after the model catalog's, in applyDefaults).
  const input = toCanonicalInput(data, layout, paths);
  const { catalog, issues: catalogIssues } = stackCatalog(parsed.model_catalog, baseDir);
  const { config, issues, filled } = applyDefaults(input, layout, paths, catalog);
  // A rule is skipped when a value it read was set aside (it would judge a default, not the file).
  const touchesSetAside = (userPath: string) => isUnder(userPath, setAside);
  // A rule that read a catalog default says so: the user never wrote that value.
  const fromCatalog = (involves: string[]) => {
    const keys = [...new Set(involves)].filter((c) => filled.includes(c));
    if (!keys.length) return "";
    const values = keys.map((c) => `${paths.user(c)} = ${JSON.stringify(valueAt(config, c))}`).join(", ");
    return ` (${values} ${keys.length === 1 ? "is the model catalog's default" : "are the model catalog's defaults"} for ${config.catalog?.id}; set ${keys.length === 1 ? "it" : "them"} in the stack file to override)`;
  };
  const ruleIssues = checkRules(config)
    .filter((r) => !r.involves.some((c) => touchesSetAside(paths.user(c))))
    .map((r) => ({ path: paths.user(r.path), message: r.message.replace(/\{key:([A-Za-z0-9_.-]+)\}/g, (_, k: string) => paths.user(k)) + fromCatalog(r.involves) }));
  return { config, issues: dedupe([...schemaIssues, ...catalogIssues, ...issues.filter((i) => !touchesSetAside(i.path)), ...ruleIssues]) };
}

function dedupe(issues: ConfigIssue[]): ConfigIssue[] {
  const seen = new Set<string>();
  return issues.filter((i) => {
    const id = `${i.path}\n${i.message}`;
    return seen.has(id) ? false : (seen.add(id), true);
  });
}

/**
 * Parses TOML text (with optional CLI overrides) into the canonical config. A relative
 * `model_catalog` is resolved against `baseDir` (the current directory unless told).
 */
export function loadConfigText(text: string, source = "stack file", overrides: Override[] = [], baseDir = process.cwd()): FleetConfig {
  const parsed = parseToml(text);
  if (!parsed.ok) throw new ConfigError([parsed.issue], source);
  const { value, issues } = applyOverrides(parsed.value, overrides);
  if (issues.length) throw new ConfigError(issues, source);
  return validate(value, source, baseDir);
}

export function loadConfigFile(file: string, overrides: Override[] = []): FleetConfig {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (err: any) {
    throw new ConfigError([{ path: "", message: `cannot read ${file}: ${err.code ?? err.message}` }], file);
  }
  return loadConfigText(text, file, overrides, path.dirname(path.resolve(file)));
}
