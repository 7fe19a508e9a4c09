import type { ConfigIssue } from "./issues";
import { isTable } from "./layout-markers";
import type { z } from "zod";
import { primeInferenceShape } from "./schema/prime";
import { serviceTargetKeys, TARGET_PARTS, TARGETS } from "./target-registry";
import { SERVICE_NAME } from "./schema/primitives";
import type { TomlTable } from "./toml";
import type { Override } from "./overrides";

/*
 * `[services.<name>]`: several models in one stack (a policy beside its judge). Each service table
 * holds what a single-model file's inference part holds, in either layout; the file's target,
 * output_dir, model_catalog and dry_run are shared. Each service is read as a file of its own:
 * its table with the shared keys beside it, so every rule and message of a single-model file
 * applies unchanged, and issues are reported back under `services.<name>.`.
 */

/** The keys a file with [services] keeps at its top level: shared by every service. */
const SHARED_KEYS = [...TARGETS, "output_dir", "model_catalog", "dry_run"] as const;

/**
 * Top-level keys that are every service's default, which a service may set for itself (its own
 * [restart] replaces the stack's whole table).
 */
const SERVICE_DEFAULTS = ["engine", "restart", "idle_release_after"] as const;

/**
 * Service k's default ports are the single-model ones + k x SERVICE_PORT_STRIDE (server.port and
 * the engine port behind its router, when the service leaves them unset), so two services on one
 * host never meet.
 */
export const SERVICE_PORT_STRIDE = 1000;

/**
 * The keys of prime-rl's own target tables, where its layout has one of a target's name (its
 * [slurm]: the targets with a primeFleetTable); our other keys of that table go in
 * [vllm_fleet.<target>] (prime-rl's table forbids extra keys).
 */
const PRIME_OWN_KEYS: Record<string, string[]> = Object.fromEntries(
  TARGET_PARTS.filter((part) => part.primeFleetTable).map((part) => {
    const own = (primeInferenceShape as Record<string, z.ZodType>)[part.kind] as z.ZodOptional<z.ZodObject>;
    return [part.kind, Object.keys(own.unwrap().shape)];
  }),
);
const PRIME_FLEET_TABLES = Object.keys(PRIME_OWN_KEYS);

/** `[services.<name>.<kind>]`: the target tables a service may set for itself, with their keys. */
const SERVICE_TARGET_KEYS = serviceTargetKeys();

/** One service's part of the file, as a single-model file of its own. */
export interface ServiceDocument {
  name: string;
  index: number;
  doc: TomlTable;
}

/** Whether the file declares services. */
export const hasServices = (doc: TomlTable): boolean => "services" in doc;

/**
 * Splits a file with [services] into one single-model document per service, with the overrides
 * that apply to each (`services.<name>.<key>` to that service, a shared key to all). Issues name
 * the key as the file spells it.
 */
export function splitServices(
  doc: TomlTable,
  overrides: Override[],
  /** Whether a service's own table is in prime-rl's current layout (load.ts hasPrimeMarker). */
  primeLayout: (service: TomlTable) => boolean,
): { services: ServiceDocument[]; overrides: Map<string, Override[]>; issues: ConfigIssue[] } {
  const issues: ConfigIssue[] = [];
  const table = doc.services;
  if (!isTable(table) || !Object.keys(table).length) {
    issues.push({
      path: "services",
      message: "must be a table of named services, e.g. [services.policy] and [services.judge]",
    });
    return { services: [], overrides: new Map(), issues };
  }
  for (const key of Object.keys(doc)) {
    if (key === "services" || [...SHARED_KEYS, ...SERVICE_DEFAULTS].includes(key as never)) continue;
    issues.push({
      path: key,
      message: `a file with [services] keeps each model's settings in its service: move "${key}" into [services.<name>] (the top level holds only ${[...SHARED_KEYS, ...SERVICE_DEFAULTS].join(", ")})`,
    });
  }
  const shared: TomlTable = Object.fromEntries(
    Object.entries(doc).filter(([k]) => (SHARED_KEYS as readonly string[]).includes(k)),
  );
  const services: ServiceDocument[] = [];
  Object.entries(table).forEach(([name, body], index) => {
    const at = `services.${name}`;
    if (!SERVICE_NAME.test(name)) {
      issues.push({
        path: at,
        message:
          "a service name must be a DNS label of at most 20 characters: lower-case letters, digits and '-', starting with a letter (it goes into job, folder and Kubernetes names)",
      });
      return;
    }
    if (!isTable(body)) {
      issues.push({ path: at, message: "must be a table: [services.<name>] with the model's settings" });
      return;
    }
    const own: TomlTable = { ...body };
    for (const key of SHARED_KEYS) {
      if (key in SERVICE_TARGET_KEYS || !(key in own)) continue;
      issues.push({
        path: `${at}.${key}`,
        message: `"${key}" is shared by every service: set it at the top level of the file`,
      });
      delete own[key];
    }
    if ("inference" in own) {
      issues.push({
        path: `${at}.inference`,
        message:
          "a service holds its inference settings directly ([services.<name>.model], [services.<name>.vllm], ...), not under [inference]",
      });
      delete own.inference;
    }
    // prime-rl's layout names its server in [vllm_fleet] engine: the stack's engine is our layout's.
    // Its [restart] is [vllm_fleet.restart], its idle_release_after [vllm_fleet] idle_release_after.
    const prime = primeLayout(own);
    for (const key of ["restart", "idle_release_after"]) {
      const fleetTable = own.vllm_fleet ?? {};
      if (prime && key in doc && isTable(fleetTable) && !(key in fleetTable))
        own.vllm_fleet = { ...fleetTable, [key]: doc[key] };
    }
    const defaults = prime
      ? {}
      : Object.fromEntries(SERVICE_DEFAULTS.filter((k) => k in doc && !(k in own)).map((k) => [k, doc[k]]));
    const merged: TomlTable = { ...defaults, ...own, ...shared };
    for (const [kind, keys] of Object.entries(SERVICE_TARGET_KEYS)) {
      const mine = serviceTarget(own[kind], keys, `${at}.${kind}`, kind, doc[kind], issues);
      delete merged[kind];
      if (!mine) continue;
      // prime-rl's [slurm] forbids our keys: a service in its layout gets them in [vllm_fleet.slurm].
      if (PRIME_FLEET_TABLES.includes(kind) && primeLayout(own)) Object.assign(merged, primeTarget(kind, mine, own));
      else merged[kind] = mine;
    }
    services.push({ name, index, doc: merged });
  });
  const perService = new Map<string, Override[]>(services.map((s) => [s.name, []]));
  for (const o of overrides) {
    const [head, name, ...rest] = o.path;
    if (head === "services" && name !== undefined && perService.has(name) && rest.length) {
      perService.get(name)!.push({ ...o, path: rest });
    } else if ((SHARED_KEYS as readonly string[]).includes(head)) {
      for (const list of perService.values()) list.push(o);
    } else {
      issues.push({
        path: o.path.join("."),
        message: `this file has [services]: name the service the override is for (services.<name>.${o.path.join(".")}; services: ${[...perService.keys()].join(", ")})`,
      });
    }
  }
  return { services, overrides: perService, issues };
}

/**
 * A target table of a service in prime-rl's layout: prime-rl's own keys stay in it, ours go to
 * [vllm_fleet.<target>] (prime-rl's SlurmConfig forbids extra keys; the loader merges the two back).
 */
function primeTarget(kind: string, merged: TomlTable, own: TomlTable): TomlTable {
  const primeKeys = PRIME_OWN_KEYS[kind];
  const fleet: TomlTable = isTable(own.vllm_fleet) ? { ...own.vllm_fleet } : {};
  const theirs = Object.fromEntries(Object.entries(merged).filter(([k]) => primeKeys.includes(k)));
  const ours = Object.fromEntries(Object.entries(merged).filter(([k]) => !primeKeys.includes(k)));
  const fleetTable = isTable(fleet[kind]) ? (fleet[kind] as TomlTable) : {};
  return {
    [kind]: theirs,
    ...(Object.keys(ours).length && { vllm_fleet: { ...fleet, [kind]: { ...fleetTable, ...ours } } }),
  };
}

/**
 * A service's `[services.<name>.<target>]` over the file's `[<target>]`: only what one job (or
 * hetjob component) asks for (SERVICE_TARGET_KEYS).
 */
function serviceTarget(
  own: unknown,
  allowed: string[],
  at: string,
  kind: string,
  fileTable: unknown,
  issues: ConfigIssue[],
): TomlTable | undefined {
  const file = isTable(fileTable) ? (fileTable as TomlTable) : undefined;
  if (own === undefined) return file;
  if (!isTable(own)) {
    issues.push({ path: at, message: "must be a table" });
    return file;
  }
  if (!file) {
    issues.push({
      path: at,
      message: `sets what the service's job asks for, but the file has no [${kind}] table: add one`,
    });
    return undefined;
  }
  const kept: TomlTable = {};
  for (const [k, v] of Object.entries(own)) {
    if (allowed.includes(k)) kept[k] = v;
    else
      issues.push({
        path: `${at}.${k}`,
        message: `a service's [${kind}] sets only what its job asks for (${allowed.join(", ")}); "${k}" is the stack's: set it in the top-level [${kind}]`,
      });
  }
  return { ...file, ...kept };
}

/**
 * A service's issue as the file spells it: under `services.<name>.`, except a shared key's, which
 * the file sets at its top level (a service's own [slurm] keys are its own).
 */
export function serviceIssuePath(service: ServiceDocument, ownKeys: string[], reported: string): string {
  // Our [slurm] keys of a service in prime-rl's layout were moved to [vllm_fleet.<table>] (primeSlurm).
  const path = reported.replace(/^vllm_fleet\.([a-z]+)\./, "$1.");
  const [head, key] = path.split(".");
  if (path === "") return `services.${service.name}`;
  if (head in SERVICE_TARGET_KEYS && ownKeys.includes(key ?? "")) return `services.${service.name}.${path}`;
  if ((SHARED_KEYS as readonly string[]).includes(head)) return path;
  return `services.${service.name}.${path}`;
}
