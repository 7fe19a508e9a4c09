/**
 * Issue 7, 1c: `fleet status` and `fleet metrics` over 64 stand-in engines against one engine.
 * Target: time(64) <= 1.5 x time(1), for each verb.
 *
 * 64 stand-in `vllm serve` processes (test/fixtures/standins, STANDIN_STARTUP_DELAY_MS=0) listen on
 * 127.0.0.1, each on its own port. Two island endpoints.json files (the `vllm-fleet/island/v1`
 * result a job writes) name the first engine and all 64; the 1-engine file is a subset of the same
 * processes, and the two sizes are measured alternately, so both see the same machine load.
 *
 * Two measurements per verb and size:
 *  - CLI: the whole command as a user runs it, `tsx bin/fleet.ts <verb> --endpoints <file> --local`
 *    as a child process, wall time from spawn to exit (Node start-up, tsx, the scheduler query, the
 *    HTTP round, rendering; `npm run fleet` would add npm's own start-up to both sizes). An
 *    island's endpoints.json is a SLURM island, and `status`/`metrics` on a SLURM fleet insist on a
 *    scheduler shell (needShell in bin/fleet.ts), so the child runs with `--local` and stand-in
 *    squeue/sinfo/scontrol/getent first on its PATH that report the job RUNNING (as
 *    test/ops/status.test.ts does). `metrics` scrapes twice, `--interval` apart; it runs with
 *    --interval 0.001, the CLI's only bound being > 0.
 *  - in-process: the command function itself, so Node start-up cannot hide the ratio, without the
 *    scheduler query (no shell: one round trip whatever the engine count) and starting each run
 *    with no open connections, as a fresh CLI does: statusCommand + statusText; engineTargets + one
 *    scrapeAll round + metricsRows + metricsText. The notes give this process's CPU time per run;
 *    the rest of the wall time is the stand-ins' (on the same cores) and the network stack's.
 */
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as http from "node:http";
import * as https from "node:https";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { engineTargets, metricsRows, scrapeAll, statusCommand } from "../components/ops/commands";
import { viewFromEndpoints, type FleetView } from "../components/ops/fleet-view";
import { metricsText, statusText } from "../components/ops/render-text";
import { islandResultSchema, RESULT_FORMAT } from "../components/slurm";
import { median, round, type Section } from "./report";

const ROOT = path.resolve(__dirname, "..");
const VLLM = path.join(ROOT, "test", "fixtures", "standins", "bin", "vllm");
const TSX = path.join(ROOT, "node_modules", ".bin", "tsx");
const FLEET = path.join(ROOT, "bin", "fleet.ts");

const MODEL = "Qwen/Qwen3-8B";
const ENGINES = 64;
/** Runs per figure, after one warm-up that is not counted (fewer only for a quick local look). */
const RUNS = Number(process.env.BENCH_FLEET_CLI_RUNS ?? 9);
const TARGET = { op: "<=" as const, value: 1.5 };
const METRICS_INTERVAL_S = 0.001;

interface Engine {
  port: number;
  proc: ChildProcess;
  stderr: () => string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Free ports, held open together so that no two engines are handed the same one. */
async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<net.Server>((resolve, reject) => {
          const s = net.createServer();
          s.once("error", reject);
          s.listen(0, "127.0.0.1", () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

function standinEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("STANDIN_") && k !== "VLLM_API_KEY") env[k] = v;
  return { ...env, STANDIN_STARTUP_DELAY_MS: "0" };
}

/** Starts the stand-ins all at once; resolves when every one answers /health 200. */
async function startEngines(n: number, live: Engine[]): Promise<void> {
  const env = standinEnv();
  for (const port of await freePorts(n)) {
    const proc = spawn(VLLM, ["serve", MODEL, "--host", "127.0.0.1", "--port", String(port)], {
      env,
      stdio: ["ignore", "ignore", "pipe"],
    });
    let err = "";
    proc.stderr!.on("data", (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
    live.push({ port, proc, stderr: () => err });
  }
  const deadline = Date.now() + 60_000;
  await Promise.all(
    live.map(async (e) => {
      for (;;) {
        if (e.proc.exitCode !== null)
          throw new Error(`stand-in engine on port ${e.port} exited (${e.proc.exitCode}): ${e.stderr()}`);
        try {
          const res = await fetch(`http://127.0.0.1:${e.port}/health`, { signal: AbortSignal.timeout(2000) });
          await res.arrayBuffer();
          if (res.status === 200) return;
        } catch {
          // not listening yet
        }
        if (Date.now() > deadline)
          throw new Error(`stand-in engine on port ${e.port} not healthy within 60 s: ${e.stderr()}`);
        await sleep(50);
      }
    }),
  );
}

/** SIGTERM every stand-in, SIGKILL any still there after 5 s. */
async function stopEngines(live: Engine[]): Promise<void> {
  const exits = live.map((e) =>
    e.proc.exitCode !== null || e.proc.signalCode !== null
      ? Promise.resolve()
      : new Promise<void>((r) => e.proc.once("exit", () => r())),
  );
  for (const e of live) e.proc.kill("SIGTERM");
  const all = Promise.all(exits);
  if ((await Promise.race([all.then(() => true), sleep(5000).then(() => false)])) === false) {
    for (const e of live) if (e.proc.exitCode === null && e.proc.signalCode === null) e.proc.kill("SIGKILL");
    await all;
  }
}

/** The endpoints.json an island's job writes, for the given engines (validated against the real schema). */
function islandEndpoints(ports: number[], jobName: string): unknown {
  const url = (p: number) => `http://127.0.0.1:${p}/v1`;
  const doc = {
    format: RESULT_FORMAT,
    dryRun: false,
    stack: "bench-fleet-cli",
    island: 0,
    jobName,
    jobId: "4242",
    adopted: false,
    model: MODEL,
    nodes: [{ name: "bench-n0", host: "benchnode", addr: "127.0.0.1" }],
    routerUrl: null,
    engines: ports.map((p, k) => ({ id: `i0-replica${k}`, role: "replica", replica: k, url: url(p) })),
    adminUrls: ports.map(url),
    roles: ports.map(() => "replica"),
    mooncake: null,
    timing: { submittedAt: 0, runningAt: 0, readyAt: 0 },
  };
  return islandResultSchema.parse(doc);
}

/** squeue, sinfo, scontrol and getent that report the bench's job RUNNING on one node, 127.0.0.1. */
function fakeScheduler(dir: string): string {
  const bin = path.join(dir, "bin");
  fs.mkdirSync(bin, { recursive: true });
  const tool = (name: string, body: string) =>
    fs.writeFileSync(path.join(bin, name), `#!/bin/bash\n${body}\n`, { mode: 0o755 });
  tool("squeue", 'echo "4242|RUNNING|None|benchnode"');
  tool("sinfo", 'echo "benchnode|allocated"');
  tool("scontrol", 'if [ "$1 $2" = "show hostnames" ]; then echo benchnode; else exit 1; fi');
  tool("getent", 'echo "127.0.0.1 STREAM benchnode"');
  tool("sacct", "exit 1");
  return bin;
}

interface Cli {
  ms: number;
  stdout: string;
}

function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<Cli> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(TSX, [FLEET, ...args], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      const ms = performance.now() - t0;
      if (code !== 0) reject(new Error(`fleet ${args.join(" ")} exited ${code}: ${stderr.trim().slice(-1000)}`));
      else resolve({ ms, stdout });
    });
  });
}

/** What a run must have printed to count: every engine READY / scraped, none missing. */
function checkStatus(text: string, n: number) {
  if (!text.startsWith(`${MODEL} (slurm): READY`))
    throw new Error(`fleet status did not report READY:\n${text.slice(0, 2000)}`);
  if (!text.includes(`${n} of ${n} serving`))
    throw new Error(`fleet status did not count ${n} serving engines:\n${text.slice(0, 2000)}`);
}
function checkMetrics(text: string, n: number) {
  if (!text.includes(`${n} engines`) || text.includes("not answering"))
    throw new Error(`fleet metrics did not scrape all ${n} engines:\n${text.slice(0, 2000)}`);
}

/**
 * In-process runs start with no open connections, as the CLI does: the agents' kept-alive sockets
 * from the run before are closed first (not timed).
 */
function closeConnections() {
  http.globalAgent.destroy();
  https.globalAgent.destroy();
}

/** One timed run: wall time, and for in-process runs the CPU this process spent (the rest is the stand-ins' and waiting). */
interface Sample {
  ms: number;
  cpuMs?: number;
}

async function inProcess(body: () => Promise<string>): Promise<Sample & { text: string }> {
  closeConnections();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const text = await body();
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000, text };
}

async function statusInProcess(view: FleetView, n: number): Promise<Sample> {
  const r = await inProcess(async () => statusText(await statusCommand(view, undefined)));
  checkStatus(r.text, n);
  return r;
}

async function metricsInProcess(view: FleetView, n: number): Promise<Sample> {
  const r = await inProcess(async () => {
    const engines = await engineTargets(view, undefined);
    const { rows, total } = metricsRows(engines, await scrapeAll(engines));
    return metricsText(view.model, rows, total);
  });
  checkMetrics(r.text, n);
  return r;
}

const CLI_NOTE = {
  status:
    "CLI: wall time of the child process `tsx bin/fleet.ts status --endpoints <endpoints.json> --local`, Node start-up included",
  metrics: `CLI: wall time of the child process \`tsx bin/fleet.ts metrics --endpoints <endpoints.json> --local --interval ${METRICS_INTERVAL_S}\` (two scrapes; any interval > 0 is allowed), Node start-up included`,
};
const IN_PROCESS_NOTE = {
  status:
    "in-process: statusCommand + statusText only, fresh connections, no scheduler query; servers share the client's 2 cores",
  metrics:
    "in-process: engineTargets + one scrapeAll round + metricsRows + metricsText only, fresh connections, no scheduler query; servers share the client's 2 cores",
};

interface Case {
  verb: "status" | "metrics";
  how: "CLI" | "in-process";
  run: (size: 1 | 64) => Promise<Sample>;
}

export async function run(): Promise<Section> {
  const section: Section = {
    id: "fleet-cli",
    title: `fleet status and fleet metrics: ${ENGINES} stand-in engines against one`,
    figures: [],
  };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-fleet-cli-"));
  const live: Engine[] = [];
  const killAll = () => {
    for (const e of live) if (e.proc.exitCode === null && e.proc.signalCode === null) e.proc.kill("SIGKILL");
  };
  // Stand-ins must not outlive the bench, whatever ends it.
  const onSignal = (sig: NodeJS.Signals) => {
    killAll();
    process.exit(sig === "SIGINT" ? 130 : 143);
  };
  process.once("exit", killAll);
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    await startEngines(ENGINES, live);
    const ports = live.map((e) => e.port);
    const files = { 1: path.join(dir, "endpoints-1.json"), 64: path.join(dir, "endpoints-64.json") } as const;
    fs.writeFileSync(files[1], JSON.stringify(islandEndpoints(ports.slice(0, 1), "bench-fleet-cli-i0")));
    fs.writeFileSync(files[64], JSON.stringify(islandEndpoints(ports, "bench-fleet-cli-i0")));
    const views = {
      1: viewFromEndpoints(JSON.parse(fs.readFileSync(files[1], "utf8")), files[1]),
      64: viewFromEndpoints(JSON.parse(fs.readFileSync(files[64], "utf8")), files[64]),
    };
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${fakeScheduler(dir)}:${process.env.PATH ?? ""}` };
    delete env.VLLM_API_KEY;

    const cases: Case[] = [
      {
        verb: "status",
        how: "CLI",
        run: async (n) => {
          const r = await runCli(["status", "--endpoints", files[n], "--local"], env);
          checkStatus(r.stdout, n);
          return { ms: r.ms };
        },
      },
      {
        verb: "metrics",
        how: "CLI",
        run: async (n) => {
          const r = await runCli(
            ["metrics", "--endpoints", files[n], "--local", "--interval", String(METRICS_INTERVAL_S)],
            env,
          );
          checkMetrics(r.stdout, n);
          return { ms: r.ms };
        },
      },
      { verb: "status", how: "in-process", run: (n) => statusInProcess(views[n], n) },
      { verb: "metrics", how: "in-process", run: (n) => metricsInProcess(views[n], n) },
    ];

    for (const c of cases) {
      process.stderr.write(`bench: fleet-cli ${c.verb} (${c.how}) ...\n`);
      const samples: Record<1 | 64, Sample[]> = { 1: [], 64: [] };
      // One warm-up of each size, not counted (tsx's transform cache; in-process, the first load of the modules).
      await c.run(1);
      await c.run(ENGINES);
      // Alternate the sizes so that both see the same background load.
      for (let i = 0; i < RUNS; i++) {
        const order: (1 | 64)[] = i % 2 ? [64, 1] : [1, 64];
        for (const n of order) samples[n].push(await c.run(n));
      }
      const ms = (n: 1 | 64) => samples[n].map((x) => x.ms);
      const note = (n: 1 | 64) => {
        const cpu = samples[n].flatMap((x) => (x.cpuMs === undefined ? [] : [x.cpuMs]));
        return `median of ${RUNS}` + (cpu.length ? `; CPU in this process ${round(median(cpu), 1)} ms` : "");
      };
      const [m1, m64] = [median(ms(1)), median(ms(ENGINES))];
      const what = c.how === "CLI" ? CLI_NOTE[c.verb] : IN_PROCESS_NOTE[c.verb];
      section.figures.push(
        {
          name: `${c.verb} ${c.how}, 1 engine`,
          value: round(m1),
          unit: "ms",
          samples: ms(1).map((x) => round(x)),
          note: note(1),
        },
        {
          name: `${c.verb} ${c.how}, ${ENGINES} engines`,
          value: round(m64),
          unit: "ms",
          samples: ms(ENGINES).map((x) => round(x)),
          note: note(ENGINES),
        },
        // The target is on the command users run. In-process, the 64 stand-in servers answer on the same
        // two cores as the client, so the ratio measures their CPU; it is reported, not held to 1.5x.
        {
          name: `${c.verb} ${c.how}, time(${ENGINES}) / time(1)`,
          value: round(m64 / m1),
          unit: "x",
          ...(c.how === "CLI" && { target: TARGET }),
          note: what,
        },
      );
    }
    return section;
  } finally {
    await stopEngines(live).catch(killAll);
    process.removeListener("exit", killAll);
    process.removeListener("SIGINT", onSignal);
    process.removeListener("SIGTERM", onSignal);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
