/**
 * `fleet cost` against the schedulers' own accounting (issue 44): a stand-in fleet on the real SLURM
 * test cluster (no slurmdbd there: sacct is disabled, so scontrol answers, and the command says a
 * job it can no longer see is unaccounted) and one on this machine (the supervisor's start time from
 * /proc). Each held-GPU-hours figure must agree with the scheduler's within 1%.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { CostReport } from "../../components/ops/cost";
import { drainRpcs } from "../program-harness";
import { capture, env, expectOk, login, pulumiConfig } from "./cluster";
import { runRemote } from "./ssh";
import { runFleetCli } from "../helpers";
import { ROOT, STANDINS } from "./program-capture";
import { captureLocal, create, destroy, freshHome, runLocal, running } from "./local-target";

afterEach(drainRpcs);
// No killLeftovers here: it kills every process under the shared /tmp/fleet-local-e2e, other suites' runs too;
// this file's run ends by its own delete (finally below).

const conn = { ...login, privateKey: fs.readFileSync(env.FLEET_E2E_SSH_KEY, "utf8") };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Long enough that SLURM's whole-second RunTime is well inside 1%. */
const HOLD_MS = 110_000;

/** What scontrol says the job has held so far: RunTime x TresPerNode's GPUs x NumNodes, in GPU-hours. */
async function scontrolGpuHours(jobId: string): Promise<number> {
  const line = (await runRemote(conn, `scontrol show job -o ${jobId}`)).stdout;
  const f = (k: string) => new RegExp(`(?:^|\\s)${k}=(\\S*)`).exec(line)?.[1] ?? "";
  const [h, m, s] = f("RunTime").split(":").map(Number);
  const gpus = Number(/gpu:(\d+)$/.exec(f("TresPerNode"))![1]) * Number(f("NumNodes"));
  return ((h * 3600 + m * 60 + s) * gpus) / 3600;
}

describe("fleet cost agrees with the scheduler's own accounting", () => {
  it("SLURM (real cluster, stand-in engines): scontrol's RunTime x GPUs within 1%, the ledger's busy share, an unseen past job said so (exit 1)", async () => {
    const stack = "cost-slurm";
    const extra = { "server.port": 18471 };
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-cost-e2e-"));
    const cfg = pulumiConfig(work, stack, "single-node", { ...extra, "cost.gpu_hour_price": 2 });
    const [c] = (await capture("single-node", extra, stack)).commands;
    const dir = `/tmp/fleet-e2e/${stack}/island-0`;
    expectOk(await runRemote(conn, `rm -rf /tmp/fleet-e2e/${stack}`), "clean output dir");
    const cost = async () => {
      const r = await runFleetCli(["cost", stack, "--json", "--pulumi-config", cfg, "-i", env.FLEET_E2E_SSH_KEY]);
      return { ...r, report: JSON.parse(r.out) as CostReport };
    };
    try {
      expectOk(await runRemote(c.connection, c.create, c.stdin), "create");
      const jobId = (await runRemote(conn, `cat ${dir}/job_id`)).stdout.trim();
      const attempt = (await runRemote(conn, `readlink ${dir}/logs/latest`)).stdout.trim();
      // The activity monitor's ledger as it writes it: busy from the job's start, idle from 60 s on.
      const start = Number((await runRemote(conn, `stat -c %Y ${dir}/logs/${attempt}`)).stdout.trim());
      const ledger = Array.from({ length: 4 }, (_, k) => `${start + 30 * k} ${k < 2 ? "busy" : "idle"}`).join("\n");
      expectOk(await runRemote(conn, `printf '%s\\n' '${ledger}' > ${dir}/logs/${attempt}/activity`), "ledger");
      await sleep(HOLD_MS);

      const before = await scontrolGpuHours(jobId);
      const r = await cost();
      const after = await scontrolGpuHours(jobId);
      expect(r.code, r.err).toBe(0);
      const [island] = r.report.islands;
      expect(island.jobs).toMatchObject([
        { id: jobId, current: true, running: true, seenBy: "scontrol", ledger: true },
      ]);
      console.log(`fleet cost: ${island.sinceUp.gpuHours} GPU-hours; scontrol ${before}..${after}`);
      expect(island.sinceUp.gpuHours).toBeGreaterThanOrEqual(before * 0.99);
      expect(island.sinceUp.gpuHours).toBeLessThanOrEqual(after * 1.01);
      expect(r.report.total.money).toBeCloseTo(island.total.gpuHours * 2, 9);
      expect(island.sinceUp.busy).toBeGreaterThan(0);
      expect(island.sinceUp.idle).toBeGreaterThan(0);
      expect(island.sinceUp.unrecorded).toBeGreaterThan(0);

      // A job of an earlier up that neither sacct (disabled) nor scontrol still knows: named, not counted, exit 1.
      expectOk(await runRemote(conn, `mkdir -p ${dir}/logs/job_1_0`), "a past job's folder");
      const partial = await cost();
      expect(partial.code).toBe(1);
      expect(partial.err).toContain("lower bounds");
      expect(partial.report.complete).toBe(false);
      expect(partial.report.islands[0].unaccounted).toMatchObject([{ id: "1", current: false }]);
      expect(partial.report.islands[0].unaccounted[0].why).toContain("sacct did not answer");
    } finally {
      expectOk(await runRemote(c.connection, c.delete), "delete");
    }
  }, 300_000);

  it("local (stand-in engines): the supervisor's own start time (/proc) x the plan's GPUs within 1%", async () => {
    const home = freshHome("fleet-cost");
    const text =
      `[model]\nname = "Qwen/Qwen3-0.6B"\n[parallel]\ntp = 2\n[deployment]\ngpus_per_node = 2\n[server]\nport = 18481\n` +
      `[cost]\ngpu_hour_price = 3\n\n[local]\ngpus = [0, 1]\nready_timeout = 90\n\n[local.launcher]\nbin_dir = ${JSON.stringify(STANDINS)}\n`;
    const { commands } = await captureLocal(text);
    const c = commands[0];
    const dir = fs.mkdtempSync(path.join(home, "project-"));
    fs.writeFileSync(path.join(dir, "stack.toml"), text);
    fs.writeFileSync(path.join(dir, "Pulumi.dev.yaml"), `config:\n  vllm-fleet:stackFile: ./stack.toml\n`);
    const cli = path.join(ROOT, "dist", "bin", "fleet.js");
    const cost = () =>
      runLocal(
        `node ${JSON.stringify(cli)} cost --json --pulumi-config ${JSON.stringify(path.join(dir, "Pulumi.dev.yaml"))} ${JSON.stringify(path.join(dir, "stack.toml"))}`,
        { home },
      );
    const island = running(await create(c, home), "create");
    // The supervisor's start as the kernel keeps it: field 22 of /proc/<pid>/stat, ticks after boot.
    const stat = fs.readFileSync(`/proc/${island.jobId}/stat`, "utf8");
    const ticks = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
    const btime = Number(/^btime (\d+)$/m.exec(fs.readFileSync("/proc/stat", "utf8"))![1]);
    const started = btime + ticks / 100;
    let stopping: number;
    try {
      await sleep(20_000);
      const before = (Date.now() / 1000 - started) * 2;
      const r = await cost();
      const after = (Date.now() / 1000 - started) * 2;
      expect(r.code, r.stderr).toBe(0);
      const report = JSON.parse(r.stdout) as CostReport;
      const [i] = report.islands;
      console.log(`fleet cost (local): ${i.sinceUp.gpuHours * 3600} GPU-s; /proc ${before}..${after}`);
      // The island's activity monitor (docs/idle-release.md) has written its ledger since the run started.
      expect(i.jobs).toMatchObject([{ current: true, running: true, gpus: 2, gpuSource: "the plan", ledger: true }]);
      // The start it reports is the kernel's, to well within 1% of the time held.
      expect(Math.abs(Date.parse(i.jobs[0].start!) / 1000 - started)).toBeLessThan(0.01 * i.jobs[0].hours * 3600);
      expect(i.sinceUp.gpuHours * 3600).toBeGreaterThanOrEqual(before * 0.99);
      expect(i.sinceUp.gpuHours * 3600).toBeLessThanOrEqual(after * 1.01);
      expect(report.gpuHourPrice).toBe(3);
      // No request came: the stand-ins' time splits into idle and, while they started, unseen; the
      // ledger's first line comes within a scrape of the start, so little is unrecorded.
      const s = i.sinceUp;
      expect(s.busy + s.idle + s.paused + s.unseen + s.unrecorded).toBeCloseTo(s.gpuHours, 9);
      expect(s.busy).toBe(0);
      expect(s.idle).toBeGreaterThan(0);
      expect(s.unrecorded).toBeLessThan(0.5 * s.gpuHours);
    } finally {
      stopping = Date.now() / 1000;
      expect((await destroy(c, home)).code).toBe(0);
    }
    const stopped = Date.now() / 1000;
    // The run has ended (the delete removed its run record: an earlier run now): held from the kernel's start until its supervisor's own end record, which
    // the destroy's stop wrote (supervisor.sh's EXIT trap), and nothing is left unaccounted.
    const gone = await cost();
    expect(gone.code, gone.stderr).toBe(0);
    const [over] = (JSON.parse(gone.stdout) as CostReport).islands;
    expect(over.unaccounted).toEqual([]);
    expect(over.jobs).toMatchObject([{ current: false, running: false, gpus: 2, seenBy: "the run's own end record" }]);
    const startedAt = Date.parse(over.jobs[0].start!) / 1000;
    expect(Math.abs(startedAt - started)).toBeLessThan(0.05);
    const held = over.jobs[0].hours * 3600;
    console.log(
      `fleet cost (local, ended): ${held} s held; destroy ran ${stopping - started}..${stopped - started} s after the start`,
    );
    expect(held).toBeGreaterThanOrEqual(stopping - started - 0.05);
    expect(held).toBeLessThanOrEqual(stopped - started + 0.05);
  }, 300_000);
});
