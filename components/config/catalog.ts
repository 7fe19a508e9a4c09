/**
 * The model catalog: launch defaults and architecture facts per Hugging Face model id, as data
 * (vec-inf's models.yaml idea). The built-in catalog is catalog/models.yaml beside this file's source; a
 * user catalog is merged over it entry by entry, and inside an entry section by section, so a
 * user can change one `launch` field and keep the rest. Pure: reads files, never Pulumi.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { isDeepStrictEqual } from "node:util";
import type { z } from "zod";
import { yamlPackage } from "../lazy-packages";
import { packagePath } from "../package-root";
import { ConfigError, ConfigIssue } from "./issues";
import { catalogFile, catalogOverlayFile, type CatalogEntry, type CatalogOverlayEntry } from "./schema/catalog";

export type { ArchFacts, CatalogEntry, LaunchDefaults } from "./schema/catalog";

export interface Catalog {
  /** Entries by Hugging Face model id. */
  models: Record<string, CatalogEntry>;
  /** The files merged into it, built-in first. */
  files: string[];
}

/** A catalog entry together with the id it is filed under. */
export type ResolvedModel = CatalogEntry & { id: string };

export const BUILTIN_CATALOG = packagePath("components", "config", "catalog", "models.yaml");

/**
 * The built-in catalog as JSON, written by `npm run build` (compile-catalog.ts) beside this module
 * in dist/, never in the source tree: `plan` then starts without loading the yaml package and
 * parsing YAML (about 70 ms; docs/benchmarks.md, cli-start).
 */
const COMPILED_CATALOG = path.join(__dirname, "catalog", "models.json");

/** `models."Qwen/Qwen3-8B".launch.tp`: ids with "/" or "." are quoted so the path stays readable. */
export function catalogPath(parts: readonly (string | number)[]): string {
  return parts
    .map((p, i) => (i === 1 && typeof p === "string" && !/^[A-Za-z0-9_-]+$/.test(p) ? JSON.stringify(p) : String(p)))
    .join(".");
}

function readText(file: string): string {
  try {
    return fs.readFileSync(file, "utf8");
  } catch (err: any) {
    throw new ConfigError([{ path: "", message: `cannot read ${file}: ${err.code ?? err.message}` }], file);
  }
}

/** YAML text to plain data; syntax errors carry their line and column. */
function parseYaml(text: string, file: string): unknown {
  const doc = yamlPackage().parseDocument(text);
  if (doc.errors.length) {
    throw new ConfigError(
      doc.errors.map((e) => ({
        path: "",
        message: e.message.split("\n")[0],
        line: e.linePos?.[0].line,
        column: e.linePos?.[0].col,
      })),
      file,
    );
  }
  return doc.toJS() ?? {};
}

function fromZod(error: z.ZodError): ConfigIssue[] {
  return error.issues.flatMap((iss) => {
    const at = iss.path as (string | number)[];
    if (iss.code === "unrecognized_keys") {
      const lines = iss.message.split("\n");
      return iss.keys.map((key, i) => ({
        path: catalogPath([...at, key]),
        message: lines[i] ?? `unknown key "${key}"`,
      }));
    }
    const input = (iss as { input?: unknown }).input;
    const message =
      iss.code === "invalid_type" && input === undefined
        ? `is required (expected ${iss.expected})`
        : iss.code === "invalid_value" && "values" in iss
          ? `must be one of ${(iss.values as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`
          : iss.message.replace(/^Invalid input: /, "");
    return [{ path: catalogPath(at), message }];
  });
}

function parseWith<S extends z.ZodType>(schema: S, data: unknown, file: string): z.infer<S> {
  const result = schema.safeParse(data, { reportInput: true });
  if (!result.success) throw new ConfigError(fromZod(result.error), file);
  return result.data;
}

/** Facts that must agree with each other; schema types alone cannot say so. */
export function checkEntry(key: string, e: CatalogEntry): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  const at = (...p: string[]) => catalogPath(["models", key, ...p]);
  const a = e.arch;
  const need = (key: keyof typeof a, why: string) =>
    a[key] === undefined && out.push({ path: at("arch", key), message: `is required ${why}` });
  const forbid = (key: keyof typeof a, why: string) =>
    a[key] !== undefined && out.push({ path: at("arch", key), message: `applies ${why} only` });
  if (a.attention === "gqa") {
    need("kv_heads", 'for attention = "gqa" (config.json num_key_value_heads)');
    need("head_dim", 'for attention = "gqa" (config.json head_dim, or hidden_size / num_attention_heads)');
    forbid("kv_lora_rank", 'to attention = "mla"');
    forbid("qk_rope_head_dim", 'to attention = "mla"');
  } else {
    need("kv_lora_rank", 'for attention = "mla" (config.json kv_lora_rank)');
    need("qk_rope_head_dim", 'for attention = "mla" (config.json qk_rope_head_dim)');
    forbid("kv_heads", 'to attention = "gqa"');
    forbid("head_dim", 'to attention = "gqa"');
  }
  const moe = a.experts !== undefined || a.experts_per_token !== undefined;
  if (moe) {
    need("experts", "for a mixture-of-experts model (set with experts_per_token)");
    need("experts_per_token", "for a mixture-of-experts model (set with experts)");
    need("active_params", "for a mixture-of-experts model (parameters used per token)");
    need("expert_params", "for a mixture-of-experts model (parameters inside routed experts)");
  } else {
    forbid("active_params", "to mixture-of-experts models (set experts and experts_per_token)");
    forbid("expert_params", "to mixture-of-experts models (set experts and experts_per_token)");
  }
  if (a.attention_heads !== undefined && a.kv_heads !== undefined && a.attention_heads % a.kv_heads !== 0) {
    out.push({
      path: at("arch", "attention_heads"),
      message: `${a.attention_heads} is not a multiple of arch.kv_heads = ${a.kv_heads} (each KV head serves a whole group of query heads)`,
    });
  }
  if (a.experts !== undefined && a.experts_per_token !== undefined && a.experts_per_token > a.experts) {
    out.push({
      path: at("arch", "experts_per_token"),
      message: `${a.experts_per_token} exceeds arch.experts = ${a.experts}`,
    });
  }
  if (a.active_params !== undefined && a.active_params > a.params) {
    out.push({ path: at("arch", "active_params"), message: `${a.active_params} exceeds arch.params = ${a.params}` });
  }
  if (a.expert_params !== undefined && a.expert_params >= a.params) {
    out.push({
      path: at("arch", "expert_params"),
      message: `${a.expert_params} must be less than arch.params = ${a.params} (attention and embeddings are not experts)`,
    });
  }
  if (e.launch.enable_expert_parallel && !moe) {
    out.push({
      path: at("launch", "enable_expert_parallel"),
      message: "expert parallelism needs a mixture-of-experts model (arch.experts)",
    });
  }
  return out;
}

/**
 * Every alias names one model, and no alias is another model's id. The entries of the file being
 * checked (`ids`, id -> key as written) claim their aliases last, so a clash is blamed on them.
 */
function checkAliases(models: Record<string, CatalogEntry>, ids: ReadonlyMap<string, string>): ConfigIssue[] {
  const owner = new Map<string, string>(Object.keys(models).map((id) => [id, id]));
  const out: ConfigIssue[] = [];
  const order = [...Object.keys(models).filter((id) => !ids.has(id)), ...ids.keys()];
  for (const id of order) {
    (models[id].aliases ?? []).forEach((name, i) => {
      const other = owner.get(name);
      if (other !== undefined && other !== id) {
        out.push({
          path: catalogPath(["models", ids.get(id) ?? id, "aliases", i]),
          message: `"${name}" already names ${JSON.stringify(other)}`,
        });
      } else owner.set(name, id);
    });
  }
  return out;
}

/** Checks the entries filed under `ids`, reporting each under the key its file wrote (id -> key). */
function check(models: Record<string, CatalogEntry>, ids: ReadonlyMap<string, string>, file: string): void {
  const issues = [...[...ids].flatMap(([id, key]) => checkEntry(key, models[id])), ...checkAliases(models, ids)];
  if (issues.length) throw new ConfigError(issues, file);
}

/** The built-in catalog's data before checks: its compiled JSON when that is newer than the YAML, else the YAML. */
function builtinData(): unknown {
  const json = fs.statSync(COMPILED_CATALOG, { throwIfNoEntry: false });
  const yaml = fs.statSync(BUILTIN_CATALOG, { throwIfNoEntry: false });
  if (json && yaml && json.mtimeMs >= yaml.mtimeMs) return JSON.parse(fs.readFileSync(COMPILED_CATALOG, "utf8"));
  return parseYaml(readText(BUILTIN_CATALOG), BUILTIN_CATALOG);
}

/**
 * `npm run build`'s step: the built-in catalog's YAML as JSON (the same data, unchecked: loadCatalog
 * checks it as before). Nothing is written, and an older JSON is removed, when the YAML does not
 * parse or holds what JSON cannot (then the YAML is read, and its errors reported, at run time).
 */
export function compileBuiltinCatalog(out = COMPILED_CATALOG): void {
  fs.rmSync(out, { force: true });
  let data: unknown;
  try {
    data = parseYaml(readText(BUILTIN_CATALOG), BUILTIN_CATALOG);
  } catch {
    return;
  }
  const text = JSON.stringify(data);
  if (!isDeepStrictEqual(JSON.parse(text), data)) return;
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, text);
}

let builtin: Record<string, CatalogEntry> | undefined;

/** The built-in catalog, parsed and checked once per process (it is read for every stack file). */
function builtinModels(): Record<string, CatalogEntry> {
  if (!builtin) {
    const models = parseWith(catalogFile, builtinData(), BUILTIN_CATALOG).models;
    check(models, new Map(Object.keys(models).map((id) => [id, id])), BUILTIN_CATALOG);
    builtin = models;
  }
  return structuredClone(builtin);
}

/** Which entry a name refers to: its id, or an entry listing it as an alias. */
function resolveId(models: Record<string, CatalogEntry>, name: string): string | undefined {
  if (Object.hasOwn(models, name)) return name;
  return Object.keys(models).find((id) => models[id].aliases?.includes(name));
}

/** Section by section: scalars replace, aliases add up, `launch` and `arch` merge field by field. */
function mergeEntry(base: CatalogEntry, over: CatalogOverlayEntry): CatalogEntry {
  const aliases = [...new Set([...(base.aliases ?? []), ...(over.aliases ?? [])])];
  const otherNames = [...new Set([...(base.other_names ?? []), ...(over.other_names ?? [])])];
  return {
    ...base,
    ...(over.family !== undefined && { family: over.family }),
    ...(over.type !== undefined && { type: over.type }),
    ...(aliases.length && { aliases }),
    ...(otherNames.length && { other_names: otherNames }),
    launch: { ...base.launch, ...over.launch },
    arch: { ...base.arch, ...over.arch },
  };
}

/**
 * The built-in catalog, with `userFile` (a YAML file with the same `models:` layout) merged over
 * it. A user entry whose key is a known id or alias overrides only the fields it names; any other
 * key adds a model and must be complete. Problems are ConfigErrors naming the file and key path.
 */
export function loadCatalog(userFile?: string): Catalog {
  const models = builtinModels();
  if (userFile === undefined) return { models, files: [BUILTIN_CATALOG] };

  const overlay = parseWith(catalogOverlayFile, parseYaml(readText(userFile), userFile), userFile).models;
  const issues: ConfigIssue[] = [];
  const touched = new Map<string, string>();
  for (const [key, over] of Object.entries(overlay)) {
    const id = resolveId(models, key);
    if (id === undefined) {
      const result = catalogFile.safeParse({ models: { [key]: over } }, { reportInput: true });
      if (result.success) models[key] = result.data.models[key];
      else
        issues.push(
          ...fromZod(result.error).map((i) => ({ ...i, message: `${i.message} (a new model needs a complete entry)` })),
        );
      touched.set(key, key);
      continue;
    }
    const earlier = touched.get(id);
    if (earlier !== undefined) {
      issues.push({
        path: catalogPath(["models", key]),
        message: `names the same model as ${catalogPath(["models", earlier])} in this file; merge the two entries`,
      });
      continue;
    }
    models[id] = mergeEntry(models[id], over);
    touched.set(id, key);
  }
  if (issues.length) throw new ConfigError(issues, userFile);
  check(models, touched, userFile);
  return { models, files: [BUILTIN_CATALOG, userFile] };
}

/** The entry for a model id or alias, or undefined for a model the catalog does not know. */
export function lookupModel(catalog: Catalog, nameOrAlias: string): ResolvedModel | undefined {
  const id = resolveId(catalog.models, nameOrAlias);
  return id === undefined ? undefined : { id, ...structuredClone(catalog.models[id]) };
}

/**
 * The catalog entry a name that is not in the catalog was probably meant to be, with why: the same
 * id or alias in other letter case, an id without its organisation (`Qwen3-8B`), or a name listed
 * in `other_names` (vec-inf's short names, former Hugging Face ids). Not an edit-distance match:
 * Qwen3-4B is one letter from Qwen3-8B and a different model.
 */
export function nearMiss(catalog: Catalog, name: string): { id: string; why: string } | undefined {
  const lower = name.trim().toLowerCase();
  for (const [id, e] of Object.entries(catalog.models)) {
    if (id.toLowerCase() === lower) return { id, why: "model names are case-sensitive" };
    const alias = e.aliases?.find((a) => a.toLowerCase() === lower);
    if (alias) return { id, why: `"${alias}" is its alias; model names are case-sensitive` };
    const other = e.other_names?.find((n) => n.toLowerCase() === lower);
    if (other)
      return {
        id,
        why: `"${other}" is another name for it (e.g. vec-inf's), not one vLLM or the catalog serves it under`,
      };
  }
  for (const id of Object.keys(catalog.models)) {
    const base = id.slice(id.indexOf("/") + 1);
    if (id.includes("/") && base.toLowerCase() === lower)
      return {
        id,
        why: `a Hugging Face id names the organisation too; for a local directory called ${name}, write "./${name}"`,
      };
  }
  return undefined;
}
