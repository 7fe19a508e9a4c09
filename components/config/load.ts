import * as fs from "node:fs";
import * as path from "node:path";
import type { z } from "zod";
import { type Catalog, loadCatalog } from "./catalog";
import { ConfigError, ConfigIssue, joinPath } from "./issues";
import { lookalikeNote } from "./lookalike";
import { applyDefaults, olderRlIgnored, toCanonicalInput } from "./normalise";
import { primeToCanonicalInput } from "./normalise-prime";
import { applyOverrides, olderLayoutSpellings, Override } from "./overrides";
import { UserPaths } from "./paths";
import { checkRules } from "./rules";
import { inferenceShape } from "./schema/inference";
import { rlLayout, standaloneLayout } from "./schema/layouts";
import {
  isSftFile,
  OLDER_ONLY,
  PRIME_MARKERS,
  PRIME_RL_IGNORED_TABLES,
  primeFleetSlurmTable,
  primeInferenceShape,
  primeRlLayout,
  primeSftLayout,
  primeStandaloneLayout,
  primeVllmShape,
} from "./schema/prime";
import { parseToml, TomlTable } from "./toml";
import { hasServices, SERVICE_PORT_STRIDE, serviceIssuePath, splitServices, type ServiceDocument } from "./services";
import type { FleetConfig } from "./types";
import { DEFAULT_TARGET, otherTargets, settingsFor, TARGETS, type TargetKind } from "./target-kinds";

export type Layout = "standalone" | "rl";

/** An RL config nests inference under [inference]; anything else is the standalone layout. */
export function detectLayout(raw: TomlTable): Layout {
  return "inference" in raw ? "rl" : "standalone";
}

const isTable = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Whether the file has a key only prime-rl's current layout has (packages/prime-rl-configs/src/
 * prime_rl/configs/inference.py since PR #3202): at the inference root ([vllm], [router], ...), or
 * in an RL file without an older-layout key at its inference root, a table of prime-rl's RLConfig.
 */
export function hasPrimeMarker(raw: TomlTable, layout: Layout): boolean {
  const holder = layout === "rl" ? raw.inference : raw;
  if (isTable(holder) && PRIME_MARKERS.some((k) => k in holder)) return true;
  if (layout !== "rl") return false;
  if (isSftFile(raw)) return true; // prime-rl's SFT file: its [inference] serves online evals
  // [inference] model = "..." or [inference.parallel] is the older layout's: prime-rl's RL tables
  // beside it are a whole RL file in that layout (as prime-rl's docs/inference.md wrote one), not prime-rl's current one.
  if (hasOlderMarker(raw, layout)) return false;
  // Not [trainer]: the older RL layout has one too (RLConfig requires [orchestrator], which it lacks).
  const rlOnly = [...PRIME_RL_IGNORED_TABLES, "env_vars"].filter((k) => k !== "trainer");
  if (rlOnly.some((k) => k in raw)) return true;
  return isTable(raw.deployment) && ("num_train_gpus" in raw.deployment || "num_infer_gpus" in raw.deployment);
}

/** Whether the file has a key only the older layout has: [model], [parallel], vllm_extra, ... at the inference root, or model_catalog. */
function hasOlderMarker(raw: TomlTable, layout: Layout): boolean {
  const holder = layout === "rl" ? raw.inference : raw;
  return "model_catalog" in raw || (isTable(holder) && OLDER_ONLY.some((k) => k in holder));
}

/** Where the current layout keeps each of the older layout's inference keys. */
function currentName(key: string): string {
  if (key === "model") return "vllm.model (and the other [model] keys under [vllm])";
  if (key === "parallel") return "vllm.tensor_parallel_size / vllm.data_parallel_size";
  if (key === "vllm_extra") return "extra keys of [vllm]";
  return `vllm.${key}`;
}

/** A file mixing prime-rl's current layout with the older one: one issue per older key, naming both. */
function mixedLayout(raw: TomlTable, layout: Layout): ConfigIssue[] {
  const holder = layout === "rl" ? raw.inference : raw;
  if (!isTable(holder)) return [];
  const at = (k: string) => (layout === "rl" ? `inference.${k}` : k);
  const marker = PRIME_MARKERS.find((k) => k in holder);
  const current = marker ? at(marker) : "prime-rl's RL tables";
  return OLDER_ONLY.filter((k) => k in holder).map((k) => ({
    path: at(k),
    message: `Extra inputs are not permitted: this file uses prime-rl's current layout (${current}), where "${k}" is a key of the older layout; use ${at(currentName(k))} instead, and do not mix the two`,
  }));
}

/**
 * prime-rl reads [vllm]'s keys kebab or snake, and JSON-parses the string values of its extra keys
 * (VllmConfig's before-validator); done here so the schema and vllm_extra see one spelling.
 */
function normaliseVllmKeys(data: TomlTable, layout: Layout): ConfigIssue[] {
  const holder = layout === "rl" ? data.inference : data;
  if (!isTable(holder) || !isTable(holder.vllm)) return [];
  const issues: ConfigIssue[] = [];
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(holder.vllm)) {
    const snake = key.replace(/-/g, "_");
    if (snake in out)
      issues.push({
        path: `${layout === "rl" ? "inference." : ""}vllm.${key}`,
        message: `is given twice (also as ${snake === key ? key.replace(/_/g, "-") : snake})`,
      });
    let v = value;
    if (typeof v === "string" && !(snake in primeVllmShape)) {
      try {
        v = JSON.parse(v);
      } catch {
        // not JSON: the string itself
      }
    }
    out[snake] = v;
  }
  holder.vllm = out;
  return issues;
}

/** A schema issue, marked when it is an unknown key (removing one changes nothing a rule reads). */
type SchemaIssue = ConfigIssue & { unknownKey?: true };

/** Turns zod issues into ConfigIssues with user paths; unknown keys become one issue per key. */
function fromZod(error: z.ZodError, layout: Layout, prime = false): SchemaIssue[] {
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
          // not a target: prime-rl's own [slurm] table
        } else if (prime && path === "slurm" && key in primeFleetSlurmTable.shape) {
          message = `"${key}" is a vllm-fleet key that prime-rl's [slurm] does not have: put it under [vllm_fleet.slurm] (prime-rl's SlurmConfig forbids extra keys)`;
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
const isUnder = (path: string, roots: string[]) =>
  roots.some((p) => p === "" || path === p || path.startsWith(p + "."));

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
    return {
      catalog: loadCatalog(),
      issues: [
        {
          path: "model_catalog",
          message: `cannot read ${resolved} (a relative path is relative to the stack file's directory, ${baseDir})`,
        },
      ],
    };
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
export function validate(raw: TomlTable, source = "stack file", baseDir = process.cwd(), asPrime = false): FleetConfig {
  const { config, issues } = resolve(raw, baseDir, asPrime);
  if (issues.length || !config) throw new ConfigError(issues, source);
  return config;
}

/**
 * The work of `validate` without the throw: the canonical config (undefined only when the schema
 * could not be satisfied even with the offending keys set aside) and every problem found.
 */
export function resolve(
  raw: TomlTable,
  baseDir = process.cwd(),
  asPrime = false,
): { config?: FleetConfig; issues: ConfigIssue[] } {
  const { config, issues } = chooseLayout(raw, baseDir, asPrime).result;
  return { config, issues };
}

/** What reading a file in one layout gives, with the paths of the keys that layout does not know. */
interface Reading {
  config?: FleetConfig;
  issues: ConfigIssue[];
  unknown: string[];
}

const LAYOUT_NAMES = { prime: "prime-rl's current layout", older: "the older layout" } as const;

/**
 * Which of the two layouts a file is read in.
 *
 * 1. A key only one layout has decides (hasPrimeMarker, hasOlderMarker); a file with keys of both
 *    is read as prime-rl's and refused for mixing them (mixedLayout).
 * 2. A file with only keys both layouts share ([deployment], [server], [slurm], [kubernetes],
 *    [kv_cache_offload], env_vars, backend_port, output_dir, dry_run; in an RL file also [model],
 *    [trainer] and the top-level [deployment]) is read in the older layout if it loads there
 *    without a problem, else in prime-rl's if it loads there. Older first, so a file that loaded
 *    before loads the same way (the stacks in stacks/, vllm-fleet's own RL files). The two
 *    readings differ (prime-rl's defaults, its engine server), but a file can seldom be valid in
 *    both: a standalone one never (the older layout needs a model name and no shared key gives
 *    one), an RL one only with a [model] name, and prime-rl's RLConfig requires [orchestrator],
 *    which is a marker.
 * 3. A file valid in neither is read in the layout it resembles more: the one that knows more of
 *    its keys, then the one with fewer problems, then the older one. Its errors name each key as
 *    that layout spells it, and a key only the other layout knows says so.
 *
 * `asPrime` (a file with no target of its own, deployed on a target named outside it): prime-rl's
 * layout, whatever the keys, as prime-rl reads such a file. The older layout always names its
 * target in the file, so only a file written for prime-rl comes this way; an older-layout key in
 * it is refused as prime-rl refuses it (`model: Extra inputs are not permitted`).
 */
export function chooseLayout(
  raw: TomlTable,
  baseDir = process.cwd(),
  asPrime = false,
): { prime: boolean; result: Reading } {
  const layout = detectLayout(raw);
  if (asPrime) {
    const reading = resolveIn(raw, baseDir, layout, true);
    const why =
      "a file with no [slurm], [kubernetes] or [local] table of its own (run on this machine, or on the target --target / vllm-fleet:target names) is read as prime-rl reads it; a file in vllm-fleet's older layout names its target in the file";
    const older = (p: string) => OLDER_ONLY.includes(p.replace(/^inference\./, ""));
    const issues = reading.issues.map((i) =>
      older(i.path)
        ? {
            ...i,
            message: `Extra inputs are not permitted: prime-rl's layout has no "${i.path.split(".").pop()}" (use ${currentName(i.path.split(".").pop()!)}); ${why}`,
          }
        : reading.unknown.includes(i.path)
          ? { ...i, message: `${i.message} (${why})` }
          : i,
    );
    return { prime: true, result: { ...reading, issues } };
  }
  if (hasPrimeMarker(raw, layout)) return { prime: true, result: resolveIn(raw, baseDir, layout, true) };
  if (hasOlderMarker(raw, layout)) return { prime: false, result: resolveIn(raw, baseDir, layout, false) };
  const older = resolveIn(raw, baseDir, layout, false);
  if (!older.issues.length) return { prime: false, result: older };
  const prime = resolveIn(raw, baseDir, layout, true);
  if (!prime.issues.length) return { prime: true, result: prime };
  const primeCloser =
    prime.unknown.length !== older.unknown.length
      ? prime.unknown.length < older.unknown.length
      : prime.issues.length < older.issues.length;
  const [chosen, other] = primeCloser ? [prime, older] : [older, prime];
  const [name, otherName] = primeCloser
    ? [LAYOUT_NAMES.prime, LAYOUT_NAMES.older]
    : [LAYOUT_NAMES.older, LAYOUT_NAMES.prime];
  // A key this layout does not know, where the other one raised nothing at it or above it.
  const otherKnows = (p: string) =>
    !other.issues.some((i) => i.path !== "" && (p === i.path || p.startsWith(i.path + ".")));
  const issues = chosen.issues.map((i) =>
    chosen.unknown.includes(i.path) && otherKnows(i.path)
      ? {
          ...i,
          message: `${i.message} ("${i.path.split(".").pop()}" is a key of ${otherName}; the rest of this file reads as ${name}, and a file keeps to one layout)`,
        }
      : i,
  );
  return { prime: primeCloser, result: { ...chosen, issues } };
}

/** Whether a file (before overrides) is read in prime-rl's layout: chooseLayout's answer. */
export function readsAsPrime(raw: TomlTable, baseDir = process.cwd()): boolean {
  return chooseLayout(raw, baseDir).prime;
}

/** Reads a file in the given layout: the work of `resolve` once the layout is chosen. */
function resolveIn(raw: TomlTable, baseDir: string, layout: Layout, prime: boolean): Reading {
  if (prime) {
    const mixed = mixedLayout(raw, layout);
    if (mixed.length) return { issues: mixed, unknown: mixed.map((i) => i.path) };
  }
  const schema = prime
    ? layout === "rl"
      ? isSftFile(raw)
        ? primeSftLayout
        : primeRlLayout
      : primeStandaloneLayout
    : layout === "rl"
      ? rlLayout
      : standaloneLayout;
  // Set-aside keys are deleted from this copy; a table's omitted `type` is the schema's default.
  let data = structuredClone(raw);
  const keyIssues = prime ? normaliseVllmKeys(data, layout) : [];
  const shorthand = prime ? undefined : expandModelShorthand(data, layout);
  const atShorthand = (p: string) => (shorthand && p === `${shorthand}.name` ? shorthand : p);
  const schemaIssues: ConfigIssue[] = [...keyIssues];
  const unknown: string[] = [];
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
    for (const { unknownKey, ...found } of fromZod(result.error, layout, prime)) {
      const i = { ...found, path: atShorthand(found.path) };
      // Removing a key can make its table report it "required" in the next pass: already reported.
      if (!isUnder(found.path, earlier) && !reported.has(i.path + i.message)) {
        schemaIssues.push(i);
        if (unknownKey) unknown.push(i.path);
        reported.add(i.path + i.message);
      }
      if (isUnder(found.path, removed)) continue; // its table is gone already this pass
      // A table with a bad discriminator cannot be read at all: set the whole table aside.
      let aside = found.path === "type" ? "" : found.path.endsWith(".type") ? parentOf(found.path) : found.path;
      if (aside === "") {
        data = {};
      } else if (!deletePath(data, aside)) {
        // Nothing there to remove (a required key is missing): set its table aside instead.
        aside = parentOf(aside);
        if (aside === "") data = {};
        else deletePath(data, aside);
      }
      removed.push(aside);
      // An unknown key changes nothing a rule reads; only rejected values keep rules from running.
      if (!unknownKey) setAside.push(aside);
    }
  }
  if (!parsed) return { issues: schemaIssues, unknown };

  const paths = new UserPaths(layout, prime);
  if (shorthand) paths.record("model.name", shorthand);
  // What the file says (the schema's defaults come in after the model catalog's, in applyDefaults).
  const fromPrime = prime ? primeToCanonicalInput(data, layout, paths) : undefined;
  const input = fromPrime ? fromPrime.input : toCanonicalInput(data, layout, paths);
  const { catalog, issues: catalogIssues } = stackCatalog(parsed.model_catalog, baseDir);
  const { config, issues, filled } = applyDefaults(input, layout, paths, catalog);
  const ignored = fromPrime ? fromPrime.ignored : layout === "rl" ? olderRlIgnored(data) : [];
  if (fromPrime) {
    issues.push(...fromPrime.issues);
    config.notes.push(...fromPrime.notes);
  }
  if (fromPrime || ignored.length) config.ignored = ignored;
  if (ignored.length)
    config.notes.push(
      `ignored (prime-rl settings for its trainer, orchestrator and launcher, which vllm-fleet does not act on): ${ignored.join(", ")}`,
    );
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
    .map((r) => ({
      path: paths.user(r.path),
      message:
        r.message.replace(/\{key:([A-Za-z0-9_.-]+)\}/g, (_, k: string) => paths.user(k)) + fromCatalog(r.involves),
    }));
  return {
    config,
    unknown,
    issues: dedupe([
      ...schemaIssues,
      ...catalogIssues,
      ...issues.filter((i) => !touchesSetAside(i.path)),
      ...ruleIssues,
    ]),
  };
}

function dedupe(issues: ConfigIssue[]): ConfigIssue[] {
  const seen = new Set<string>();
  return issues.filter((i) => {
    const id = `${i.path}\n${i.message}`;
    return seen.has(id) ? false : (seen.add(id), true);
  });
}

export { TARGETS, type TargetKind } from "./target-kinds";

export interface LoadOptions {
  /**
   * The backend named outside the file (`plan --target`, Pulumi config `vllm-fleet:target`), for a
   * file without a [slurm] or [kubernetes] table, such as one written for prime-rl.
   */
  target?: TargetKind;
}

/** The file with the named target's table added when it has neither; naming the other one's backend is an issue. */
export function withTarget(
  doc: TomlTable,
  target: TargetKind | undefined,
): { value: TomlTable; issues: ConfigIssue[] } {
  if (!target) return { value: doc, issues: [] };
  const has = (k: TargetKind) => doc[k] !== undefined || (isTable(doc.inference) && doc.inference[k] !== undefined);
  const other = otherTargets(target).find(has);
  if (other)
    return {
      value: doc,
      issues: [
        {
          path: other,
          message: `the file targets ${other}, but the target ${target} was named outside it (--target / vllm-fleet:target): drop one of them`,
        },
      ],
    };
  return { value: has(target) ? doc : { ...doc, [target]: {} }, issues: [] };
}

/**
 * Parses TOML text (with optional CLI overrides) into the canonical config of its one service. A
 * relative `model_catalog` is resolved against `baseDir` (the current directory unless told). A
 * file with [services] is read with loadStackText.
 */
export function loadConfigText(
  text: string,
  source = "stack file",
  overrides: Override[] = [],
  baseDir = process.cwd(),
  options: LoadOptions = {},
): FleetConfig {
  const services = loadStackText(text, source, overrides, baseDir, options);
  if (services.length !== 1)
    throw new ConfigError(
      [{ path: "services", message: `holds ${services.length} services; this reads a stack of one model` }],
      source,
    );
  return services[0];
}

/**
 * Parses TOML text into one canonical config per service, in the file's order: one (unnamed) for
 * a file without [services], exactly as such a file always read.
 */
export function loadStackText(
  text: string,
  source = "stack file",
  overrides: Override[] = [],
  baseDir = process.cwd(),
  options: LoadOptions = {},
): FleetConfig[] {
  const parsed = parseToml(text);
  if (!parsed.ok) throw new ConfigError([parsed.issue], source);
  if (!hasServices(parsed.value)) return [loadDocument(parsed.value, source, overrides, baseDir, options)];
  const split = splitServices(parsed.value, overrides, (service) => hasPrimeMarker(service, "standalone"));
  const issues = [...split.issues];
  // A file of services names its target or takes the default one; each service is then read in
  // the layout its own keys choose (not as prime-rl reads a file without a target).
  const target = options.target ?? (namesTarget(parsed.value) ? undefined : DEFAULT_TARGET);
  const configs: FleetConfig[] = [];
  for (const service of split.services) {
    const targeted = withTarget(service.doc, target);
    // The target keys the service sets itself ([services.<name>.slurm]) are reported under it.
    const own = (parsed.value.services as Record<string, any>)[service.name] ?? {};
    const ownKeys = TARGETS.flatMap((k) => Object.keys(isTable(own[k]) ? own[k] : {}));
    const at = (p: string) => serviceIssuePath(service, ownKeys, p);
    if (targeted.issues.length) {
      issues.push(...targeted.issues.map((i) => ({ ...i, path: at(i.path) })));
      continue;
    }
    try {
      const cfg = loadDocument(targeted.value, source, split.overrides.get(service.name) ?? [], baseDir, {});
      configs.push({ ...cfg, service: service.name });
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      issues.push(...err.issues.map((i) => ({ ...i, path: at(i.path) })));
    }
  }
  if (!issues.length) issues.push(...servicePorts(configs, split.services));
  // A shared key's problem is found once per service (in each one's layout's words): reported once.
  const shared = new Set<string>();
  const once = issues.filter((i) => i.path.startsWith("services") || (!shared.has(i.path) && shared.add(i.path)));
  if (once.length) throw new ConfigError(dedupe(once), source);
  return configs.map((cfg) => coScheduled(cfg, configs.length));
}

/**
 * Service k's ports, where it leaves them unset, are the defaults + k x SERVICE_PORT_STRIDE; two
 * services the user gave one port are refused naming both keys (Kubernetes aside: every pod has
 * its own address).
 */
function servicePorts(configs: FleetConfig[], services: ServiceDocument[]): ConfigIssue[] {
  configs.forEach((cfg, k) => {
    const shift = services[k].index * SERVICE_PORT_STRIDE;
    if (!cfg.explicit.has("server.port")) cfg.server.port += shift;
    if (!cfg.explicit.has("backend_port")) cfg.backend_port += shift;
  });
  const issues: ConfigIssue[] = [];
  const seen = new Map<number, string>();
  for (const cfg of configs) {
    if (settingsFor(cfg, "kubernetes")) continue;
    const paths = new UserPaths(cfg.layout, cfg.prime_rl === true);
    const ports: [number, string][] = [[cfg.server.port, paths.user("server.port")]];
    if (cfg.backend_port !== cfg.server.port) ports.push([cfg.backend_port, paths.user("backend_port")]);
    for (const [port, key] of ports) {
      const here = `services.${cfg.service}.${key}`;
      const first = seen.get(port);
      if (first === undefined) seen.set(port, here);
      else
        issues.push({
          path: here,
          message: `gives port ${port}, as ${first} does: two services on one host would meet there; give each service its own ports (or leave them unset: service k's default to the usual ones + ${SERVICE_PORT_STRIDE} x k)`,
        });
    }
  }
  return issues;
}

/** slurm.co_schedule unset: one heterogeneous job for a stack of several services. */
function coScheduled(cfg: FleetConfig, services: number): FleetConfig {
  const t = settingsFor(cfg, "slurm");
  if (!t || t.co_schedule !== undefined) return cfg;
  return { ...cfg, target: { ...t, co_schedule: services > 1 } };
}

/** Reads one parsed document (a whole file, or one service of a file with [services]) into its canonical config. */
function loadDocument(
  doc: TomlTable,
  source: string,
  overrides: Override[],
  baseDir: string,
  options: LoadOptions,
): FleetConfig {
  const layout = detectLayout(doc);
  // A file naming no target runs on this machine, read as prime-rl reads it: prime-rl runs a file
  // without [slurm] locally (issue 27). A target named outside the file takes its place.
  const target = options.target ?? (namesTarget(doc) ? undefined : DEFAULT_TARGET);
  const asPrime = target !== undefined && !namesTarget(doc);
  // Overrides are written in the file's layout: prime-rl's spellings are rewritten for an older-layout file.
  const older = !asPrime && !readsAsPrime(withTarget(doc, target).value, baseDir);
  const { value, issues } = applyOverrides(doc, older ? olderLayoutSpellings(doc, overrides) : overrides, {
    layout,
    prime: !older,
  });
  if (issues.length) throw new ConfigError(issues, source);
  const targeted = withTarget(value, target);
  if (targeted.issues.length) throw new ConfigError(targeted.issues, source);
  return validate(targeted.value, source, baseDir, asPrime);
}

/** Whether the file itself names a backend: [slurm], [kubernetes] (or under [inference]) or [vllm_fleet.slurm]. */
function namesTarget(doc: TomlTable): boolean {
  const inference = isTable(doc.inference) ? doc.inference : {};
  const fleet = isTable(doc.vllm_fleet) ? doc.vllm_fleet : {};
  // prime-rl's RL layout has its own [vllm_fleet.slurm] table.
  return TARGETS.some((k) => k in doc || k in inference) || "slurm" in fleet;
}

function readStackFile(file: string): string {
  try {
    return fs.readFileSync(file, "utf8");
  } catch (err: any) {
    throw new ConfigError([{ path: "", message: `cannot read ${file}: ${err.code ?? err.message}` }], file);
  }
}

export function loadConfigFile(file: string, overrides: Override[] = [], options: LoadOptions = {}): FleetConfig {
  return loadConfigText(readStackFile(file), file, overrides, path.dirname(path.resolve(file)), options);
}

/** Every service of a stack file (one, unnamed, without [services]). */
export function loadStackFile(file: string, overrides: Override[] = [], options: LoadOptions = {}): FleetConfig[] {
  return loadStackText(readStackFile(file), file, overrides, path.dirname(path.resolve(file)), options);
}
