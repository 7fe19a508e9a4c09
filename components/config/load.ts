import * as fs from "node:fs";
import * as path from "node:path";
import { type Catalog, loadCatalog } from "./catalog";
import { ConfigError, ConfigIssue } from "./issues";
import { applyDefaults, olderRlIgnored, toCanonicalInput } from "./normalise";
import { primeToCanonicalInput } from "./normalise-prime";
import { applyOverrides, olderLayoutSpellings, Override } from "./overrides";
import { UserPaths } from "./paths";
import { checkRules } from "./rules";
import { rlLayout, standaloneLayout } from "./schema/layouts";
import { isSftFile, OLDER_ONLY, primeRlLayout, primeSftLayout, primeStandaloneLayout } from "./schema/prime";
import { parseToml, TomlTable } from "./toml";
import { hasServices, serviceIssuePath, splitServices } from "./services";
import type { FleetConfig } from "./types";
import { DEFAULT_TARGET, TARGETS, type TargetKind } from "./target-registry";
import {
  currentName,
  detectLayout,
  hasOlderMarker,
  hasPrimeMarker,
  isTable,
  type Layout,
  mixedLayout,
  normaliseVllmKeys,
} from "./layout-markers";
import { fromZod } from "./schema-issues";
import { forServices, namesTarget, servicePorts, withTarget } from "./stack-targets";

export { detectLayout, hasPrimeMarker, type Layout } from "./layout-markers";
export { withTarget } from "./stack-targets";

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

export { TARGETS, type TargetKind } from "./target-registry";

export interface LoadOptions {
  /**
   * The backend named outside the file (`plan --target`, Pulumi config `vllm-fleet:target`), for a
   * file without a [slurm] or [kubernetes] table, such as one written for prime-rl.
   */
  target?: TargetKind;
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
  return configs.map((cfg) => forServices(cfg, configs.length));
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
