/**
 * Readiness with a real engine (issue 19): the single-node stack on the SLURM test cluster with the
 * real `vllm serve` (vLLM's CPU build from the pinned venv of test/e2e/python-env.sh) serving the
 * tiny model built there, behind the real vllm-router.
 *
 *   readiness overhead = endpoints line received by the bench - the later of the engine's first
 *                        /health 200 and the router's first /readiness 200 (both can serve)
 *   after the engine   = endpoints line received - the engine's first /health 200 (the figure of
 *                        issue 19, kept beside it)
 *   router lag         = the router's first /readiness 200 - the engine's first /health 200
 *   engine start       = the engine's first /health 200 - create started
 *
 * The engine's node is chosen by SLURM, so while create runs the bench polls /health on the engine
 * port of every node of the cluster every POLL_MS and keeps the first 200 it sees (resolution
 * POLL_MS). Needs root, the test cluster (test/e2e/cluster/up.sh, 4 nodes are enough) and the venv;
 * without them the section is skipped, never failed.
 */
import * as fs from "node:fs";
import { parseIslandResult } from "../components/slurm";
import {
  captureCommands,
  loginOf,
  readClusterEnv,
  requireProgramFresh,
  standinOverrides,
} from "../test/e2e/program-capture";
import { launcherDir, pythonEnv } from "../test/e2e/real-parts";
import { runRemote, type RemoteRun } from "../test/e2e/ssh";
import { expectRan, realClusterUnavailable, tinyModelOverrides } from "./real-cluster";
import { median, round, type Figure, type Section } from "./report";

const ID = "readiness-real";
const TITLE = "SLURM test cluster, real vLLM (CPU build): endpoints reported vs the engine's first /health 200";
const RUNS = Math.max(1, Number(process.env.FLEET_BENCH_REAL_RUNS ?? 2));
const POLL_MS = 20;
const ENGINE_PORT = 8100;
const ROUTER_PORT = 8000;
/** Issue 32: create returns within 0.1 s of the moment the last engine and the router can serve. */
const OVERHEAD_TARGET_S = 0.1;
/** Issue 19's target for the endpoints line after the engine's first /health 200. */
const AFTER_ENGINE_TARGET_S = 0.5;
const log = (msg: string) => process.stderr.write(`bench ${ID}: ${msg}\n`);

/** Polls `path` on `port` of every node until stopped; resolves with the first 200's epoch ms. */
function firstOk(ips: string[], port: number, path: string): { stop: () => void; at: Promise<number | undefined> } {
  let stopped = false;
  const at = (async () => {
    while (!stopped) {
      const t = Date.now();
      const hits = await Promise.all(
        ips.map((ip) =>
          fetch(`http://${ip}:${port}${path}`, { signal: AbortSignal.timeout(1000) })
            .then((r) => r.status === 200)
            .catch(() => false),
        ),
      );
      if (hits.some(Boolean)) return t;
      await new Promise((r) => setTimeout(r, Math.max(0, POLL_MS - (Date.now() - t))));
    }
    return undefined;
  })();
  return { stop: () => (stopped = true), at };
}

async function measureAll(): Promise<Figure[]> {
  const env = readClusterEnv();
  const py = pythonEnv();
  const privateKey = fs.readFileSync(env.FLEET_E2E_SSH_KEY, "utf8");
  const { dir } = launcherDir(py, "bench-real", ["vllm", "vllm-router"]);
  const pulumiStack = "bench-readiness-real";
  const { commands } = await captureCommands({
    stackFile: "single-node",
    pulumiStack,
    overrides: standinOverrides(env.FLEET_E2E_PARTITION, pulumiStack, tinyModelOverrides(py), false, dir),
    login: loginOf(env),
    privateKey,
    loadProgram: requireProgramFresh,
  });
  const c = commands[0];
  const ips = env.FLEET_E2E_NODE_IPS.split(/\s+/).filter(Boolean);
  const overhead: number[] = [];
  const afterEngine: number[] = [];
  const start: number[] = [];
  const routerLag: number[] = [];
  const create: number[] = [];
  expectRan(await runRemote(c.connection, c.delete, undefined, 180_000), "delete before the bench");
  for (let i = 1; i <= RUNS; i++) {
    const startedAt = Date.now();
    const probe = firstOk(ips, ENGINE_PORT, "/health");
    // vllm-router's /readiness: 200 once it has healthy workers to route to.
    const router = firstOk(ips, ROUTER_PORT, "/readiness");
    let printedAt: number | undefined;
    let run: RemoteRun;
    try {
      run = await runRemote(c.connection, c.create, c.stdin, 20 * 60_000, undefined, (stdout) => {
        if (printedAt === undefined && /^\{.*\}\n/m.test(stdout)) printedAt = Date.now();
      });
    } finally {
      probe.stop();
      router.stop();
      expectRan(await runRemote(c.connection, c.delete, undefined, 180_000), "delete");
    }
    expectRan(run, "create");
    const healthyAt = await probe.at;
    const routerAt = await router.at;
    const result = parseIslandResult(run.stdout);
    if (result.dryRun || result.adopted) throw new Error("expected a freshly submitted job");
    if (printedAt === undefined || healthyAt === undefined || routerAt === undefined)
      throw new Error(
        `run ${i}: ${printedAt === undefined ? "no endpoints line" : healthyAt === undefined ? "no engine /health 200 seen" : "no router /readiness 200 seen"}`,
      );
    routerLag.push((routerAt - healthyAt) / 1000);
    overhead.push((printedAt - Math.max(healthyAt, routerAt)) / 1000);
    afterEngine.push((printedAt - healthyAt) / 1000);
    start.push((healthyAt - startedAt) / 1000);
    create.push(run.ms / 1000);
    log(
      `run ${i}/${RUNS}: overhead ${overhead.at(-1)!.toFixed(3)} s, ${afterEngine.at(-1)!.toFixed(3)} s after the engine (router ready ${routerLag.at(-1)!.toFixed(3)} s after the engine), engine start ${start.at(-1)!.toFixed(1)} s, create ${create.at(-1)!.toFixed(1)} s`,
    );
  }
  const left = (await runRemote({ ...loginOf(env), privateKey }, "squeue -h -o '%i %j'")).stdout.trim();
  if (left) throw new Error(`jobs left in the queue after the bench: ${left}`);
  return [
    {
      name: "readiness overhead, real vLLM and real vllm-router",
      value: round(median(overhead)),
      unit: "s",
      target: { op: "<=", value: OVERHEAD_TARGET_S },
      samples: overhead.map((x) => round(x)),
      note: `endpoints line received - the later of the engine's first /health 200 and the router's first /readiness 200 (each polled every ${POLL_MS} ms), median of ${RUNS}; vLLM ${py.FLEET_PYENV_VLLM} CPU build, tiny model`,
    },
    {
      name: "endpoints line after the engine's first /health 200, real vLLM",
      value: round(median(afterEngine)),
      unit: "s",
      target: { op: "<=", value: AFTER_ENGINE_TARGET_S },
      samples: afterEngine.map((x) => round(x)),
      baseline: { value: 0.74, from: "issue 19, router told its workers at start" },
      note: "issue 19's figure",
    },
    {
      name: "real router ready after the engine (first /readiness 200 - engine's first /health 200)",
      value: round(median(routerLag)),
      unit: "s",
      samples: routerLag.map((x) => round(x)),
      baseline: { value: 0.63, from: "issue 19, its own once-a-second check" },
      note: "the router starts with no workers and is told the engine (POST /add_worker) once it answers /health",
    },
    {
      name: "real engine start (create started -> first /health 200)",
      value: round(median(start), 1),
      unit: "s",
      samples: start.map((x) => round(x, 1)),
      note: "sbatch, scheduling, vLLM import, model load and warm-up on this machine's cores",
    },
    {
      name: "create time, real vLLM",
      value: round(median(create), 1),
      unit: "s",
      samples: create.map((x) => round(x, 1)),
    },
  ];
}

export async function run(): Promise<Section> {
  const why = realClusterUnavailable();
  if (why) return { id: ID, title: TITLE, figures: [], skipped: why };
  return { id: ID, title: TITLE, figures: await measureAll() };
}
