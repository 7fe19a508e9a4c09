import { SECRETS, type SecretName } from "../credentials";
import type { EngineProcess, IslandPlan, RouterFollow, RouterPlan } from "../plan/deployment-plan";
import { WORKER_STARTUP_TIMEOUT_S } from "../plan/router-plan";
import { engineNamed } from "../plan/engines";
import { yamlPackage } from "../lazy-packages";
import type { Engine } from "../plan/engine";
import type { Launcher } from "../plan/target-settings";
import { nodeRef, resolveDeep, t, type Ref, type Value } from "../plan/values";
import { shellWord, shellWords, shq, type RefSpelling } from "../shell";
import { CACHE_EXPORTS } from "./cache";

/*
 * An island's processes as bash starts them on a host: the shared part of the targets that run
 * processes themselves (SLURM on each allocated node, local on this machine). Each target wraps
 * these lines in its own script (templates/slurm/launch.sh.mustache, templates/local/supervisor.sh.mustache).
 */

/** Seconds a node waits for the Mooncake master and metadata server on the head node before giving up. */
export const MOONCAKE_WAIT_S = 120;
/** Starts a node gives its Mooncake client before it fails (helpers.sh.mustache fleet_wait_listening). */
export const MOONCAKE_CLIENT_STARTS = 3;

/** Starts a node gives its LMCache server before it fails (helpers.sh.mustache fleet_wait_listening). */
export const LMCACHE_SERVER_STARTS = 2;

/** How run-time references are spelled inside the per-node launch body. */
const spell: RefSpelling = (ref: Ref) => {
  if (ref.ref === "node") return `\${NODE_ADDR[${ref.node}]}`;
  if (ref.ref === "self") return "${SELF_ADDR}";
  if (ref.ref === "scratch") return `\${FLEET_SCRATCH}-${ref.name}`;
  return `\${NODE_DIR}/${GENERATED_FILES[ref.file]}`;
};

/** Whether a process of the island names a scratch directory (then the setup sets FLEET_SCRATCH). */
export const needsScratch = (island: IslandPlan): boolean => island.engines.some((e) => scratchDirs(e.env).length > 0);

/** The scratch directories an environment names (the backend creates them before the process starts). */
function scratchDirs(env: [string, Value][]): Value[] {
  return env
    .map(([, v]) => v)
    .filter((v) => typeof v !== "string" && v.parts.some((p) => typeof p !== "string" && p.ref === "scratch"));
}

const GENERATED_FILES = {
  "mooncake-config": "mooncake.json",
  "epp-config": "epp.yaml",
  "epp-endpoints": "endpoints.yaml",
  "envoy-config": "envoy.yaml",
} as const;

/** Inside generated files, references become tokens that fleet_write fills in on the node. */
const token = (p: Ref) => {
  if (p.ref === "scratch") throw new Error("internal error: a generated file cannot name a scratch directory");
  return p.ref === "node"
    ? `__FLEET_NODE_ADDR_${p.node}__`
    : p.ref === "file"
      ? `__FLEET_NODE_DIR__/${GENERATED_FILES[p.file]}`
      : "__FLEET_SELF__";
};
const tokenise = (data: unknown) => resolveDeep(data, token);

/**
 * The name of the process that answers on the island's router URL: its log is <name>.log and its
 * exit marker <name>.exit, which `fleet status` and `fleet logs` find by this name.
 */
export function routerProcess(kind: RouterPlan["kind"]): string {
  return kind === "llm-d" ? "envoy" : "router";
}

/** The launch body's (unexported) variable holding a secret read from its 0600 file. */
const secretVar = (name: SecretName) => `FLEET_${SECRETS[name].file.toUpperCase()}`;

/**
 * The lines before any process starts: the scratch base (`scratchBase`, an assignment of
 * FLEET_SCRATCH, when a process names a scratch directory), the credentials from their files, the
 * launcher (PATH or venv) and the pinned-memory limit.
 */
export function setupLines(
  launcher: Launcher,
  offload: boolean,
  secrets: SecretName[],
  scratchBase: string | undefined,
): string[] {
  const lines: string[] = [];
  if (scratchBase)
    lines.push("# Per-process scratch directories (VLLM_RPC_BASE_PATH): node-local, this job's own.", scratchBase);
  if (secrets.length) lines.push("# Credentials: read from their 0600 files, never written into this script.");
  for (const s of secrets) lines.push(`${secretVar(s)}=$(<"$FLEET_SECRETS_DIR/${SECRETS[s].file}") || exit 1`);
  // The nodes' own calls to engines and routers carry the key (helpers.sh fleet_curl).
  if (secrets.includes("apiKey")) lines.push(`FLEET_CALL_KEY=$${secretVar("apiKey")}`);
  const l = launcher;
  // not an engine: the launcher type of programs on PATH or in bin_dir (slurm.launcher, local.launcher)
  if (l.type === "vllm" && l.bin_dir) lines.push(`export PATH=${shq(l.bin_dir)}:"$PATH"`);
  if (l.type === "venv") lines.push(`# shellcheck disable=SC1091`, `source ${shq(l.path + "/bin/activate")} || exit 1`);
  if (offload) lines.push("# Offloaded KV blocks are pinned memory.", "ulimit -l unlimited 2>/dev/null || true");
  return lines;
}

/** What an engine gets of the configured secrets: HF_TOKEN in its env, the API key as --api-key (or in a config file). */
interface SecretUse {
  env: SecretName[];
  /** The flag the process takes the API key with on its command line (its engine's spelling), if it takes it there. */
  apiKeyFlag?: string;
  apiKeyFile?: ApiKeyConfig;
}

/**
 * An engine that reads its API key from no environment variable takes it from a config file
 * (Engine.apiKeyConfig): a host that keeps the key off command lines (local: any user of the machine
 * reads /proc/<pid>/cmdline) writes it there, 0600, beside the credentials, instead of `--api-key KEY`.
 */
type ApiKeyConfig = NonNullable<Engine["apiKeyConfig"]>;

/**
 * The lines that write the API key into `name`'s config file: a YAML single-quoted scalar (a quote
 * doubled, nothing else escaped), in a subshell with umask 077 so the file is 0600 and the process
 * keeps its own umask.
 */
function apiKeyFileLines(name: string, c: ApiKeyConfig): { write: string; path: string } {
  const path = `"$FLEET_SECRETS_DIR"/${shq(`${name}.yaml`)}`;
  const key = `$${secretVar("apiKey")}`;
  return {
    write: `q="'"; (umask 077 && printf '%s: %s\\n' ${shq(c.key)} "$q\${${key.slice(1)}//"$q"/"$q$q"}$q" > ${path}) || exit 1`,
    path,
  };
}
const NO_SECRETS: SecretUse = { env: [] };

/**
 * `( [before;] export ...; exec cmd ) >> log &`: each process in its own subshell with its own env
 * and log; `before` is a command the subshell runs first (a wait, or a helper it starts beside the
 * process, ending in &), logged with the process.
 */
function startLine(
  name: string,
  env: [string, Value][],
  argv: Value[],
  wrap: string[],
  secrets: SecretUse,
  before?: string,
  first: string[] = [],
  gate?: string[],
  resume?: Value[],
): string {
  const exports = env.map(([k, v]) =>
    k === "CUDA_VISIBLE_DEVICES" && typeof v === "string"
      ? `${k}="$(fleet_gpus ${shq(v)})"; export ${k}`
      : `export ${k}=${shellWord(v, spell)}`,
  );
  for (const s of secrets.env) exports.push(`export ${SECRETS[s].env}="$${secretVar(s)}"`);
  const keyFile = secrets.apiKeyFile ? apiKeyFileLines(name, secrets.apiKeyFile) : undefined;
  const cmd = [
    ...wrap,
    shellWords(argv, spell),
    ...(secrets.apiKeyFlag ? [`${secrets.apiKeyFlag} "$${secretVar("apiKey")}"`] : []),
    ...(keyFile ? [`${secrets.apiKeyFile!.flag} ${keyFile.path}`] : []),
    ...(gate ? ['"${gate[@]}"'] : []),
    ...(resume ? ['"${resume[@]}"'] : []),
  ].join(" ");
  const steps = [
    ...(before ? [before] : []),
    ...(keyFile ? [keyFile.write] : []),
    ...first,
    ...exports,
    ...(gate ? [gateStep(name, gate)] : []),
    ...(resume ? [resumeStep(name, resume)] : []),
    `exec ${cmd}`,
  ];
  // A step that ends in & (something run beside the process) is already separated from the next.
  const body = steps.map((step, i) => (i === 0 ? "" : steps[i - 1].endsWith("&") ? " " : "; ") + step).join("");
  return `( ${body} ) >> "$NODE_DIR/${name}.log" 2>&1 &`;
}

/** The gate file of process `name`, beside its log: while it exists, its start is gated. */
const gateFile = (name: string) => `"$NODE_DIR"/${shq(`${name}.gate`)}`;

/**
 * The restart gate's flags (Engine.restartGate) and environment for a start the keeper gated (the
 * gate file beside the log exists: helpers.sh fleet_gate_close): after the process's own exports,
 * so its PYTHONPATH finds the gate's module first and keeps the user's.
 */
function gateStep(name: string, flags: string[]): string {
  const file = gateFile(name);
  return [
    `gate=(); if [ -e ${file} ]; then gate=(${shellWords(flags, spell)})`,
    `export FLEET_RESTART_GATE=${file} PYTHONPATH="$NODE_DIR/restart-gate\${PYTHONPATH:+:$PYTHONPATH}"; fi`,
  ].join("; ");
}

/** The resume file of process `name`, beside its log: while it exists, its start adds the flags it lists. */
const resumeFile = (name: string) => `"$NODE_DIR"/${shq(`${name}.resume`)}`;

/**
 * A start on the fleet's weights (Engine.startOnRecord): the flags the keeper wrote into the resume
 * file (helpers.sh fleet_resume_prepare: the folder and version, one a line, read as words, never
 * run), then `keep`.
 */
function resumeStep(name: string, keep: Value[]): string {
  const file = resumeFile(name);
  const more = keep.length ? `; resume+=(${shellWords(keep, spell)})` : "";
  return `resume=(); if [ -e ${file} ]; then mapfile -t resume < ${file}${more}; fi`;
}

/**
 * How a host starts its processes: `wrap` goes before every command (a container launcher).
 */
export interface HostLaunch {
  wrap: string[];
  /** The engines get the API key in the variable they read it from (Engine.apiKeyEnv), off their command line, where they have one. */
  apiKeyInEnv?: boolean;
  /** The setup named the island's cache folder (host/cache.ts): engines export VLLM_CACHE_ROOT and HF_HOME in it. */
  cache?: boolean;
}

/** A process as the keeper knows it: its name (log, exit marker) and the group it restarts with. */
interface Kept {
  name: string;
  node: number;
  /** Default: the process alone (a service: a router, a store). */
  group?: string;
}

/** The keeper's name for a process: `n<node>_<name>` (fleet_start_<key> starts it). */
function processKey(p: Kept): string {
  const key = `n${p.node}_${p.name}`;
  if (!/^[\w-]+$/.test(key)) throw new Error(`internal error: process name ${p.name} is not a shell word`);
  return key;
}

/**
 * Defines the function that starts one process in the background (the keeper calls it again for a
 * restart: templates/host/keeper.sh.mustache) and starts it with fleet_run, which logs its pid.
 */
function startLines(
  p: Kept,
  env: [string, Value][],
  argv: Value[],
  host: HostLaunch,
  secrets = NO_SECRETS,
  before?: string,
  first: string[] = [],
  gate?: string[],
  resume?: Value[],
): string[] {
  const key = processKey(p);
  const group = p.group ?? `${p.name}-n${p.node}`;
  return [
    `fleet_start_${key}() { ${startLine(p.name, env, argv, host.wrap, secrets, before, first, gate, resume)} }`,
    `fleet_run ${key} ${shq(p.name)} ${shq(group)}`,
  ];
}

/**
 * An engine with an API loads the fleet's weights record where the island folder holds one
 * (helpers.sh fleet_catch_up): registered by its process key (FLEET_CATCH_UP: its admin root, its
 * weight-version route, how long it may take) for the keeper to run again when it restarts an
 * engine no router's follower replays to, and run now for the island's first start (a revived
 * island: host/revival.sh took the record back; without a record it returns at once); `gated`: its
 * restarts may go behind its restart gate (FLEET_GATE: its gate file), or start on the record's
 * folder (FLEET_RESUME: the record call that names one, the flags, its resume file).
 */
function catchUpLines(p: Kept, e: EngineProcess, gated: boolean): string[] {
  const key = processKey(p);
  const engine = engineNamed(e.engine);
  const entry = t`http://${nodeRef(e.node)}:${e.port!} ${engine.routes.weightVersion} ${String(WORKER_STARTUP_TIMEOUT_S)}`;
  const gate = gated ? [`FLEET_GATE[${key}]=${gateFile(p.name)}`] : [];
  const r = engine.startOnRecord;
  const resume = r
    ? [`FLEET_RESUME[${key}]=${shq(`${r.call} ${r.dirKey} ${r.dirFlag} ${r.versionFlag} `)}${resumeFile(p.name)}`]
    : [];
  return [`FLEET_CATCH_UP[${key}]=${shellWord(entry, spell)}`, ...gate, ...resume, `fleet_catch_up ${key}`];
}

/** Writes one of the island's generated files on this node (see generatedFiles). */
function writeLine(files: Record<string, string>, name: string): string {
  return `fleet_write "$NODE_DIR/${name}" ${shq(files[name])}`;
}

/**
 * The lines that start node `node`'s processes (store, engines, router) in the background, each in
 * its own subshell with its own env and log under $NODE_DIR. `wrap` is put before every command
 * (a container launcher). The lines use the helpers of templates/host/helpers.sh.mustache and a
 * fleet_gpus of the target's own (planned GPU indices to the devices it has).
 */
export function nodeLines(island: IslandPlan, node: number, secrets: SecretName[], host: HostLaunch): string[] {
  const files = generatedFiles(island);
  const lines: string[] = [];
  const m = island.mooncake;
  if (m) {
    const head = `"\${NODE_ADDR[${m.headNode}]}"`;
    if (node === m.headNode) lines.push(...startLines({ name: "mooncake_master", node }, [], m.master.argv, host));
    lines.push(
      `fleet_wait_tcp ${head} ${m.masterPort} ${MOONCAKE_WAIT_S} "the Mooncake master"`,
      `fleet_wait_tcp ${head} ${m.metadataPort} ${MOONCAKE_WAIT_S} "the Mooncake metadata server"`,
    );
    const client = m.clients.find((c) => c.node === node)!;
    lines.push(...startLines({ name: "mooncake_client", node }, [], client.argv, host));
    lines.push(
      `fleet_wait_listening n${node}_mooncake_client "$SELF_ADDR" ${m.clientPort} ${m.clientListenS} ${MOONCAKE_CLIENT_STARTS} "the Mooncake client"`,
    );
    lines.push(writeLine(files, GENERATED_FILES["mooncake-config"]));
  }
  // The node's LMCache server listens (on the loopback) before its engines' connectors reach for it.
  const lmcache = island.lmcache?.servers.find((s) => s.node === node);
  if (island.lmcache && lmcache) {
    const { port, listenS } = island.lmcache;
    // A restarted server does not know the engines' registrations, which then wait on it for good
    // (docs/restarts.md): where the node's engines are one group, the server restarts with them.
    const groups = new Set(island.engines.filter((e) => e.node === node).map((e) => e.group));
    const group = groups.size === 1 ? [...groups][0] : undefined;
    lines.push(...startLines({ name: "lmcache_server", node, group }, [], lmcache.argv, host));
    lines.push(
      `fleet_wait_listening n${node}_lmcache_server 127.0.0.1 ${port} ${listenS} ${LMCACHE_SERVER_STARTS} "the LMCache server"`,
    );
  }
  // Engines hold the secrets; a router only where it demands the key of clients itself
  // (HttpRouterPlan.holdsApiKey): vllm-router passes the client's Authorization through, so holding
  // the key would let any caller in without one. An engine that reads no key variable takes the flag.
  const engineSecrets = (e: EngineProcess): SecretUse => {
    const key = secrets.includes("apiKey") && e.port !== undefined;
    const inEnv = key && host.apiKeyInEnv === true && engineNamed(e.engine).apiKeyEnv !== undefined;
    // Off the command line in a config file where the engine reads one, unless argv names one already
    // (SGLang takes one --config only; the config rules refuse sglang_extra.config today).
    const config = engineNamed(e.engine).apiKeyConfig;
    const inFile = key && host.apiKeyInEnv === true && !inEnv && config !== undefined && !e.argv.includes(config.flag);
    return {
      env: secrets.filter((s) => s === "hfToken" || (s === "apiKey" && inEnv)),
      ...(key && !inEnv && !inFile ? { apiKeyFlag: engineNamed(e.engine).spellFlag("--api-key") } : {}),
      ...(inFile ? { apiKeyFile: config } : {}),
    };
  };
  for (const e of island.engines.filter((x) => x.node === node)) {
    const dirs = scratchDirs(e.env);
    const mkdir = dirs.length ? `mkdir -p ${shellWords(dirs, spell)} || exit 1` : undefined;
    const kept = { name: e.id, node, group: e.group };
    // Only an engine that serves (an API port) restarts behind its gate or on the record.
    const engine = e.port !== undefined ? engineNamed(e.engine) : undefined;
    const gate = engine?.restartGate;
    const resume = engine?.startOnRecord?.keep(e.argv);
    const first = host.cache ? CACHE_EXPORTS : [];
    lines.push(...startLines(kept, e.env, e.argv, host, engineSecrets(e), mkdir, first, gate, resume));
    if (e.port !== undefined) lines.push(...catchUpLines(kept, e, gate !== undefined));
  }
  const r = island.router;
  if (r?.kind === "llm-d") {
    for (const s of r.sidecars.filter((x) => x.node === node))
      lines.push(...startLines({ name: "pd-sidecar", node }, [], s.argv, host));
  }
  if (r && r.node === node) {
    const workers = island.endpoints.engines.map((e) => `"\${NODE_ADDR[${e.url.node}]}:${e.url.port}"`).join(" ");
    const route = engineNamed(island.engines[0].engine).routes.weightVersion;
    const wait = `fleet_wait_healthy ${WORKER_STARTUP_TIMEOUT_S} ${shellWords([route], spell)} ${workers}`;
    if (r.kind !== "llm-d") {
      const late = r.lateWorkers;
      // Started before its engines serve, told each one as it answers (router-plan.ts followOf),
      // then kept to the ones that serve (fleet_follow_workers: an engine that restarts):
      // the telling runs beside the router in its subshell, which then becomes the router
      // ($BASHPID before exec), so it never counts as one of the node's processes. Otherwise
      // vllm-router (and sglang-router, its origin) checks its workers once at start, then every
      // --worker-startup-check-interval (>= 1 s): started once they are healthy, its first check
      // passes and it serves at once; a router with run-time routes is followed from then on.
      const before = r.follow
        ? late
          ? besideRouter(r.follow, undefined, tell(r.follow))
          : besideRouter(r.follow, wait)
        : wait;
      const routerSecrets: SecretUse = {
        env: [],
        ...(r.holdsApiKey && secrets.includes("apiKey") ? { apiKeyFlag: "--api-key" } : {}),
      };
      lines.push(
        ...startLines({ name: routerProcess(r.kind), node }, [], (late ?? r).argv, host, routerSecrets, before),
      );
    } else {
      lines.push(
        writeLine(files, GENERATED_FILES["epp-endpoints"]),
        writeLine(files, GENERATED_FILES["epp-config"]),
        writeLine(files, GENERATED_FILES["envoy-config"]),
        // Its follower starts once the engines serve: until then the EPP's own health checks decide.
        ...startLines(
          { name: "epp", node },
          [],
          r.epp.argv,
          host,
          NO_SECRETS,
          r.follow && besideRouter(r.follow, undefined, wait),
        ),
        ...startLines({ name: routerProcess(r.kind), node }, [], r.envoy.argv, host),
      );
    }
  }
  return lines;
}

/**
 * What runs beside a followed router (router-plan.ts followOf) or EPP, in its subshell: `first`
 * before the router starts (the wait for workers it is told at start), `then` beside it before its
 * follower (telling a router started without workers each one as it answers, or the wait for the
 * workers), then fleet_follow_workers keeps it to the ones that serve, each worker given as its
 * group, node and URL so it sees its group's restarts.
 */
function besideRouter(f: RouterFollow, first?: string, then?: string): string {
  const followed = f.urls.map((u, i) => {
    const o = f.origins[i];
    return shellWords([{ parts: [`${o.group}:${o.node}:`, ...(typeof u === "string" ? [u] : u.parts)] }], spell);
  });
  const follow = `fleet_follow_workers "$router_pid" ${shellWords([f.url, f.routes, f.weightVersion], spell)} ${followed.join(" ")}`;
  return `${first ? `${first}; ` : ""}router_pid=$BASHPID; { ${then ? `${then}; ` : ""}${follow}; } &`;
}

/** fleet_add_workers: a router started without workers is told each one as it answers. */
const tell = (f: RouterFollow) =>
  `fleet_add_workers "$router_pid" ${shellWords([f.url], spell)} ${WORKER_STARTUP_TIMEOUT_S} ${shellWords([f.weightVersion], spell)} ${shellWords(f.urls, spell)}`;

/** YAML without anchors and aliases: a shared sub-object is written out in full at each use. */
const plainYaml = (data: unknown) => yamlPackage().stringify(data, { aliasDuplicateObjects: false });

/**
 * The config files the job writes on its nodes, with node addresses as tokens that fleet_write fills
 * in at run time. The launch body and `plan --out` both use this, so readers see what is written.
 */
export function generatedFiles(island: IslandPlan): Record<string, string> {
  const files: Record<string, string> = {};
  const r = island.router;
  if (r?.kind === "llm-d") {
    // One endpoint a line (a JSON object is a YAML flow mapping), ending in a comment with the URL
    // of the engine behind it: the follower (helpers.sh fleet_endpoints_call) drops and restores lines.
    const lines = r.endpoints.map((e) => {
      const entry = {
        name: e.name,
        address: tokenise(e.address),
        port: String(e.port),
        namespace: "default",
        labels: { "llm-d.ai/pool": "vllm-fleet", ...(e.role ? { "llm-d.ai/role": e.role } : {}) },
      };
      return `  - ${JSON.stringify(entry)} # ${tokenise(e.worker)}`;
    });
    files[GENERATED_FILES["epp-endpoints"]] = ["endpoints:", ...lines].join("\n") + "\n";
    files[GENERATED_FILES["epp-config"]] = plainYaml(tokenise(r.epp.config));
    files[GENERATED_FILES["envoy-config"]] = plainYaml(r.envoy.config);
  }
  if (island.mooncake)
    files[GENERATED_FILES["mooncake-config"]] = JSON.stringify(tokenise(island.mooncake.engineConfig), null, 2);
  return files;
}
