/**
 * Readiness on the real SLURM test cluster (test/e2e/cluster): how long the create command takes to
 * report a fleet once its engines serve, and how create time grows from 1 replica to 8.
 *
 * The fleet is stacks/multi-replica.toml with `inference.deployment.num_nodes` = 1 or 8 (one replica
 * per node, vllm-router in front), engines and router are the stand-ins of test/fixtures/standins.
 * Each stand-in engine waits STANDIN_STARTUP_DELAY_MS (standing for weight loading) and then records
 * the epoch milliseconds at which it began to listen (`listening_at_ms` in its STANDIN_RECORD_DIR
 * record). The stand-ins run in network namespaces of this machine (the login node is this machine
 * too), so the bench reads those records directly and their clock is its own.
 *
 * One run: the exact create command (and stdin) the program hands remote.Command, captured under
 * Pulumi mocks, runs over real SSH; the bench notes when the endpoints JSON line arrives on its
 * stdout; the captured delete command always runs afterwards.
 *
 *   readiness overhead = endpoints line received by the bench - the last engine began listening
 *   create time        = ssh exec of the create command until it exits (what `pulumi up` waits for)
 *
 * The cluster needs 8 nodes: when cluster.env lists fewer, the bench restarts it with
 * FLEET_E2E_NODE_COUNT=8 and afterwards restores the node count it found (the e2e suite expects 4).
 * Without root or a cluster that starts, the section is skipped, never failed.
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parseIslandResult } from "../components/slurm";
import {
  captureCommands,
  CLUSTER_ENV_FILE,
  loginOf,
  readClusterEnv,
  requireProgramFresh,
  ROOT,
  standinOverrides,
  type CapturedCommand,
} from "../test/e2e/program-capture";
import { runRemote, type Connection, type RemoteRun } from "../test/e2e/ssh";
import { median, round, type Figure, type Section } from "./report";

const ID = "readiness";
const TITLE = "SLURM test cluster: endpoints reported vs engines serving; create time 8 vs 1 replicas";
const CLUSTER_DIR = path.join(ROOT, "test", "e2e", "cluster");
/** Replica counts measured; the largest sets the node count the cluster needs. */
const REPLICAS = [1, 8] as const;
const NODES_NEEDED = Math.max(...REPLICAS);
/** Stand-in "weight loading": most of a create's time, as real loading is (3 s keeps the bench short). */
const STARTUP_DELAY_MS = 3000;
/** Measured runs per replica count (after one warm-up run each, not counted). */
const RUNS = Math.max(1, Number(process.env.FLEET_BENCH_READINESS_RUNS ?? 9));
/**
 * SLURM starts a job on its scheduler's tick (the test cluster's backfill pass runs every second),
 * so a create waits 0-1 s for it depending on when it submits. Runs alternate between the replica
 * counts at a near-constant pace, which would hand one count the same phase every time (seen: 8
 * replicas always ~0.6 s behind the tick, 1 replica just before it). A random pause before each
 * create (the bench's pacing, not part of any create) spreads submissions over the tick instead.
 */
const PHASE_SPREAD_MS = 1000;
const OVERHEAD_TARGET_S = 0.5;
const RATIO_TARGET = 1.1;

const log = (msg: string) => process.stderr.write(`bench readiness: ${msg}\n`);

interface Fleet {
  replicas: number;
  command: CapturedCommand;
  recordDir: string;
}

interface Sample {
  replicas: number;
  /** endpoints line received - last engine listening, seconds. */
  overheadS: number;
  /** the create script's own ready moment (t_ready) - last engine listening, seconds. */
  detectS: number;
  createS: number;
}

/** Runs a cluster script as root; resolves with its output, rejects with its last lines. */
function clusterScript(script: "up.sh" | "down.sh", nodeCount?: number): Promise<string> {
  const env = { ...process.env };
  if (nodeCount !== undefined) env.FLEET_E2E_NODE_COUNT = String(nodeCount);
  else delete env.FLEET_E2E_NODE_COUNT;
  return new Promise((resolve, reject) => {
    execFile(
      "bash",
      [path.join(CLUSTER_DIR, script)],
      { env, timeout: 20 * 60_000, maxBuffer: 16 << 20 },
      (err, stdout, stderr) => {
        const out = `${stdout}${stderr}`;
        if (err)
          reject(
            new Error(
              `${script} failed: ${err.message.split("\n")[0]}\n${out.trim().split("\n").slice(-15).join("\n")}`,
            ),
          );
        else resolve(out);
      },
    );
  });
}

/** Job ids in the local scheduler's queue, or undefined when no scheduler answers. */
function localQueue(): Promise<string[] | undefined> {
  return new Promise((resolve) =>
    execFile("squeue", ["-h", "-o", "%i %j"], { timeout: 15_000 }, (err, stdout) =>
      resolve(err ? undefined : stdout.trim().split("\n").filter(Boolean)),
    ),
  );
}

const nodeCountOf = (env: Record<string, string>) => (env.FLEET_E2E_NODES ?? "").split(/\s+/).filter(Boolean).length;

/** Why this machine cannot run the section, if it cannot. */
function unavailable(): string | undefined {
  if (process.platform !== "linux") return `the SLURM test cluster runs on Linux only (this is ${process.platform})`;
  if (process.getuid?.() !== 0)
    return "the SLURM test cluster needs root (test/e2e/cluster/up.sh); run npm run bench as root";
  if (!fs.existsSync(path.join(CLUSTER_DIR, "up.sh"))) return `${CLUSTER_DIR}/up.sh is missing`;
  return undefined;
}

/**
 * Brings the cluster to at least NODES_NEEDED nodes. Returns how to put it back as found, or a
 * reason to skip. A cluster with jobs in its queue is someone else's run: it is left alone.
 */
async function prepareCluster(): Promise<{ restore: () => Promise<void> } | { skip: string }> {
  const before = fs.existsSync(CLUSTER_ENV_FILE) ? readClusterEnv() : undefined;
  const had = before ? nodeCountOf(before) : 0;
  const queue = await localQueue();
  if (queue?.length)
    return { skip: `the test cluster's queue is not empty (${queue.join(", ")}); another run is using it` };
  const restore = async () => {
    log(before ? `restoring the cluster's ${had} node(s)` : "stopping the cluster (it was down before the bench)");
    await clusterScript("down.sh");
    if (before) await clusterScript("up.sh", had);
  };
  const cannotStart = (e: unknown) => ({
    skip: `the SLURM test cluster cannot start: ${e instanceof Error ? e.message : String(e)}`,
  });
  if (had >= NODES_NEEDED) {
    try {
      await clusterScript("up.sh", had); // idempotent: starts only what is not running
    } catch (e) {
      return cannotStart(e);
    }
    return { restore: async () => {} };
  }
  log(
    before
      ? `cluster.env lists ${had} node(s); restarting the cluster with ${NODES_NEEDED}`
      : `starting the test cluster with ${NODES_NEEDED} nodes`,
  );
  try {
    if (before) await clusterScript("down.sh");
    await clusterScript("up.sh", NODES_NEEDED);
  } catch (e) {
    await restore().catch((err) =>
      log(`could not put the cluster back: ${err instanceof Error ? err.message : String(err)}`),
    );
    return cannotStart(e);
  }
  return { restore };
}

/** The create and delete commands the program registers for a fleet of `replicas` replicas. */
async function captureFleet(replicas: number, env: Record<string, string>, privateKey: string): Promise<Fleet> {
  const pulumiStack = `bench-readiness-r${replicas}`;
  const recordDir = `/tmp/fleet-e2e/${pulumiStack}/standin-records`;
  const overrides = standinOverrides(env.FLEET_E2E_PARTITION, pulumiStack, {
    "inference.deployment.num_nodes": replicas,
    "inference.env_vars": { STANDIN_STARTUP_DELAY_MS: String(STARTUP_DELAY_MS), STANDIN_RECORD_DIR: recordDir },
  });
  const { commands, planned } = await captureCommands({
    stackFile: "multi-replica",
    pulumiStack,
    overrides,
    login: loginOf(env),
    privateKey,
    loadProgram: requireProgramFresh,
  });
  if (commands.length !== 1)
    throw new Error(
      `${pulumiStack}: expected one island command, the program registered ${commands.map((c) => c.name).join(", ")}`,
    );
  const engines = planned.islands[0].roles.length;
  if (engines !== replicas) throw new Error(`${pulumiStack}: planned ${engines} engine(s), expected ${replicas}`);
  return { replicas, command: commands[0], recordDir };
}

const ok = (run: RemoteRun, what: string) => {
  if (run.code !== 0)
    throw new Error(
      `${what} failed (exit ${run.code}); stderr:\n${run.stderr.trim().split("\n").slice(-30).join("\n")}`,
    );
};

/** The moments (epoch ms) the fleet's stand-in engines began to listen. */
function listeningMoments(dir: string): number[] {
  return fs
    .readdirSync(dir)
    .filter((f) => /^vllm-\d+\.json$/.test(f))
    .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), "utf8")).listening_at_ms)
    .filter((t): t is number => typeof t === "number");
}

/** One create (timed) and its delete (always). */
async function measure(fleet: Fleet): Promise<Sample> {
  const c = fleet.command;
  fs.rmSync(fleet.recordDir, { recursive: true, force: true });
  fs.mkdirSync(fleet.recordDir, { recursive: true });
  let printedAt: number | undefined;
  let create: RemoteRun;
  try {
    create = await runRemote(c.connection, c.create, c.stdin, 180_000, undefined, (stdout) => {
      // The endpoints line is the one JSON object on stdout; note when its newline arrives.
      if (printedAt === undefined && /^\{.*\}\n/m.test(stdout)) printedAt = Date.now();
    });
  } finally {
    ok(await runRemote(c.connection, c.delete, undefined, 180_000), `${c.name} delete`);
  }
  ok(create, `${c.name} create`);
  const result = parseIslandResult(create.stdout);
  if (result.dryRun || result.adopted)
    throw new Error(
      `${c.name}: expected a freshly submitted job, got ${result.dryRun ? "a dry run" : `adopted job ${result.jobId}`}`,
    );
  if (printedAt === undefined) throw new Error(`${c.name}: the endpoints line never arrived on stdout`);
  const moments = listeningMoments(fleet.recordDir);
  if (moments.length !== fleet.replicas)
    throw new Error(
      `${c.name}: ${moments.length} engine record(s) with listening_at_ms in ${fleet.recordDir}, expected ${fleet.replicas}`,
    );
  const lastListening = Math.max(...moments);
  return {
    replicas: fleet.replicas,
    overheadS: (printedAt - lastListening) / 1000,
    detectS: result.timing.readyAt - lastListening / 1000,
    createS: create.ms / 1000,
  };
}

async function measureAll(): Promise<Figure[]> {
  const env = readClusterEnv();
  const privateKey = fs.readFileSync(env.FLEET_E2E_SSH_KEY, "utf8");
  const conn: Connection = { ...loginOf(env), privateKey };
  const fleets: Fleet[] = [];
  for (const n of REPLICAS) fleets.push(await captureFleet(n, env, privateKey));
  const samples: Sample[] = [];
  try {
    // A bench cut short earlier may have left its job: delete is idempotent.
    for (const f of fleets) ok(await runRemote(f.command.connection, f.command.delete), `${f.command.name} delete`);
    // Interleaved, so load from elsewhere on the machine hits both replica counts alike.
    for (let pass = 0; pass <= RUNS; pass++) {
      for (const f of fleets) {
        await new Promise((r) => setTimeout(r, Math.random() * PHASE_SPREAD_MS));
        const s = await measure(f);
        log(
          `${pass === 0 ? "warm-up" : `run ${pass}/${RUNS}`}, ${f.replicas} replica(s): overhead ${s.overheadS.toFixed(3)} s (create saw ready after ${s.detectS.toFixed(3)} s), create ${s.createS.toFixed(2)} s`,
        );
        if (pass > 0) samples.push(s);
      }
    }
  } finally {
    for (const f of fleets) await runRemote(f.command.connection, f.command.delete).catch(() => undefined);
  }
  const left = (await runRemote(conn, "squeue -h -o '%i %j'")).stdout.trim();
  if (left) throw new Error(`jobs left in the queue after the bench deleted its fleets: ${left}`);

  const of = (n: number) => samples.filter((s) => s.replicas === n);
  const figures: Figure[] = [];
  for (const n of REPLICAS) {
    const overhead = of(n).map((s) => s.overheadS);
    const detect = median(of(n).map((s) => s.detectS));
    figures.push({
      name: `readiness overhead, ${n} replica${n > 1 ? "s" : ""}`,
      value: round(median(overhead)),
      unit: "s",
      target: { op: "<=", value: OVERHEAD_TARGET_S },
      samples: overhead.map((x) => round(x)),
      note: `endpoints line received - last engine listening, median of ${overhead.length}; the create script's own ready mark: +${round(detect)} s`,
    });
  }
  const create = (n: number) => median(of(n).map((s) => s.createS));
  for (const n of REPLICAS) {
    figures.push({
      name: `create time, ${n} replica${n > 1 ? "s" : ""}`,
      value: round(create(n)),
      unit: "s",
      samples: of(n).map((s) => round(s.createS)),
      note: `stand-in engines load for ${STARTUP_DELAY_MS} ms, median of ${of(n).length}`,
    });
  }
  const [one, many] = [REPLICAS[0], REPLICAS[REPLICAS.length - 1]];
  figures.push({
    name: `create time ${many} replicas / ${one} replica (medians)`,
    value: round(create(many) / create(one)),
    unit: "x",
    target: { op: "<=", value: RATIO_TARGET },
    note: `the ${NODES_NEEDED} nodes and their stand-ins share this machine's ${os.cpus().length} cores`,
  });
  return figures;
}

export async function run(): Promise<Section> {
  const why = unavailable();
  if (why) return { id: ID, title: TITLE, figures: [], skipped: why };
  const cluster = await prepareCluster();
  if ("skip" in cluster) return { id: ID, title: TITLE, figures: [], skipped: cluster.skip };
  try {
    return { id: ID, title: TITLE, figures: await measureAll() };
  } finally {
    await cluster.restore();
  }
}
