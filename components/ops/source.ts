import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parse as parseYaml } from "yaml";
import { ConfigError, loadStackFile, overridesFromObject, type Override } from "../config";
import { NS } from "../namespace";
import { buildStackPlan } from "../planner";
import { serviceOf } from "../plan/stack-plan";
import { packagePath } from "../package-root";
import { parseLogin } from "../slurm";
import { resolveStackFile } from "../stack-file";
import type { TargetKind } from "../config/target-registry";
import { allTargets, targetOf } from "../targets";
import { viewFromEndpoints, viewFromPlan, type FleetView } from "./fleet-view";
import { localShell, parseLoginFlag, sshShell, type Shell, type SshTarget } from "./remote";
import type { ClusterSource } from "./commands";
import type { ClusterAccess } from "../target";

export interface SourceOptions {
  /** A Pulumi stack name or a stack file, as for `npm run plan`. */
  stack?: string;
  /** `--endpoints`: an island's endpoints.json or `pulumi stack output --json`. */
  endpoints?: string;
  /** `--service`: which service of a stack with [services] (required there, refused without). */
  service?: string;
  /** `--pulumi-config`: Pulumi.<stack>.yaml; by default the one beside Pulumi.yaml, if it exists. */
  pulumiConfig?: string;
  overrides: Override[];
  login?: string;
  identity?: string;
  sshOptions: string[];
  local: boolean;
  /** `--kubeconfig`, `--context`: the cluster's API (default: the stack's Pulumi config, else $KUBECONFIG). */
  kubeconfig?: string;
  context?: string;
}

export interface FleetSource {
  view: FleetView;
  /** Where the target's scripts run (FleetSupport.shell); undefined for Kubernetes or when nothing says how to reach SLURM. */
  shell?: Shell;
  /** Where a target whose cluster API answers for it (Kubernetes) is read, from a stack. */
  cluster?: ClusterSource;
  describe: string;
}

/** The settings `pulumi up` used, read from the stack's config file: stack file, overrides, login. */
function pulumiSettings(file: string | undefined, stack: string | undefined) {
  const candidate = file ?? (stack ? packagePath(`Pulumi.${stack}.yaml`) : undefined);
  if (!candidate || !fs.existsSync(candidate)) {
    if (file) throw new Error(`--pulumi-config ${file} does not exist`);
    return undefined;
  }
  const config = ((parseYaml(fs.readFileSync(candidate, "utf8")) as { config?: Record<string, unknown> } | null)
    ?.config ?? {}) as Record<string, any>;
  const get = (key: string) => config[`${NS}:${key}`];
  return {
    file: candidate,
    stackFile: typeof get("stackFile") === "string" ? (get("stackFile") as string) : undefined,
    overrides: overridesFromObject(get("overrides"), `${NS}:overrides`),
    namespace: typeof get("namespace") === "string" ? (get("namespace") as string) : undefined,
    login: get("login") !== undefined ? parseLogin(get("login")) : undefined,
    // A path only: the file's contents are a config secret, which only Pulumi can decrypt.
    kubeconfig:
      typeof get("kubeconfig") === "string" && !/[\n{]/.test(get("kubeconfig"))
        ? path.resolve(path.dirname(candidate), get("kubeconfig") as string)
        : undefined,
    context: typeof get("context") === "string" ? (get("context") as string) : undefined,
  };
}

/** A known_hosts file for the pinned host key, so ssh checks the same key `pulumi up` checked. */
function knownHostsFor(host: string, port: number, hostKey: string): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "fleet-ssh-")), "known_hosts");
  fs.writeFileSync(file, `${port === 22 ? host : `[${host}]:${port}`} ${hostKey}\n`, { mode: 0o600 });
  return file;
}

/** The stack-file key `vllm-fleet:namespace` sets: the one target with namespaces has it. */
function namespaceKey(): string[] {
  const keys = allTargets().flatMap((t) => (t.namespaceKey ? [t.namespaceKey] : []));
  if (keys.length !== 1)
    throw new Error("internal error: vllm-fleet:namespace needs exactly one target with namespaces");
  return keys[0];
}

export function resolveSource(o: SourceOptions): FleetSource {
  let view: FleetView;
  let describe: string;
  let login: SshTarget | undefined;
  let cluster: ClusterSource | undefined;
  if (o.endpoints) {
    view = viewFromEndpoints(JSON.parse(fs.readFileSync(o.endpoints, "utf8")), o.endpoints, o.service);
    describe = o.endpoints;
  } else {
    if (!o.stack) throw new Error("name a stack (or a stack file), or pass --endpoints <file>");
    const settings = pulumiSettings(o.pulumiConfig, o.stack);
    const pulumiStack = settings ? path.basename(settings.file).replace(/^Pulumi\.|\.yaml$/g, "") : undefined;
    // A stackFile in Pulumi config is relative to the project (where Pulumi.<stack>.yaml lives), as the program reads it.
    const { file, stack } = settings?.stackFile
      ? resolveStackFile(settings.stackFile, path.dirname(settings.file))
      : resolveStackFile(o.stack);
    if (!fs.existsSync(file))
      throw new ConfigError([{ path: "", message: `no stack "${o.stack}": ${file} does not exist` }], file);
    const overrides = [
      ...(settings?.overrides ?? []),
      // vllm-fleet:namespace sets the namespaced target's key, as index.ts does.
      ...(settings?.namespace ? [{ path: namespaceKey(), value: settings.namespace }] : []),
      ...o.overrides,
    ];
    // Job names carry the Pulumi stack's name, as in index.ts.
    const plan = buildStackPlan(loadStackFile(file, overrides), pulumiStack ?? stack);
    try {
      view = viewFromPlan(serviceOf(plan, o.service), plan);
    } catch (e) {
      throw new ConfigError([{ path: "", message: `--service: ${(e as Error).message}` }], file);
    }
    describe = settings ? `${file} (as Pulumi stack ${pulumiStack}, settings from ${settings.file})` : file;
    if (targetOf(view.target).fleet.cluster) {
      const kubeconfig = o.kubeconfig ?? settings?.kubeconfig;
      const context = o.context ?? settings?.context;
      const access: ClusterAccess = {
        ...(kubeconfig ? { kubeconfigPath: kubeconfig } : {}),
        ...(context ? { context } : {}),
      };
      cluster = { plan: serviceOf(plan, o.service), access };
    }
    const l = settings?.login;
    if (l) {
      const options = l.hostKey
        ? [`UserKnownHostsFile=${knownHostsFor(l.host, l.port, l.hostKey)}`, "StrictHostKeyChecking=yes"]
        : [];
      login = { user: l.user, host: l.host, port: l.port, options };
      if (l.jump) login.options.push(`ProxyJump=${l.jump.user}@${l.jump.host}:${l.jump.port}`);
    }
  }
  if (o.login) login = { ...parseLoginFlag(o.login), options: [] };
  if (login)
    login = { ...login, ...(o.identity ? { identity: o.identity } : {}), options: [...login.options, ...o.sshOptions] };
  // The target's scripts run on this machine (local, or --local on the login node) or over ssh.
  const where = targetOf(view.target).fleet.shell;
  let shell: Shell | undefined;
  if (where === "here" || (where === "login" && o.local)) shell = localShell();
  else if (where === "login" && login) shell = sshShell(login);
  return { view, shell, ...(cluster ? { cluster } : {}), describe };
}

/**
 * `fleet jobs`: where to ask, and which target's scheduler. A stack (with its Pulumi.<stack>.yaml)
 * gives both, as for the other verbs; without one, --login or --local reach the scheduler of the
 * one target that lists its jobs (SLURM's).
 */
export function jobsSource(o: SourceOptions): { target: TargetKind; shell?: Shell } {
  if (o.stack) {
    const src = resolveSource(o);
    return { target: src.view.target, shell: src.shell };
  }
  const listing = allTargets().filter((t) => t.fleet.jobs);
  if (listing.length !== 1) throw new Error("internal error: fleet jobs needs exactly one target that lists its jobs");
  const target = listing[0].kind;
  if (o.local) return { target, shell: localShell() };
  if (o.login)
    return {
      target,
      shell: sshShell({
        ...parseLoginFlag(o.login),
        ...(o.identity ? { identity: o.identity } : {}),
        options: [...o.sshOptions],
      }),
    };
  return { target };
}
