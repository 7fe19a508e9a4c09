import YAML from "yaml";
import { WORKER_STARTUP_TIMEOUT_S } from "../plan/router-plan";
import { engineFlag, PRIME_INFERENCE_PROGRAM } from "../plan/engine-argv";
import type { DeploymentPlan, EngineProcess, IslandPlan, SlurmSettings } from "../plan/deployment-plan";
import { resolveDeep, type Ref, type Value } from "../plan/values";
import { SECRETS, secretOrder, type SecretName } from "../credentials";
import { heredocDelimiter, shellWord, shellWords, shq, type RefSpelling } from "../shell";
import { renderTemplate } from "./templates";
import { slurmSettings } from "./settings";
import { islandName } from "../plan/naming";

/** Seconds a node waits for the Mooncake master (head) and its own client before giving up. */
const MOONCAKE_WAIT_S = 120;

/** Programs the pre-launch cleanup kills by exact name (one pkill: a single pass over the process table). */
const PROGRAMS = ["vllm", "vllm-router", "epp", "envoy", "pd-sidecar", "mooncake_master", "mooncake_client"];

/** How run-time references are spelled inside the per-node launch body. */
const spell: RefSpelling = (ref: Ref) => {
  if (ref.ref === "node") return `\${NODE_ADDR[${ref.node}]}`;
  if (ref.ref === "self") return "${SELF_ADDR}";
  if (ref.ref === "scratch") return `\${FLEET_SCRATCH}-${ref.name}`;
  return `\${NODE_DIR}/${GENERATED_FILES[ref.file]}`;
};

/**
 * Scratch directories on the node's own /tmp, as prime-rl's _launch_rank.sh.j2 makes them
 * (/tmp/vllm-rpc-$USER-$SLURM_JOB_ID-<port>): node-local and short, as Unix socket paths must be
 * (vLLM puts its IPC sockets under VLLM_RPC_BASE_PATH), and cleared by the next job's cleanup.
 */
const SCRATCH_BASE = 'FLEET_SCRATCH="/tmp/vllm-fleet-$(id -u)-$SLURM_JOB_ID"';

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

/** The fleet's part of every job name: [slurm] job_name and the Pulumi stack (once when they are the same). */
function jobBase(plan: DeploymentPlan): string {
  const target = slurmSettings(plan);
  const stack = plan.stack.replace(/[^A-Za-z0-9._-]/g, "-");
  return target.job_name === stack ? stack : `${target.job_name}-${stack}`;
}

/** The unique SLURM job name of an island: adoption and scancel find the job by it. */
export function jobName(plan: DeploymentPlan, island: number): string {
  return islandName(jobBase(plan), plan.service, island);
}

/**
 * The fleet's folder on the cluster: output_dir as set, else vllm-fleet/<job name without -i<k>>.
 * The default carries the Pulumi stack, so two stacks of one stack file (dev, prod) never share a
 * folder and never remove each other's endpoints.json.
 */
export function fleetDir(plan: DeploymentPlan): string {
  return plan.outputDir ?? `vllm-fleet/${jobBase(plan)}`;
}

/**
 * The name of the process that answers on the island's router URL: its log is <name>.log and its
 * exit marker <name>.exit, which `fleet status` and `fleet logs` find by this name.
 */
export function routerProcess(kind: "vllm-router" | "llm-d"): string {
  return kind === "llm-d" ? "envoy" : "router";
}

/** Where an island keeps its script, logs and endpoints.json (relative paths: under the login home). */
export function islandDir(plan: DeploymentPlan, island: IslandPlan): string {
  return `${fleetDir(plan).replace(/\/+$/, "")}/${island.name}`;
}

function directives(plan: DeploymentPlan, island: IslandPlan): string[] {
  const t = slurmSettings(plan);
  const d = [
    `--job-name=${jobName(plan, island.index)}`,
    `--nodes=${island.nodes.length}`,
    "--ntasks-per-node=1",
    `--gres=${t.gres ?? `gpu:${plan.gpusPerNode}`}`,
    `--output=${islandDir(plan, island)}/slurm-%j.out`,
    // A fleet whose node failed must end and give its GPUs back: a requeued copy would come up on
    // other nodes, behind URLs the stack outputs no longer hold.
    "--no-requeue",
  ];
  if (t.exclusive) d.push("--exclusive");
  for (const key of ["partition", "account", "qos", "time", "nodelist", "exclude", "constraint"] as const) {
    if (t[key]) d.push(`--${key}=${t[key]}`);
  }
  return d;
}

/** The launch body's (unexported) variable holding a secret read from its 0600 file. */
const secretVar = (name: SecretName) => `FLEET_${SECRETS[name].file.toUpperCase()}`;

function setupLines(t: SlurmSettings, offload: boolean, secrets: SecretName[], scratch: boolean): string[] {
  const lines: string[] = [];
  if (scratch)
    lines.push("# Per-process scratch directories (VLLM_RPC_BASE_PATH): node-local, this job's own.", SCRATCH_BASE);
  if (secrets.length) lines.push("# Credentials: read from their 0600 files, never written into this script.");
  for (const s of secrets) lines.push(`${secretVar(s)}=$(<"$FLEET_SECRETS_DIR/${SECRETS[s].file}") || exit 1`);
  const l = t.launcher;
  if (l.type === "vllm" && l.bin_dir) lines.push(`export PATH=${shq(l.bin_dir)}:"$PATH"`);
  if (l.type === "venv") lines.push(`# shellcheck disable=SC1091`, `source ${shq(l.path + "/bin/activate")} || exit 1`);
  if (offload) lines.push("# Offloaded KV blocks are pinned memory.", "ulimit -l unlimited 2>/dev/null || true");
  return lines;
}

/** What an engine gets of the configured secrets: HF_TOKEN in its env, the API key as --api-key. */
interface SecretUse {
  env: SecretName[];
  apiKey: boolean;
}
const NO_SECRETS: SecretUse = { env: [], apiKey: false };

/**
 * `( [before;] export ...; exec cmd ) >> log &`: each process in its own subshell with its own env
 * and log; `before` is a command the subshell runs first (a wait), logged with the process.
 */
function startLine(
  name: string,
  env: [string, Value][],
  argv: Value[],
  wrap: string[],
  secrets: SecretUse,
  before?: string,
): string {
  const exports = env.map(([k, v]) =>
    k === "CUDA_VISIBLE_DEVICES" && typeof v === "string"
      ? `${k}="$(fleet_gpus ${shq(v)})"; export ${k}`
      : `export ${k}=${shellWord(v, spell)}`,
  );
  for (const s of secrets.env) exports.push(`export ${SECRETS[s].env}="$${secretVar(s)}"`);
  const cmd = [
    ...wrap,
    shellWords(argv, spell),
    ...(secrets.apiKey ? [`${engineFlag(argv, "--api-key")} "$${secretVar("apiKey")}"`] : []),
  ].join(" ");
  return `( ${[...(before ? [before] : []), ...exports, `exec ${cmd}`].join("; ")} ) >> "$NODE_DIR/${name}.log" 2>&1 &`;
}

function launcherWrap(t: SlurmSettings): string[] {
  if (t.launcher.type !== "apptainer") return [];
  const binds = t.launcher.binds.length ? ["--bind", shq(t.launcher.binds.join(","))] : [];
  return ["apptainer", "exec", "--nv", ...binds, shq(t.launcher.image)];
}

/** Starts one process in the background and logs its pid to the job output. */
function startLines(
  name: string,
  env: [string, Value][],
  argv: Value[],
  wrap: string[],
  secrets = NO_SECRETS,
  before?: string,
): string[] {
  return [
    startLine(name, env, argv, wrap, secrets, before),
    `FLEET_PIDS+=("$!"); FLEET_NAMES+=(${shq(name)}); echo "[fleet] ${name} started (pid $!)"`,
  ];
}

/** Writes one of the island's generated files on this node (see generatedFiles). */
function writeLine(files: Record<string, string>, name: string): string {
  return `fleet_write "$NODE_DIR/${name}" ${shq(files[name])}`;
}

function nodeLines(plan: DeploymentPlan, island: IslandPlan, node: number, secrets: SecretName[]): string[] {
  const t = slurmSettings(plan);
  const wrap = launcherWrap(t);
  const files = generatedFiles(island);
  const lines: string[] = [];
  const m = island.mooncake;
  if (m) {
    const head = `"\${NODE_ADDR[${m.headNode}]}"`;
    if (node === m.headNode) lines.push(...startLines("mooncake_master", [], m.master.argv, wrap));
    lines.push(
      `fleet_wait_tcp ${head} ${m.masterPort} ${MOONCAKE_WAIT_S} "the Mooncake master"`,
      `fleet_wait_tcp ${head} ${m.metadataPort} ${MOONCAKE_WAIT_S} "the Mooncake metadata server"`,
    );
    const client = m.clients.find((c) => c.node === node)!;
    lines.push(...startLines("mooncake_client", [], client.argv, wrap));
    lines.push(`fleet_wait_tcp "$SELF_ADDR" ${m.clientPort} ${MOONCAKE_WAIT_S} "the Mooncake client"`);
    lines.push(writeLine(files, GENERATED_FILES["mooncake-config"]));
  }
  // Only engines hold secrets: the router passes the client's Authorization through, so a router
  // holding the key would let any caller in without one.
  const engineSecrets = (e: EngineProcess): SecretUse => ({
    env: secrets.filter((s) => s === "hfToken"),
    apiKey: secrets.includes("apiKey") && e.port !== undefined,
  });
  for (const e of island.engines.filter((x) => x.node === node)) {
    const dirs = scratchDirs(e.env);
    const mkdir = dirs.length ? `mkdir -p ${shellWords(dirs, spell)} || exit 1` : undefined;
    lines.push(...startLines(e.id, e.env, e.argv, wrap, engineSecrets(e), mkdir));
  }
  const r = island.router;
  if (r?.kind === "llm-d") {
    for (const s of r.sidecars.filter((x) => x.node === node))
      lines.push(...startLines("pd-sidecar", [], s.argv, wrap));
  }
  if (r && r.node === node) {
    if (r.kind === "vllm-router") {
      // vllm-router checks its workers once at start, then every --worker-startup-check-interval
      // (>= 1 s): started once they are healthy, its first check passes and it serves at once.
      const workers = island.endpoints.engines.map((e) => `"\${NODE_ADDR[${e.url.node}]}:${e.url.port}"`).join(" ");
      lines.push(
        ...startLines(
          routerProcess(r.kind),
          [],
          r.argv,
          wrap,
          NO_SECRETS,
          `fleet_wait_healthy ${WORKER_STARTUP_TIMEOUT_S} ${workers}`,
        ),
      );
    } else {
      lines.push(
        writeLine(files, GENERATED_FILES["epp-endpoints"]),
        writeLine(files, GENERATED_FILES["epp-config"]),
        writeLine(files, GENERATED_FILES["envoy-config"]),
        ...startLines("epp", [], r.epp.argv, wrap),
        ...startLines(routerProcess(r.kind), [], r.envoy.argv, wrap),
      );
    }
  }
  return lines;
}

/** The sbatch script of one island, and the two bodies it feeds to srun (checked on their own). */
export interface IslandScript {
  script: string;
  launchBody: string;
  cleanupBody: string;
}

/** The sbatch script of one island: the whole island is one gang-scheduled job. */
export function renderIslandScript(
  plan: DeploymentPlan,
  island: IslandPlan,
  configuredSecrets: readonly SecretName[] = [],
): IslandScript {
  const t = slurmSettings(plan, "renderIslandScript");
  const secrets = secretOrder(configuredSecrets);
  const launchBody = renderTemplate("slurm/launch.sh.mustache", {
    setup: setupLines(
      t,
      plan.kvTiers !== null,
      secrets,
      island.engines.some((e) => scratchDirs(e.env).length > 0),
    ),
    nodes: island.nodes.map((n) => ({ index: n.index, lines: nodeLines(plan, island, n.index, secrets) })),
  }).trimEnd();
  // prime-rl's server runs as its `inference` console script: cleaned up only where the plan runs it.
  const programs = island.engines.some((e) => e.argv[0] === PRIME_INFERENCE_PROGRAM)
    ? [...PROGRAMS, PRIME_INFERENCE_PROGRAM]
    : PROGRAMS;
  const cleanupBody = renderTemplate("slurm/cleanup.sh.mustache", { programs: programs.join("|") }).trimEnd();
  const srunExtra =
    t.launcher.type === "pyxis"
      ? [
          `--container-image=${shq(t.launcher.image)}`,
          ...(t.launcher.mounts.length ? [`--container-mounts=${shq(t.launcher.mounts.join(","))}`] : []),
        ]
      : [];
  const script = renderTemplate("slurm/island.sbatch.mustache", {
    stack: plan.stack,
    // Nothing here may depend on the island count: the script's hash replaces the island's job, and
    // adding an island must leave the others running (issue 25).
    island: island.name,
    summary: `${island.nodes.length} node(s), ${island.engines.length} engine(s), model ${plan.model}`.replace(
      /\n/g,
      " ",
    ),
    directives: directives(plan, island),
    islandDir: shq(islandDir(plan, island)),
    secretFiles: secrets.map((s) => SECRETS[s].file),
    hasSecrets: secrets.length > 0,
    nodeCount: island.nodes.length,
    cleanup: t.exclusive,
    cleanupBody,
    cleanupDelimiter: heredocDelimiter("FLEET_CLEANUP", cleanupBody),
    srunExtra,
    launchBody,
    launchDelimiter: heredocDelimiter("FLEET_LAUNCH", launchBody),
  });
  return { script, launchBody, cleanupBody };
}

/** YAML without anchors and aliases: a shared sub-object is written out in full at each use. */
const plainYaml = (data: unknown) => YAML.stringify(data, { aliasDuplicateObjects: false });

/**
 * The config files the job writes on its nodes, with node addresses as tokens that fleet_write fills
 * in at run time. The launch body and `plan --out` both use this, so readers see what is written.
 */
export function generatedFiles(island: IslandPlan): Record<string, string> {
  const files: Record<string, string> = {};
  const r = island.router;
  if (r?.kind === "llm-d") {
    const endpoints = r.endpoints.map((e) => ({
      name: e.name,
      address: tokenise(e.address),
      port: String(e.port),
      namespace: "default",
      labels: { "llm-d.ai/pool": "vllm-fleet", ...(e.role ? { "llm-d.ai/role": e.role } : {}) },
    }));
    files[GENERATED_FILES["epp-endpoints"]] = plainYaml({ endpoints });
    files[GENERATED_FILES["epp-config"]] = plainYaml(tokenise(r.epp.config));
    files[GENERATED_FILES["envoy-config"]] = plainYaml(r.envoy.config);
  }
  if (island.mooncake)
    files[GENERATED_FILES["mooncake-config"]] = JSON.stringify(tokenise(island.mooncake.engineConfig), null, 2);
  return files;
}
