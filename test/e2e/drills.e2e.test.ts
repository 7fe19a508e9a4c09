/**
 * Fault drills on the real SLURM test cluster: each breaks one thing a real fleet meets, runs the
 * exact create/delete commands the program hands to remote.Command (and the fleet CLI where the
 * failure comes after create), and checks that the failure is named (island, engine), shows the
 * log tail, ends in bounded time, leaves no job in squeue and never a duplicate. Engines are
 * stand-ins (test/fixtures/standins), not vLLM.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main as fleet } from "../../bin/fleet";
import { parseIslandResult, STDERR_LINE_BOUND, type RunningIsland } from "../../components/slurm";
import { capture, env, expectOk, fleetStatusIn, login, privateKey, pulumiConfig, ROOT } from "./cluster";
import { runRemote, type Connection } from "./ssh";

const conn: Connection = { ...login, privateKey };
const work = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-drills-"));
const passed: Record<string, number> = {};
/** The Pulumi stacks these drills deploy: their job names end in `-<stack>-i<k>`. */
const DRILL_STACKS = [
  "engine-exits",
  "never-healthy",
  "long-line",
  "login-bound",
  "slurmd-dies",
  "gone-first",
  "interrupted",
  "unreachable",
];
const ours = new RegExp(`-(${DRILL_STACKS.join("|")})-i\\d+$`);
/** The drills' jobs in the queue (`id name state` lines): other suites may share the cluster. */
const queue = async () =>
  (await runRemote(conn, "squeue -h -o '%i %j %T'")).stdout
    .split("\n")
    .filter((l) => ours.test(l.split(" ")[1] ?? ""))
    .join("\n");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const fleetStatus = (pulumiStack: string, stackFile: string, extra: Record<string, unknown> = {}) =>
  fleetStatusIn(work, pulumiStack, stackFile, extra);

/** Records a drill's wall time once its checks passed. */
function done(drill: string, started: number) {
  passed[drill] = Date.now() - started;
}

describe("fault drills on the real SLURM cluster", () => {
  beforeAll(async () => {
    expect(await queue(), "the test cluster must start with none of the drills' jobs").toBe("");
  });

  afterAll(() => {
    console.log(`fault drills passed (wall ms): ${JSON.stringify(passed)}`);
  });

  it("an engine that exits at start: create fails in seconds naming island and engine, with its log tail; no job left", async () => {
    const started = Date.now();
    const [c] = (await capture("single-node", { env_vars: { STANDIN_EXIT_AT_START: "3" } }, "engine-exits")).commands;
    const create = await runRemote(c.connection, c.create, c.stdin);
    expect(create.code).toBe(1);
    expect(create.stdout).toBe("");
    // Which state create sees last (COMPLETING, FAILED, or gone with scontrol's FAILED) is SLURM's
    // timing, not ours: what must hold is that the job ended and the island and engine are named.
    expect(create.stderr).toMatch(
      /single-node-engine-exits-i0 \(island-0\): job \d+ ended \(.+\) before every endpoint served; not serving: i0-replica0-n0/,
    );
    expect(create.stderr).toMatch(/node 0: i0-replica0-n0 exited/);
    expect(create.stderr).toMatch(/last lines of \S+\/node_0\/i0-replica0-n0\.log/);
    expect(create.ms).toBeLessThan(30_000);
    expect(await queue()).toBe("");
    expectOk(await runRemote(c.connection, c.delete), "delete after a failed create");
    done("engine exits at start", started);
  });

  it("an engine that writes a 1 MB progress bar with no newline and dies: create fails in bounded time, no stderr line over the bound (remote.Command's scanner stops at 64 KiB), and the error still shows", async () => {
    const started = Date.now();
    const [c] = (
      await capture(
        "single-node",
        { env_vars: { STANDIN_STDERR_LINE_BYTES: String(1 << 20), STANDIN_EXIT_AT_START: "1" } },
        "long-line",
      )
    ).commands;
    const create = await runRemote(c.connection, c.create, c.stdin);
    expect(create.code, create.stderr.slice(-3000)).toBe(1);
    expect(create.stderr).toMatch(
      /single-node-long-line-i0 \(island-0\): job \d+ ended \(.+\) before every endpoint served/,
    );
    expect(create.stderr).toMatch(/last lines of \S+\/node_0\/i0-replica0-n0\.log/);
    // The log's last line is 1 MB of \r frames with the error at its end: the tail keeps the end.
    expect(create.stderr).toContain("standin vllm: ERROR simulated start-up failure (STANDIN_EXIT_AT_START=1)");
    expect(create.stderr).toContain("Loading safetensors checkpoint shards:  42% Completed");
    expect(create.stderr).not.toContain("\r");
    const lines = create.stderr.split("\n");
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThanOrEqual(STDERR_LINE_BOUND);
    expect(Math.max(...lines.map((l) => Buffer.byteLength(l)))).toBeLessThan(64 * 1024);
    expect(create.ms).toBeLessThan(30_000);
    expect(await queue()).toBe("");
    done("1 MB stderr line", started);
  });

  it("a create that outlives its login-node bound: timeout stops it, its trap cancels the job, and the next create submits afresh", async () => {
    const started = Date.now();
    const [c] = (await capture("single-node", { env_vars: { STANDIN_NEVER_HEALTHY: "1" } }, "login-bound")).commands;
    // The program's command: pending_timeout 60 + ready_timeout 90 + 300 s. The drill runs the same
    // command with the bound cut to 20 s, as if readiness (or a hung squeue) outlived it.
    expect(c.create).toBe("timeout -k 120 450 bash -s");
    const bounded = (seconds: number) => c.create.replace(" 450 ", ` ${seconds} `);
    const stopped = await runRemote(c.connection, bounded(20), c.stdin);
    expect(stopped.code, stopped.stderr.slice(-3000)).toBe(124);
    const id = /submitted job (\d+)/.exec(stopped.stderr)![1];
    expect(stopped.stderr).toMatch(/stopped by SIGTERM after \d+ s: the create's time bound on the login node ran out/);
    expect(stopped.stderr).toContain(`cancelling job(s) ${id} so that no allocation outlives the stopped create`);
    expect(stopped.ms).toBeGreaterThanOrEqual(20_000);
    expect(stopped.ms).toBeLessThan(20_000 + 60_000);
    expect(await queue()).toBe("");
    // Nothing was left to adopt: the next create submits a new job (and is stopped the same way).
    const again = await runRemote(c.connection, bounded(10), c.stdin);
    expect(again.code).toBe(124);
    expect(again.stderr).not.toContain("adopting");
    expect(/submitted job (\d+)/.exec(again.stderr)?.[1]).not.toBe(id);
    expect(await queue()).toBe("");
    expectOk(await runRemote(c.connection, c.delete), "delete after a stopped create");
    done("create stopped by its bound", started);
  });

  it("an engine that never becomes healthy: create gives up at ready_timeout naming island and engine, with its log tail, and cancels", async () => {
    const started = Date.now();
    const [c] = (
      await capture(
        "single-node",
        { env_vars: { STANDIN_NEVER_HEALTHY: "1" }, "slurm.ready_timeout": 12 },
        "never-healthy",
      )
    ).commands;
    const create = await runRemote(c.connection, c.create, c.stdin);
    expect(create.code).toBe(1);
    expect(create.stdout).toBe("");
    expect(create.stderr).toMatch(
      /single-node-never-healthy-i0 \(island-0\): not serving after 12 s: i0-replica0-n0 \(http:\/\/[\d.]+:8100\/health\)/,
    );
    expect(create.stderr).toMatch(/not serving yet: i0-replica0-n0/);
    expect(create.stderr).toMatch(/last lines of \S+\/node_0\/i0-replica0-n0\.log/);
    expect(create.stderr).toMatch(/cancelling job \d+ so that no allocation outlives the failed create/);
    // Bounded: the ready timeout plus cancelling, not the default hour.
    expect(create.ms).toBeLessThan(12_000 + 45_000);
    expect(await queue()).toBe("");
    done("engine never healthy", started);
  });

  it("a node's slurmd dies mid-run: fleet status names the engine lost with it; SLURM ends the job (no requeue); delete leaves nothing", async () => {
    const started = Date.now();
    const [c] = (await capture("multi-replica", {}, "slurmd-dies")).commands;
    const create = await runRemote(c.connection, c.create, c.stdin);
    expectOk(create, "create");
    const result = parseIslandResult(create.stdout) as RunningIsland;
    const victim = result.nodes[1].host;
    const lostEngine = result.engines.find((e) => new URL(e.url).hostname === result.nodes[1].addr)!.id;
    const pidfile = `/var/lib/fleet-e2e/slurm/run/slurmd-${victim}.pid`;
    let idle: boolean;
    try {
      process.kill(Number(fs.readFileSync(pidfile, "utf8").trim()), "SIGKILL");
      // SLURM notices within its SlurmdTimeout (60 s on the test cluster); status must say so then.
      const deadline = Date.now() + 150_000;
      let s: Awaited<ReturnType<typeof fleetStatus>>;
      for (;;) {
        s = await fleetStatus("slurmd-dies", "multi-replica");
        expect(s.code, s.err).toBe(0);
        const island = s.report!.islands[0];
        if (island.status === "FAILED" && island.schedulerState === "NODE_FAIL") break;
        if (Date.now() > deadline)
          throw new Error(`still ${island.status}/${island.schedulerState} 150 s after slurmd died: ${island.detail}`);
        await sleep(2000);
      }
      const island = s.report!.islands[0];
      expect(island.detail).toContain(`${lostEngine} lost with node ${victim} (SLURM: down`);
      expect(island.processes.find((p) => p.id === lostEngine)).toMatchObject({ status: "FAILED" });
      // --no-requeue: the job is over, not queued again behind URLs the outputs no longer hold.
      expect(await queue()).toBe("");
      const del = await runRemote(c.connection, c.delete);
      expectOk(del, "delete after a node failure");
      expect(await queue()).toBe("");
    } finally {
      // Give the node back: restart its slurmd (up.sh starts missing daemons) and wait until idle.
      execFileSync("bash", [path.join(ROOT, "test/e2e/cluster/up.sh")], { stdio: "ignore" });
      const deadline = Date.now() + 120_000;
      for (;;) {
        idle = /^idle$/.test((await runRemote(conn, `sinfo -h -n ${victim} -o %T`)).stdout.trim());
        if (idle || Date.now() > deadline) break;
        await sleep(1000);
      }
    }
    // Checked after the finally, not thrown in it, where it would replace the drill's own failure.
    expect(idle, `${victim} did not return to idle`).toBe(true);
    done("slurmd dies mid-run", started);
  });

  it("the job is gone before destroy: status says SHUTDOWN, delete succeeds and touches nothing else", async () => {
    const started = Date.now();
    const [c] = (await capture("single-node", {}, "gone-first")).commands;
    const create = await runRemote(c.connection, c.create, c.stdin);
    expectOk(create, "create");
    const { jobId } = parseIslandResult(create.stdout) as RunningIsland;
    expectOk(await runRemote(conn, `scancel ${jobId}`), "scancel behind the program's back");
    while ((await queue()) !== "") await sleep(500);
    const s = await fleetStatus("gone-first", "single-node");
    expect(s.report!.islands[0]).toMatchObject({ status: "SHUTDOWN", jobId, schedulerState: "CANCELLED" });
    // Status prints the `pulumi up` that brings it back (it asks the login node before planning).
    expect(s.report!.replace).toEqual({ islands: [0], command: "pulumi up --stack gone-first" });
    expect(s.err).toContain(`island 0's job is gone; \`pulumi up\` sees that`);
    const del = await runRemote(c.connection, c.delete);
    expectOk(del, "delete of a job already gone");
    expect(del.stderr).toContain("single-node-gone-first-i0: no job in the queue; nothing to cancel");
    expect(del.ms).toBeLessThan(10_000);
    // The delete marks the island destroyed: gone by `pulumi destroy`, nothing to bring back.
    const after = await fleetStatus("gone-first", "single-node");
    expect(after.report!.islands[0]).toMatchObject({ status: "SHUTDOWN", jobId });
    expect(after.report!.replace).toBeUndefined();
    done("job gone before destroy", started);
  });

  it("create interrupted after sbatch and re-run: the re-run adopts the same job; never two", async () => {
    const started = Date.now();
    const [c] = (await capture("single-node", { env_vars: { STANDIN_STARTUP_DELAY_MS: "4000" } }, "interrupted"))
      .commands;
    // The connection drops right after sbatch, as when `pulumi up` is interrupted.
    const cut = await runRemote(c.connection, c.create, c.stdin, 60_000, (err) => /submitted job \d+/.test(err));
    expect(cut.code).toBeNull();
    const firstId = /submitted job (\d+)/.exec(cut.stderr)![1];
    try {
      const again = await runRemote(c.connection, c.create, c.stdin);
      expectOk(again, "re-run create");
      expect(again.stderr).toContain(`adopting job ${firstId} (`);
      expect(again.stderr).not.toContain("submitted job");
      expect(parseIslandResult(again.stdout)).toMatchObject({ adopted: true, jobId: firstId });
      expect(await queue()).toBe(`${firstId} single-node-interrupted-i0 RUNNING`);
      // The cut create's orphan cannot act on the job later: its next progress line hits the closed
      // pipe within 10 s. After that the job must still be the only one, and still running.
      await sleep(12_000);
      expect(await queue()).toBe(`${firstId} single-node-interrupted-i0 RUNNING`);
    } finally {
      expectOk(await runRemote(c.connection, c.delete), "delete");
    }
    expect(await queue()).toBe("");
    done("create interrupted after sbatch", started);
  });

  it("the login host is unreachable: the CLI fails in bounded time naming the host, and nothing is submitted", async () => {
    const started = Date.now();
    // 10.231.0.254 is on the test bridge's subnet but nobody answers there: the SYN goes unanswered.
    const cfg = pulumiConfig(work, "unreachable", "single-node", {}, { ...login, host: "10.231.0.254", port: 22 });
    let err = "";
    const t0 = Date.now();
    const code = await fleet(
      [
        "status",
        "unreachable",
        "--pulumi-config",
        cfg,
        "-i",
        env.FLEET_E2E_SSH_KEY,
        "--ssh-option",
        "ConnectTimeout=5",
      ],
      () => {},
      (s) => (err += s),
    );
    expect(code).toBe(1);
    expect(err).toMatch(/the scheduler query on ssh root@10\.231\.0\.254:22 failed \(exit 255\)/);
    expect(Date.now() - t0).toBeLessThan(20_000);
    // The program's own connection bounds its dialling (see test/slurm/program.test.ts): 10 tries of 15 s.
    const [c] = (await capture("single-node", {}, "unreachable")).commands;
    await expect(
      runRemote({ ...c.connection, host: "10.231.0.254", port: 22 }, c.create, c.stdin, 30_000),
    ).rejects.toThrow(/Timed out|ETIMEDOUT|EHOSTUNREACH/);
    expect(await queue()).toBe("");
    done("login host unreachable", started);
  });
});
