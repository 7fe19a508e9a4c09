import type { ConfigIssue } from "./issues";
import { serviceSlurmTable } from "./schema/slurm";
import { SERVICE_NAME } from "./schema/primitives";
import type { TomlTable } from "./toml";
import type { Override } from "./overrides";
import { TARGETS } from "./target-kinds";

/*
 * `[services.<name>]`: several models in one stack (a policy beside its judge). Each service table
 * holds what a single-model file's inference part holds, in either layout; the file's target,
 * output_dir, model_catalog and dry_run are shared. Each service is read as a file of its own:
 * its table with the shared keys beside it, so every rule and message of a single-model file
 * applies unchanged, and issues are reported back under `services.<name>.`.
 */

/** The keys a file with [services] keeps at its top level: shared by every service. */
export const SHARED_KEYS = [...TARGETS, "output_dir", "model_catalog", "dry_run"] as const;

export { SERVICE_NAME };

/**
 * Service k's default ports are the single-model ones + k x SERVICE_PORT_STRIDE (server.port and
 * the engine port behind its router, when the service leaves them unset), so two services on one
 * host never meet.
 */
export const SERVICE_PORT_STRIDE = 1000;

const isTable = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

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
    if (key === "services" || (SHARED_KEYS as readonly string[]).includes(key)) continue;
    issues.push({
      path: key,
      message: `a file with [services] keeps each model's settings in its service: move "${key}" into [services.<name>] (the top level holds only ${SHARED_KEYS.join(", ")})`,
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
      if (key === "slurm" || !(key in own)) continue;
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
    const slurm = serviceSlurm(own.slurm, `${at}.slurm`, doc.slurm, issues);
    delete own.slurm;
    services.push({ name, index, doc: { ...own, ...shared, ...(slurm && { slurm }) } });
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

/** A service's `[services.<name>.slurm]` over the file's `[slurm]`: only what one job or hetjob component asks for. */
function serviceSlurm(own: unknown, at: string, fileSlurm: unknown, issues: ConfigIssue[]): TomlTable | undefined {
  if (own === undefined) return isTable(fileSlurm) ? (fileSlurm as TomlTable) : undefined;
  if (!isTable(own)) {
    issues.push({ path: at, message: "must be a table" });
    return isTable(fileSlurm) ? (fileSlurm as TomlTable) : undefined;
  }
  if (!isTable(fileSlurm)) {
    issues.push({
      path: at,
      message: "sets what the service's job asks of SLURM, but the file has no [slurm] table: add one",
    });
    return undefined;
  }
  const allowed = Object.keys(serviceSlurmTable.shape);
  const kept: TomlTable = {};
  for (const [k, v] of Object.entries(own)) {
    if (allowed.includes(k)) kept[k] = v;
    else
      issues.push({
        path: `${at}.${k}`,
        message: `a service's [slurm] sets only what its job asks for (${allowed.join(", ")}); "${k}" is the stack's: set it in the top-level [slurm]`,
      });
  }
  return { ...(fileSlurm as TomlTable), ...kept };
}

/**
 * A service's issue as the file spells it: under `services.<name>.`, except a shared key's, which
 * the file sets at its top level (a service's own [slurm] keys are its own).
 */
export function serviceIssuePath(service: ServiceDocument, ownSlurm: string[], path: string): string {
  const head = path.split(".")[0];
  if (path === "") return `services.${service.name}`;
  if (head === "slurm" && ownSlurm.includes(path.split(".")[1] ?? "")) return `services.${service.name}.${path}`;
  if ((SHARED_KEYS as readonly string[]).includes(head)) return path;
  return `services.${service.name}.${path}`;
}
