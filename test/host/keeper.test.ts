/**
 * The keeper (templates/host/keeper.sh.mustache, issue 41) in real bash: SLURM launch bodies run
 * as srun runs them, one bash per node side by side on one FLEET_ATTEMPT_DIR (the island's folder
 * on storage every node sees), and the local supervisor. The programs are test stand-ins written
 * here: each records its start (time, pid, GPUs) and then waits, exits when told, or leaves a child
 * behind. Faults are real signals: SIGKILL of an engine, SIGTERM of the node as scancel sends it.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as net from "node:net";
import * as path from "node:path";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { renderSupervisor, RUN_ENDED_FILE } from "../../components/local";
import { renderIslandScript } from "../../components/slurm";
import { plan as planOf, stackText } from "../helpers";

/**
 * A program stand-in: records `<prog>.<node>.<pid>` (start time in ms, CUDA_VISIBLE_DEVICES; the node
 * from the folder it starts in), then
 * exits with 3 after $FAKE_EXIT_AFTER s for its first $FAKE_FAILING starts on a node (default:
 * every start), else waits; with FAKE_CHILD it first starts a child that outlives it.
 */
const STANDIN = `#!/bin/bash
prog=\${0##*/}
node=\${PWD##*node_}
n=$(find "$RECORD_DIR" -name "$prog.$node.*" | wc -l)
printf '%s %s\\n' "$(($(date +%s%N) / 1000000))" "\${CUDA_VISIBLE_DEVICES:-}" > "$RECORD_DIR/$prog.$node.$$"
if [ "$prog" = vllm ] && [ -n "\${FAKE_CHILD:-}" ]; then sleep 1000 & echo $! > "$RECORD_DIR/child.$$"; fi
if [ "$prog" = vllm ] && [ -n "\${FAKE_EXIT_AFTER:-}" ] && [ "$n" -lt "\${FAKE_FAILING:-1000}" ]; then
  sleep "$FAKE_EXIT_AFTER"
  exit 3
fi
# The router answers every call (its helpers take workers out and in); the engines only wait.
if [ "$prog" = vllm-router ]; then
  port=$(printf '%s\n' "$@" | grep -A1 -x -- --port | tail -n 1)
  exec node -e "require('http').createServer((q, r) => { require('fs').appendFileSync(process.env.RECORD_DIR + '/router-calls', Date.now() + ' ' + q.url + '\\n'); r.end('ok'); }).listen($port, '127.0.0.1')"
fi
exec sleep 1000
`;

interface Start {
  prog: string;
  node: number;
  pid: number;
  ms: number;
  gpus: string;
}

const running: ChildProcess[] = [];
afterEach(() => {
  context = () => "";
  // The whole group (each node runs detached): a killed node's router must not keep its port.
  for (const c of running.splice(0))
    try {
      process.kill(-c.pid!, "SIGKILL");
    } catch {
      // gone already
    }
});

/** A folder for one test: stand-ins, their records and the attempt folder, `served` (the create saw the island serve) unless told otherwise. */
function lab(served = true) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "keeper-"));
  fs.mkdirSync(path.join(tmp, "attempt"));
  if (served) fs.writeFileSync(path.join(tmp, "attempt", "served"), "");
  const bin = path.join(tmp, "bin");
  const rec = path.join(tmp, "rec");
  fs.mkdirSync(bin);
  fs.mkdirSync(rec);
  for (const prog of ["vllm", "vllm-router"]) fs.writeFileSync(path.join(bin, prog), STANDIN, { mode: 0o755 });
  const starts = (prog?: string): Start[] =>
    fs
      .readdirSync(rec)
      .filter((f) => /^[a-z-]+\.\d+\.\d+$/.test(f))
      // A record the shell has opened but not yet written (`>` truncates first) is not a start yet.
      .filter((f) => fs.readFileSync(path.join(rec, f), "utf8").endsWith("\n"))
      .map((f) => {
        const [p, node, pid] = f.split(".");
        const [ms, gpus] = fs.readFileSync(path.join(rec, f), "utf8").trim().split(" ");
        return { prog: p, node: Number(node), pid: Number(pid), ms: Number(ms), gpus: gpus ?? "" };
      })
      .filter((s) => prog === undefined || s.prog === prog)
      .sort((a, b) => a.ms - b.ms);
  return { tmp, bin, rec, starts, attempt: path.join(tmp, "attempt") };
}
type Lab = ReturnType<typeof lab>;

/** Runs `script` in bash (stdin) with `env`; resolves with its status, stdout and stderr once it ends. */
function runBash(script: string, env: NodeJS.ProcessEnv) {
  // Its own process group, as srun's task and the local supervisor have (slurmstepd, setsid).
  const child = spawn("bash", ["-s"], { env, stdio: ["pipe", "pipe", "pipe"], detached: true });
  running.push(child);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  child.stdin.end(script);
  const before = context;
  context = () => `${before()}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`;
  const done = new Promise<{ code: number | null; signal: string | null }>((ok) =>
    child.on("close", (code, signal) => ok({ code, signal })),
  );
  return { child, done, out: () => ({ stdout, stderr }) };
}

/** Node `node` of a SLURM launch body, as srun's task runs it. */
function slurmNode(l: Lab, launchBody: string, node: number, nodes: number, env: Record<string, string> = {}) {
  return runBash(launchBody, {
    ...process.env,
    PATH: `${l.bin}:${process.env.PATH}`,
    RECORD_DIR: l.rec,
    // Every node on this machine, on free ports (launchOf): the router's helpers beside the
    // stand-ins must never reach a real router or engine of another suite.
    FLEET_NODE_ADDRS: Array.from({ length: nodes }, () => "127.0.0.1").join(" "),
    SLURM_PROCID: String(node),
    FLEET_ATTEMPT_DIR: l.attempt,
    CUDA_VISIBLE_DEVICES: "0,1,2,3,4,5,6,7",
    HOME: l.tmp,
    ...env,
  });
}

let context = () => "";

/*
 * Each wait below gives up after 15 s with what the node logged (`until`), and a test waits two or
 * three times: on a loaded machine vitest's own 30 s bound would end the test first, with nothing
 * but "timed out". Each test gets room for its waits to report (seen once: a unit run beside two
 * other vitest processes on 2 cores), never a looser check.
 */
vi.setConfig({ testTimeout: 60_000 });
async function until<T>(
  what: string,
  f: () => T | undefined | false | Promise<T | undefined | false>,
  ms = 15_000,
): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() - t0 > ms) throw new Error(`not within ${ms} ms: ${what}\n${context()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Until every node has ended (its bash and everything holding its output), at most `ms`; past
 * that, the failure names what still runs of the test's programs, with the nodes' output.
 */
async function ended(nodes: { done: Promise<unknown> }[], ms = 20_000) {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const ps = spawnSync("ps", ["-eo", "pid,ppid,stat,args"], { encoding: "utf8" }).stdout;
      const ours = ps.split("\n").filter((l) => /keeper-|sleep 1000|node -e/.test(l));
      reject(
        new Error(
          `the nodes did not end within ${ms} ms after SIGTERM; still running:\n${ours.join("\n")}\n${context()}`,
        ),
      );
    }, ms);
  });
  try {
    await Promise.race([Promise.all(nodes.map((n) => n.done)), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether `pid` runs: a zombie has ended (this machine's pid 1 does not reap the orphans it adopts). */
const alive = (pid: number) => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
};

/** The stack with its restart table: [inference.restart] in the RL layout, [restart] in the standalone one. */
const withRestart = (text: string, restart: string) =>
  `${text}\n[${/^\[inference\]/m.test(text) ? "inference.restart" : "restart"}]\n${restart}\n`;
/** Whether nothing listens on `port` of the loopback address. */
const portFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.createServer().once("error", () => resolve(false));
    s.listen(port, "127.0.0.1", () => s.close(() => resolve(true)));
  });

/**
 * The router's port, its engines 100 and 200 above: free ones, so neither another suite's processes
 * nor what a crashed run of this one left can answer the router's helpers.
 */
let BASE = 0;
beforeAll(async () => {
  for (let tries = 0; tries < 100 && !BASE; tries++) {
    // At most 39000: the plan puts the router's Prometheus port 21000 above it (below 65536).
    const base = 21000 + 100 * Math.floor(Math.random() * 181);
    if ((await Promise.all([0, 100, 200, 300].map((d) => portFree(base + d)))).every(Boolean)) BASE = base;
  }
  if (!BASE) throw new Error("no free ports for the keeper's stand-ins");
});
const ownPorts = (text: string) =>
  /^\[inference\]/m.test(text)
    ? text.replace(/^\[inference\]$/m, `[inference.server]\nport = ${BASE}\n\n[inference]`)
    : text.replace("[model]", `[server]\nport = ${BASE}\n\n[model]`);
const launchOf = (text: string) => {
  const plan = planOf(ownPorts(text));
  expect(renderIslandScript(plan, plan.islands[0]).launchBody).toContain(`--port ${BASE + 100}`);
  return renderIslandScript(plan, plan.islands[0]).launchBody;
};

describe("the keeper restarts what exits, in place (SLURM launch body)", () => {
  it("an engine killed with SIGKILL starts again after the back-off, alone: the router keeps running; SIGTERM then ends the node without a restart", async () => {
    const l = lab();
    const node = slurmNode(l, launchOf(withRestart(stackText("multi-replica"), "backoff = 0.3")), 0, 2);
    const [engine] = await until("the engine started", () => l.starts("vllm").length === 1 && l.starts("vllm"));
    const [router] = await until(
      "the router started",
      () => l.starts("vllm-router").length === 1 && l.starts("vllm-router"),
    );
    const killed = Date.now();
    process.kill(engine.pid, "SIGKILL");
    const again = await until("the engine started again", () => l.starts("vllm")[1]);
    // The back-off (0.3 s) first, then at once: the keeper wakes every 0.1 s while a restart is due.
    // The upper bound leaves room for a loaded machine (1504 ms seen once beside the whole suite).
    expect(again.ms - killed).toBeGreaterThanOrEqual(300);
    expect(again.ms - killed).toBeLessThan(2500);
    expect(again.gpus).toBe(engine.gpus);
    expect(alive(router.pid)).toBe(true);
    expect(l.starts("vllm-router")).toHaveLength(1);
    const claim = path.join(l.attempt, "restarts", "i0-replica0.1");
    expect(fs.readFileSync(path.join(claim, "cause"), "utf8")).toBe("i0-replica0-n0 137 0\n");
    // Beside its log, what `fleet status` reads: generation, time, the exit that caused it.
    expect(fs.readFileSync(path.join(l.attempt, "node_0", "i0-replica0-n0.restarts"), "utf8")).toMatch(
      /^1 \d{10} i0-replica0-n0 137 0\n$/,
    );
    expect(node.out().stderr).toMatch(
      /node 0: i0-replica0-n0 exited \(status 137\); restarting group i0-replica0 in 0\.3 s \(restart 1 of 5 within 3600 s\)/,
    );
    // scancel's SIGTERM: the node stops what runs and ends; nothing restarts.
    node.child.kill("SIGTERM");
    const end = await node.done;
    expect(end.code).toBe(143);
    expect(alive(again.pid) || alive(router.pid)).toBe(false);
    expect(fs.existsSync(path.join(l.attempt, "restarts", "i0-replica0.2"))).toBe(false);
    expect(fs.existsSync(path.join(l.attempt, "node_0", "i0-replica0-n0.exit"))).toBe(false);
  });

  it("past restart.max_restarts the node fails naming the process, its status and the budget; each wait doubles", async () => {
    const l = lab();
    const text = withRestart(stackText("multi-replica"), "max_restarts = 2\nbackoff = 0.2");
    const node = slurmNode(l, launchOf(text), 0, 2, { FAKE_EXIT_AFTER: "0.2" });
    const end = await node.done;
    const { stderr } = node.out();
    expect(end.code).toBe(3);
    expect(stderr).toMatch(/restarting group i0-replica0 in 0\.2 s \(restart 1 of 2 within 3600 s\)/);
    expect(stderr).toMatch(/restarting group i0-replica0 in 0\.4 s \(restart 2 of 2 within 3600 s\)/);
    expect(stderr).toMatch(
      /node 0: i0-replica0-n0 exited \(status 3; log: \S+\/node_0\/i0-replica0-n0\.log\); restarted 2 time\(s\) within 3600 s, restart\.max_restarts = 2: giving up/,
    );
    expect(fs.readFileSync(path.join(l.attempt, "node_0", "i0-replica0-n0.exit"), "utf8")).toBe("3\n");
    expect(fs.readFileSync(path.join(l.attempt, "restarts", "i0-replica0.failed"), "utf8")).toBe(
      "i0-replica0-n0 3 2\n",
    );
    const starts = l.starts("vllm");
    expect(starts).toHaveLength(3);
    // Each start runs 0.2 s, then waits 0.2 s, then 0.4 s.
    expect(starts[1].ms - starts[0].ms).toBeGreaterThanOrEqual(400);
    expect(starts[2].ms - starts[1].ms).toBeGreaterThanOrEqual(600);
    // The router went with the node.
    expect(l.starts("vllm-router").every((s) => !alive(s.pid))).toBe(true);
  });

  it("restarts older than restart.window no longer count", async () => {
    const l = lab();
    const text = withRestart(stackText("multi-replica"), "max_restarts = 1\nwindow = 1\nbackoff = 0.1");
    // Three exits 1.2 s apart: each restart is the only one within the last second.
    const node = slurmNode(l, launchOf(text), 0, 2, { FAKE_EXIT_AFTER: "1.2", FAKE_FAILING: "3" });
    await until("the fourth start", () => l.starts("vllm").length === 4, 20_000);
    expect(node.child.exitCode).toBeNull();
    node.child.kill("SIGTERM");
    expect((await node.done).code).toBe(143);
  });

  it("max_restarts = 0 is fail-fast: the first exit ends the node with the process's status", async () => {
    const l = lab();
    const node = slurmNode(l, launchOf(withRestart(stackText("multi-replica"), "max_restarts = 0")), 0, 2, {
      FAKE_EXIT_AFTER: "0.1",
    });
    const end = await node.done;
    expect(end.code).toBe(3);
    expect(node.out().stderr).toContain("restart.max_restarts = 0: no restart");
    expect(l.starts("vllm")).toHaveLength(1);
    expect(fs.existsSync(path.join(l.attempt, "restarts", "i0-replica0.1"))).toBe(false);
  });

  it("before the island first served, an exit is a start failure: the node fails at once, nothing restarts", async () => {
    const l = lab(false);
    const node = slurmNode(l, launchOf(withRestart(stackText("multi-replica"), "backoff = 0.1")), 0, 2, {
      FAKE_EXIT_AFTER: "0.1",
    });
    const end = await node.done;
    expect(end.code).toBe(3);
    expect(node.out().stderr).toContain("i0-replica0-n0 exited (status 3; log: ");
    expect(node.out().stderr).toContain("before the island first served: a start failure is not restarted");
    expect(l.starts("vllm")).toHaveLength(1);
  });

  it("what a killed engine left behind (a child still running) is killed before it starts again", async () => {
    const l = lab();
    const node = slurmNode(l, launchOf(withRestart(stackText("multi-replica"), "backoff = 0.1")), 0, 2, {
      FAKE_CHILD: "1",
    });
    const [engine] = await until("the engine started", () => l.starts("vllm").length === 1 && l.starts("vllm"));
    const child = Number(
      await until(
        "its child",
        () =>
          fs.existsSync(path.join(l.rec, `child.${engine.pid}`)) &&
          fs.readFileSync(path.join(l.rec, `child.${engine.pid}`), "utf8"),
      ),
    );
    process.kill(engine.pid, "SIGKILL");
    await until("the engine started again", () => l.starts("vllm")[1]);
    expect(alive(child)).toBe(false);
    node.child.kill("SIGTERM");
    await node.done;
  });

  it("an engine across two nodes restarts as one group: its rank killed on node 1 stops node 0's too, both start again; the router stays", async () => {
    const l = lab();
    const body = launchOf(withRestart(stackText("wide-ep"), "backoff = 0.1"));
    const nodes = [slurmNode(l, body, 0, 2), slurmNode(l, body, 1, 2)];
    await until(
      "both ranks and the router started",
      () => l.starts("vllm").length === 2 && l.starts("vllm-router").length,
    );
    const [router] = l.starts("vllm-router");
    const rank1 = l.starts("vllm").find((s) => s.node === 1)!;
    const rank0 = l.starts("vllm").find((s) => s.node === 0)!;
    process.kill(rank1.pid, "SIGKILL");
    await until("both ranks started again", () => l.starts("vllm").length === 4);
    expect(alive(rank0.pid)).toBe(false);
    const second = l.starts("vllm").slice(2);
    expect(second.map((s) => s.node).sort()).toEqual([0, 1]);
    expect(alive(router.pid)).toBe(true);
    expect(nodes[0].out().stderr).toContain("stopping i0-replica0-n0 to restart group i0-replica0 with it");
    // One claim for the group, by the node that saw the exit.
    expect(fs.readFileSync(path.join(l.attempt, "restarts", "i0-replica0.1", "cause"), "utf8")).toBe(
      "i0-replica0-n1 137 1\n",
    );
    expect(fs.existsSync(path.join(l.attempt, "restarts", "i0-replica0.2"))).toBe(false);
    // Both ranks count the restart, caused by node 1's exit.
    for (const n of [0, 1])
      expect(fs.readFileSync(path.join(l.attempt, `node_${n}`, `i0-replica0-n${n}.restarts`), "utf8")).toMatch(
        /^1 \d{10} i0-replica0-n1 137 1\n$/,
      );
    for (const n of nodes) n.child.kill("SIGTERM");
    await ended(nodes);
  }, 60_000);
});

describe("the keeper on the local target (supervisor)", () => {
  it("an engine of node 1 killed with SIGKILL starts again on node 1's GPUs, in node 1's folder; the other replica and the router keep running", async () => {
    const l = lab();
    // Ports no other suite uses: the local run is on 127.0.0.1, where the router's helpers call.
    const text = withRestart(ownPorts(stackText("local-multi-replica")), "backoff = 0.1");
    const plan = planOf(text, "local-multi-replica");
    const script = renderSupervisor(plan, plan.islands[0]);
    expect(script).toContain(`--port ${BASE + 200}`);
    const run = runBash(script, {
      ...process.env,
      PATH: `${l.bin}:${process.env.PATH}`,
      RECORD_DIR: l.rec,
      FLEET_ISLAND_DIR: l.tmp,
      FLEET_ATTEMPT_DIR: l.attempt,
      FLEET_LOCAL_GPUS: "4 5",
      HOME: l.tmp,
    });
    // The router is started beside the engines, its start record maybe a moment after theirs.
    await until(
      "two engines and the router",
      () => l.starts("vllm").length === 2 && l.starts("vllm-router").length === 1,
    );
    const byGpu = (g: string) => l.starts("vllm").find((s) => s.gpus === g)!;
    const [a, b] = [byGpu("4"), byGpu("5")];
    const [router] = l.starts("vllm-router");
    process.kill(b.pid, "SIGKILL");
    const again = await until("the engine started again", () => l.starts("vllm")[2]);
    expect(again.gpus).toBe("5");
    expect(again.node).toBe(1);
    expect(alive(a.pid) && alive(router.pid)).toBe(true);
    expect(fs.readFileSync(path.join(l.attempt, "node_1", "i0-replica1-n0.log"), "utf8")).toBe("");
    expect(run.out().stdout).toContain(`[fleet] i0-replica1-n0 started (pid ${again.pid})`);
    // The supervisor's start as the kernel keeps it (the run record's), for its end record below.
    const stat = fs.readFileSync(`/proc/${run.child.pid}/stat`, "utf8");
    const btime = Number(/^btime (\d+)$/m.exec(fs.readFileSync("/proc/stat", "utf8"))![1]);
    const hz = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout);
    const started = btime + Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]) / hz;
    run.child.kill("SIGTERM");
    expect((await run.done).code).toBe(143);
    expect([a, again, router].some((s) => alive(s.pid))).toBe(false);
    // Its end record, for fleet cost once the run is over (components/local/held-query.ts).
    const [start, end] = fs.readFileSync(path.join(l.attempt, RUN_ENDED_FILE), "utf8").trim().split(" ").map(Number);
    expect(start).toBeCloseTo(started, 1);
    expect(Math.abs(end - Date.now() / 1000)).toBeLessThan(5);
  });
});

/**
 * Mooncake stand-ins: the master listens on its RPC and metadata ports; the client records its start
 * (`mooncake_client.<node>.<pid>`), then per FAKE_CLIENT: `hang-once` does not listen on its first
 * start (as the real client of mooncake-transfer-engine-non-cuda now and then hangs in its start),
 * `hang` never listens, `exit` exits with 7 (`exit-once`: on its first start only); otherwise it listens. Each on the node's own address.
 */
const MOONCAKE_STANDINS = {
  mooncake_master: `#!/bin/bash
arg() { printf '%s\\n' "$@" | sed -n "s/^--$1=//p" | tail -n 1; }
exec node -e "const net = require('net'); for (const p of [$(arg rpc_port "$@"), $(arg http_metadata_server_port "$@")]) net.createServer((s) => s.destroy()).listen(p, process.env.ADDR)"
`,
  mooncake_client: `#!/bin/bash
arg() { printf '%s\\n' "$@" | sed -n "s/^--$1=//p" | tail -n 1; }
node=\${PWD##*node_}
n=$(find "$RECORD_DIR" -name "mooncake_client.$node.*" | wc -l)
printf '%s\\n' "$(($(date +%s%N) / 1000000))" > "$RECORD_DIR/mooncake_client.$node.$$"
case "\${FAKE_CLIENT:-}" in
  exit) exit 7 ;;
  exit-once) [ "$n" -eq 0 ] && exit 7 ;;
  hang) exec sleep 1000 ;;
  hang-once) [ "$n" -eq 0 ] && exec sleep 1000 ;;
esac
exec node -e "require('net').createServer((s) => s.destroy()).listen($(arg port "$@"), '$(arg host "$@")')"
`,
};

describe("a Mooncake client that does not listen (SLURM launch body)", () => {
  /** Node 0 (the head) of kv-offload-mooncake, its client given 1 s to listen, on an address of this test's own. */
  function mooncakeNode(fake: string) {
    const l = lab(false);
    for (const [prog, text] of Object.entries(MOONCAKE_STANDINS))
      fs.writeFileSync(path.join(l.bin, prog), text, { mode: 0o755 });
    const plan = planOf(ownPorts(stackText("kv-offload-mooncake")));
    const island = plan.islands[0];
    expect(island.mooncake!.clientListenS).toBe(30 + 120);
    island.mooncake!.clientListenS = 1;
    // The store's ports are fixed: a loopback address no other test listens on.
    const addr = `127.${(process.pid >> 8) & 255}.${process.pid & 255}.${2 + Math.floor(Math.random() * 250)}`;
    const node = slurmNode(l, renderIslandScript(plan, island).launchBody, 0, 2, {
      FLEET_NODE_ADDRS: `${addr} ${addr}`,
      ADDR: addr,
      FAKE_CLIENT: fake,
    });
    const clients = () =>
      fs
        .readdirSync(l.rec)
        .filter((f) => f.startsWith("mooncake_client.0."))
        .map((f) => Number(f.split(".")[2]));
    return { l, node, clients };
  }

  it("one that hangs in its start is stopped after its wait and started again; the node goes on to its engines", async () => {
    const { l, node, clients } = mooncakeNode("hang-once");
    const engines = await until("the engines started", () => l.starts("vllm").length > 0 && l.starts("vllm"), 20_000);
    const [first, second] = clients().sort((a, b) => a - b);
    expect(clients()).toHaveLength(2);
    expect(alive(first)).toBe(false);
    expect(alive(second)).toBe(true);
    expect(node.out().stderr).toMatch(
      /node 0: the Mooncake client did not listen on 127\.[\d.]+:50052 within 1 s; starting it again \(2 of 3\)/,
    );
    expect(engines.length).toBeGreaterThan(0);
    node.child.kill("SIGTERM");
    await node.done;
  });

  it("one that never listens, or exits every time, fails the node after 3 starts, naming it, its last status and its log", async () => {
    const hang = mooncakeNode("hang");
    const end = await hang.node.done;
    expect(end.code).toBe(1);
    expect(hang.clients()).toHaveLength(3);
    expect(hang.clients().some(alive)).toBe(false);
    expect(hang.node.out().stderr).toMatch(
      /node 0: the Mooncake client did not listen on 127\.[\d.]+:50052 within 1 s, 3 start\(s\); log: \S+\/node_0\/mooncake_client\.log/,
    );
    expect(hang.l.starts("vllm")).toEqual([]);

    const exits = mooncakeNode("exit");
    expect((await exits.node.done).code).toBe(1);
    expect(exits.clients()).toHaveLength(3);
    expect(exits.node.out().stderr).toMatch(
      /node 0: the Mooncake client exited \(status 7\) before it listened on 127\.[\d.]+:50052; starting it again \(2 of 3\)/,
    );
    expect(exits.node.out().stderr).toMatch(
      /node 0: the Mooncake client exited \(status 7\) before it listened on 127\.[\d.]+:50052, 3 start\(s\); log: \S+\/node_0\/mooncake_client\.log/,
    );
    expect(exits.l.starts("vllm")).toEqual([]);
  });

  it("one that exits once before it listens (as the real client did on the test cluster) is started again; the node goes on to its engines", async () => {
    const once = mooncakeNode("exit-once");
    await until("the engine starts after the client's second start", () => once.l.starts("vllm").length > 0, 20_000);
    expect(once.clients()).toHaveLength(2);
    expect(once.node.out().stderr).toMatch(
      /the Mooncake client exited \(status 7\) before it listened on \S+; starting it again \(2 of 3\)/,
    );
    once.node.child.kill("SIGTERM");
    await once.node.done;
  });
});

/**
 * An engine stand-in that serves HTTP on its --port: /health, /weight_info (starting at "default",
 * as a restarted engine serves the base weights), POST /update_weight_version, and any other POST
 * recorded in $RECORD_DIR/calls as `<port> <path> <body>`; its start recorded as STANDIN's is.
 */
const HTTP_ENGINE = `#!/bin/bash
node=\${PWD##*node_}
printf '%s %s\\n' "$(($(date +%s%N) / 1000000))" "\${CUDA_VISIBLE_DEVICES:-}" > "$RECORD_DIR/vllm.$node.$$"
port=$(printf '%s\\n' "$@" | grep -A1 -x -- --port | tail -n 1)
exec node -e '
const fs = require("fs");
let version = "default";
require("http").createServer((q, r) => {
  let body = "";
  q.on("data", (d) => (body += d));
  q.on("end", () => {
    if (q.url === "/health") return r.end("");
    if (q.url === "/weight_info") return r.end(JSON.stringify({ weight_version: version }));
    if (q.method !== "POST") return ((r.statusCode = 404), r.end());
    if (q.url === "/update_weight_version") {
      version = JSON.parse(body).new_version;
      fs.appendFileSync(process.env.RECORD_DIR + "/versions", Date.now() + " " + process.argv[1] + " " + version + "\\n");
    }
    else fs.appendFileSync(process.env.RECORD_DIR + "/calls", process.argv[1] + " " + q.url + " " + body.trim() + "\\n");
    r.end("{}");
  });
}).listen(Number(process.argv[1]), "127.0.0.1");
' "$port"
`;

/** The weight version the engine at `url` reports, or undefined while it does not answer. */
async function versionAt(url: string): Promise<string | undefined> {
  try {
    return ((await (await fetch(`${url}/weight_info`)).json()) as { weight_version: string }).weight_version;
  } catch {
    return undefined;
  }
}

/** The local supervisor over HTTP stand-in engines (two, or `stack`'s), the record `record` in the island folder; `served`: the create saw the island serve. */
function httpIsland(
  record: string | undefined,
  served: boolean,
  stack = "local-multi-replica",
  router = "",
  engine = HTTP_ENGINE,
  env: Record<string, string> = {},
  program = "vllm",
) {
  const l = lab(false);
  fs.writeFileSync(path.join(l.bin, program), engine, { mode: 0o755 });
  const attempt = path.join(l.tmp, "logs", "run_1");
  fs.mkdirSync(attempt, { recursive: true });
  if (served) fs.writeFileSync(path.join(attempt, "served"), "");
  if (record !== undefined) fs.writeFileSync(path.join(l.tmp, "weights"), record);
  const text = withRestart(ownPorts(stackText(stack)), "backoff = 0.1");
  const plan = planOf(router ? `${text}\n[deployment.router]\n${router}\n` : text, stack);
  const run = runBash(renderSupervisor(plan, plan.islands[0]), {
    ...process.env,
    PATH: `${l.bin}:${process.env.PATH}`,
    RECORD_DIR: l.rec,
    FLEET_ISLAND_DIR: l.tmp,
    FLEET_ATTEMPT_DIR: attempt,
    FLEET_LOCAL_GPUS: "4 5",
    HOME: l.tmp,
    ...env,
  });
  const lines = (f: string) => {
    const file = path.join(l.rec, f);
    return fs.existsSync(file) ? fs.readFileSync(file, "utf8").trim().split("\n") : [];
  };
  const [a, b] = [BASE + 100, BASE + 200];
  return { l, run, a, b, lines, attempt };
}

describe("a restarted engine catches up with the fleet's weights record (local supervisor)", () => {
  /** Two HTTP stand-in engines behind the router stand-in, both told weight version `fleet`, the record `record` in the island folder. */
  async function twoEngines(record: string | undefined, fleet: string) {
    const { l, run, attempt } = httpIsland(undefined, true);
    const [a, b] = [BASE + 100, BASE + 200].map((p) => `http://127.0.0.1:${p}`);
    const version = versionAt;
    await until("both engines serve", async () => (await version(a)) && (await version(b)), 20_000);
    for (const url of [a, b])
      await fetch(`${url}/update_weight_version`, { method: "POST", body: JSON.stringify({ new_version: fleet }) });
    const routerLog = () => fs.readFileSync(path.join(attempt, "node_0", "router.log"), "utf8");
    // The follower told the router both engines before the drill.
    await until("both engines told to the router", () => (routerLog().match(/router told /g) ?? []).length >= 2);
    // The trainer's update, recorded once the engines took it (a record there at the first start would be loaded then).
    if (record !== undefined) fs.writeFileSync(path.join(l.tmp, "weights"), record);
    const victim = l.starts("vllm").find((s) => s.gpus === "5")!;
    process.kill(victim.pid, "SIGKILL");
    return { l, run, b, version, routerLog };
  }

  it("the record's calls (the Python client's golden file) are replayed to it before the router is told it again", async () => {
    const record = fs.readFileSync(path.join(__dirname, "../../clients/python/tests/unit/weights-record.txt"), "utf8");
    const { l, run, b, version, routerLog } = await twoEngines(record, "step-7");
    await until("told to the router again", () => routerLog().includes(`router add_worker ${b}`), 20_000);
    // Replayed in order, byte for byte, to the restarted engine only; it serves the fleet's version.
    expect(fs.readFileSync(path.join(l.rec, "calls"), "utf8")).toBe(
      `${BASE + 200} /collective_rpc {"method":"reload_weights","kwargs":{"weights_path":"/ckpt/step 7"}}\n`,
    );
    expect(await version(b)).toBe("step-7");
    const log = routerLog();
    const replayAt = log.indexOf(
      `${b} serves weight version default after its restart: replaying the fleet's update to step-7`,
    );
    expect(replayAt).toBeGreaterThan(0);
    expect(log.indexOf(`replay POST ${b}/update_weight_version: {} (HTTP 200)`)).toBeGreaterThan(replayAt);
    expect(log.lastIndexOf(`router add_worker ${b}`)).toBeGreaterThan(replayAt);
    run.child.kill("SIGTERM");
    await run.done;
  });

  it("a record older than what its peers serve is not replayed: the engine stays out, naming both versions", async () => {
    const record = 'version v1\ncall POST /collective_rpc {}\ncall POST /update_weight_version {"new_version":"v1"}\n';
    const { l, run, b, routerLog } = await twoEngines(record, "v2");
    await until(
      "kept out",
      () => routerLog().includes(`${b} kept out: it serves weight version default, the fleet v2`),
      20_000,
    );
    await new Promise((r) => setTimeout(r, 1000));
    expect(fs.existsSync(path.join(l.rec, "calls"))).toBe(false);
    expect(routerLog()).not.toContain(`router add_worker ${b}`);
    run.child.kill("SIGTERM");
    await run.done;
  });
});

describe("an island brought back, and an engine no router follows, load the fleet's weights record (local supervisor)", () => {
  const GOLDEN = fs.readFileSync(path.join(__dirname, "../../clients/python/tests/unit/weights-record.txt"), "utf8");

  it("a revived island's first start: each engine loads the record, and is told to the router only once it serves the record's version", async () => {
    const { run, a, b, lines } = httpIsland(GOLDEN, false);
    const told = (port: number) =>
      lines("router-calls").find((x) => x.endsWith(`/add_worker?url=http://127.0.0.1:${port}`));
    await until("both engines told to the router", () => told(a) && told(b), 20_000);
    // Both loaded the record's calls, once each (the golden file's first call), before the router heard of them.
    expect(lines("calls").sort()).toEqual(
      [a, b].map((p) => `${p} /collective_rpc {"method":"reload_weights","kwargs":{"weights_path":"/ckpt/step 7"}}`),
    );
    for (const port of [a, b]) {
      const loaded = lines("versions").find((x) => x.endsWith(`${port} step-7`));
      expect(loaded, lines("versions").join("\n")).toBeDefined();
      expect(Number(told(port)!.split(" ")[0])).toBeGreaterThanOrEqual(Number(loaded!.split(" ")[0]));
    }
    expect(run.out().stdout).toContain(
      `http://127.0.0.1:${b} serves weight version default: loading the fleet's update to step-7`,
    );
    // The catch-up's own word comes on its next look at the engine (the router may hear first).
    await until("the catch-up says so", () =>
      run.out().stdout.includes(`http://127.0.0.1:${b} serves the fleet's weights, version step-7`),
    );
    run.child.kill("SIGTERM");
    await run.done;
  });

  it("without a record, a first start tells the router its engines as they answer and loads nothing", async () => {
    const { run, a, b, lines } = httpIsland(undefined, false);
    await until(
      "both engines told to the router",
      () => [a, b].every((p) => lines("router-calls").some((x) => x.endsWith(`add_worker?url=http://127.0.0.1:${p}`))),
      20_000,
    );
    expect(lines("calls")).toEqual([]);
    expect(run.out().stdout).not.toContain("loading the fleet's update");
    run.child.kill("SIGTERM");
    await run.done;
  });

  it("with no router to follow it, an engine the keeper restarts loads the record itself", async () => {
    // One engine and no router: the engine takes the island's port.
    const { l, run, lines } = httpIsland(undefined, true, "local-single-node", 'type = "none"');
    const url = `http://127.0.0.1:${BASE}`;
    const version = () => versionAt(url);
    await until("the engine serves", version, 20_000);
    // The trainer's update, as the Python client records it once the engines took it.
    fs.writeFileSync(path.join(l.tmp, "weights"), GOLDEN);
    process.kill(l.starts("vllm")[0].pid, "SIGKILL");
    await until("the restarted engine serves step-7", async () => (await version()) === "step-7", 20_000);
    expect(l.starts("vllm")).toHaveLength(2);
    expect(lines("calls")).toEqual([
      `${BASE} /collective_rpc {"method":"reload_weights","kwargs":{"weights_path":"/ckpt/step 7"}}`,
    ]);
    expect(run.out().stdout).toContain(`${url} serves weight version default: loading the fleet's update to step-7`);
    run.child.kill("SIGTERM");
    await run.done;
  });

  // The vLLM TEST STAND-IN, which applies the restart gate by the contract the real module is held
  // to (test/host/restart-gate.test.ts), started through a wrapper that records its starts.
  const GATED_ENGINE = `#!/bin/bash
node=\${PWD##*node_}
printf '%s %s\\n' "$(($(date +%s%N) / 1000000))" "\${CUDA_VISIBLE_DEVICES:-}" > "$RECORD_DIR/vllm.$node.$$"
printf '%s\\n' "$*" >> "$RECORD_DIR/argv"
exec ${JSON.stringify(path.join(__dirname, "..", "fixtures", "standins", "bin", "vllm"))} "$@"
`;
  // The stand-in's weight routes (/weight_info, /collective_rpc) are mounted as vLLM's are: in dev mode.
  const DEV_MODE = { VLLM_SERVER_DEV_MODE: "1" };

  it("a gated start that exits before it answers (the module on no PYTHONPATH folder) is followed by starts without the gate, named; the engine still loads the record", async () => {
    // The wrapper hides the gate's module from the stand-in, as a container that does not see the node folder would.
    const broken = GATED_ENGINE.replace(/^exec /m, "PYTHONPATH=/nonexistent exec ");
    const { l, run, lines } = httpIsland(undefined, true, "local-single-node", 'type = "none"', broken, DEV_MODE);
    const url = `http://127.0.0.1:${BASE}`;
    const version = () => versionAt(url);
    await until("the engine serves", version, 20_000);
    const step8 = fs.mkdtempSync(path.join(l.tmp, "step8-"));
    fs.writeFileSync(path.join(l.tmp, "weights"), GOLDEN.replace(/step-7/g, "step-8").replace("/ckpt/step 7", step8));
    process.kill(l.starts("vllm")[0].pid, "SIGKILL");
    await until("the third start serves step-8", async () => (await version()) === "step-8", 20_000);
    const argv = lines("argv");
    expect(argv).toHaveLength(3);
    expect(argv.map((a) => a.includes("--middleware restart_gate.RestartGate"))).toEqual([false, true, false]);
    expect(run.out().stderr).toContain(
      "i0-replica0-n0: its start behind the restart gate exited before it answered (its log says why): it starts without the gate from now on",
    );
    expect(fs.readFileSync(path.join(l.tmp, "logs", "run_1", "node_0", "i0-replica0-n0.log"), "utf8")).toContain(
      "No module named 'restart_gate'",
    );
    run.child.kill("SIGTERM");
    await run.done;
  });

  it("with no router to follow it, a restarted vLLM STAND-IN starts behind its restart gate: /health and completions answer 503 while its replay fails, named; the trainer's next record brings it in and opens the gate", async () => {
    const { l, run, lines } = httpIsland(undefined, true, "local-single-node", 'type = "none"', GATED_ENGINE, DEV_MODE);
    const url = `http://127.0.0.1:${BASE}`;
    const status = async (p: string, body?: object) => {
      try {
        const r = await fetch(`${url}${p}`, body ? { method: "POST", body: JSON.stringify(body) } : {});
        return `${r.status} ${await r.text()}`;
      } catch {
        return "down";
      }
    };
    await until("the engine serves", async () => (await status("/health")).startsWith("200"), 20_000);
    expect(lines("argv")[0]).not.toContain("--middleware");
    // The trainer's update, recorded: its folder is gone, so the replay to the restarted engine fails.
    fs.writeFileSync(path.join(l.tmp, "weights"), GOLDEN);
    process.kill(l.starts("vllm")[0].pid, "SIGKILL");
    const gate = path.join(l.tmp, "logs", "run_1", "node_0", "i0-replica0-n0.gate");
    await until(
      "the replay failed, named",
      () => run.out().stderr.includes("stays out behind its restart gate"),
      20_000,
    );
    expect(lines("argv")[1]).toMatch(/ --middleware restart_gate\.RestartGate$/);
    const closed = `503 {"error": "restarting: loading the fleet's weights (restart gate closed)"}`;
    expect(await status("/health")).toBe(closed);
    expect(await status("/v1/completions", { model: "Qwen/Qwen3-0.6B", prompt: "hi", max_tokens: 1 })).toBe(closed);
    expect(await status("/weight_info")).toBe(`200 {"weight_version":"default"}`);
    expect(fs.readFileSync(gate, "utf8").split("\n")).toEqual([
      "/weight_info",
      "/metrics",
      "/collective_rpc",
      "/update_weight_version",
      "",
    ]);
    // The trainer's next update: a folder that exists, a new version; the gate opens once it serves it.
    const step8 = fs.mkdtempSync(path.join(l.tmp, "step8-"));
    fs.writeFileSync(path.join(l.tmp, "weights"), GOLDEN.replace(/step-7/g, "step-8").replace("/ckpt/step 7", step8));
    await until("the gate opens", async () => (await status("/health")).startsWith("200"), 20_000);
    expect(await status("/weight_info")).toBe(`200 {"weight_version":"step-8"}`);
    expect(fs.existsSync(gate)).toBe(false);
    expect(run.out().stdout).toContain(`${url}: restart gate open`);
    const state = JSON.parse((await status("/standin/state")).slice(4)) as { by_weight_version: object };
    expect(state.by_weight_version).toEqual({});
    run.child.kill("SIGTERM");
    await run.done;
  });

  // The SGLang TEST STAND-IN (no middleware option, so no restart gate), started as the fleet starts
  // SGLang (`python3 -m sglang.launch_server`) through a wrapper that records its starts and argv.
  const SGLANG_ENGINE = `#!/bin/bash
if [ "$1 $2" != "-m sglang.launch_server" ]; then PATH=\${PATH#*:} exec python3 "$@"; fi
node=\${PWD##*node_}
printf '%s %s\\n' "$(($(date +%s%N) / 1000000))" "\${CUDA_VISIBLE_DEVICES:-}" > "$RECORD_DIR/sglang.$node.$$"
printf '%s\\n' "$*" >> "$RECORD_DIR/argv"
shift 2
exec node ${JSON.stringify(path.join(__dirname, "..", "fixtures", "standins", "bin", "sglang-launch-server"))} "$@"
`;
  /** The SGLang stand-in's /model_info: its weight version and model path, or undefined while it does not answer. */
  const modelInfo = async (url: string) => {
    try {
      return (await (await fetch(`${url}/model_info`)).json()) as { weight_version: string; model_path: string };
    } catch {
      return undefined;
    }
  };
  /** A checkpoint folder as a trainer writes one (the stand-in starts only on a folder with config.json). */
  const checkpoint = (dir: string, model = true) => {
    const ckpt = fs.mkdtempSync(path.join(dir, "step 9-"));
    if (model) fs.writeFileSync(path.join(ckpt, "config.json"), "{}");
    return ckpt;
  };
  const sglangRecord = (ckpt: string) =>
    `version v9\nmodel Qwen/Qwen3-0.6B\nengine sglang\ncall POST /update_weights_from_disk ${JSON.stringify({ model_path: ckpt, weight_version: "v9" })}\n`;

  it("with no router to follow it, a restarted SGLang STAND-IN starts on the record's folder at its version: it never answers with the base weights, and nothing is replayed", async () => {
    const stack = ["local-sglang", 'type = "none"', SGLANG_ENGINE, {}, "python3"] as const;
    const { l, run, lines } = httpIsland(undefined, true, ...stack);
    const url = `http://127.0.0.1:${BASE}`;
    await until("the engine serves", async () => (await modelInfo(url))?.weight_version === "default", 20_000);
    const ckpt = checkpoint(l.tmp);
    fs.writeFileSync(path.join(l.tmp, "weights"), sglangRecord(ckpt));
    process.kill(l.starts("sglang")[0].pid, "SIGKILL");
    // Every answer from the kill on: none with the base weights.
    const seen = new Set<string>();
    await until(
      "the restarted engine serves v9",
      async () => {
        const v = (await modelInfo(url))?.weight_version;
        if (v) seen.add(v);
        return v === "v9" && l.starts("sglang").length === 2;
      },
      20_000,
    );
    expect([...seen]).toEqual(["v9"]);
    const argv = lines("argv");
    expect(argv).toHaveLength(2);
    expect(argv[0]).not.toContain("--weight-version");
    expect(argv[1]).toMatch(
      /--enable-metrics --model-path .*step 9-\S+ --weight-version v9 --served-model-name Qwen\/Qwen3-0\.6B --tokenizer-path Qwen\/Qwen3-0\.6B$/,
    );
    expect((await modelInfo(url))!.model_path).toBe(ckpt);
    const models = (await (await fetch(`${url}/v1/models`)).json()) as { data: { id: string }[] };
    expect(models.data.map((m) => m.id)).toEqual(["Qwen/Qwen3-0.6B"]);
    const state = (await (await fetch(`${url}/standin/state`)).json()) as { weight_updates: number };
    expect(state.weight_updates).toBe(0);
    expect(run.out().stdout).toContain(
      `i0-replica0-n0 restarts on the fleet's weights: --model-path ${ckpt} --weight-version v9`,
    );
    await until("the catch-up says so", () =>
      run.out().stdout.includes(`${url} started on the fleet's weights, version v9`),
    );
    run.child.kill("SIGTERM");
    await run.done;
  });

  it("a start on the record's folder that exits before it answers (no config.json there) is followed by starts on the base model, named; the engine still loads the record", async () => {
    const stack = ["local-sglang", 'type = "none"', SGLANG_ENGINE, {}, "python3"] as const;
    const { l, run, lines } = httpIsland(undefined, true, ...stack);
    const url = `http://127.0.0.1:${BASE}`;
    await until("the engine serves", async () => (await modelInfo(url))?.weight_version === "default", 20_000);
    fs.writeFileSync(path.join(l.tmp, "weights"), sglangRecord(checkpoint(l.tmp, false)));
    process.kill(l.starts("sglang")[0].pid, "SIGKILL");
    await until("the third start serves v9", async () => (await modelInfo(url))?.weight_version === "v9", 20_000);
    const argv = lines("argv");
    expect(argv).toHaveLength(3);
    expect(argv.map((a) => a.includes("--weight-version v9"))).toEqual([false, true, false]);
    expect(run.out().stderr).toContain(
      "i0-replica0-n0: its start on the fleet's weights exited before it answered (its log says why): it starts on the base model from now on",
    );
    const state = (await (await fetch(`${url}/standin/state`)).json()) as { weight_updates: number };
    expect(state.weight_updates).toBe(1);
    run.child.kill("SIGTERM");
    await run.done;
  });
});
