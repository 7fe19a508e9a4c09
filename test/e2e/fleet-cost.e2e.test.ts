/**
 * `fleet cost` against the schedulers' own accounting (issue 44): a stand-in fleet on the real SLURM
 * test cluster, whose slurmdbd keeps every job's record in MariaDB (test/e2e/cluster/accounting.sh), so
 * sacct answers for the running job and for it after it ended; and one on this machine (the
 * supervisor's start time from /proc). Each held-GPU-hours figure must agree with the scheduler's
 * within 1%.
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

/** What sacct says the job has held so far: ElapsedRaw x AllocTRES's gres/gpu, in GPU-hours, and its Start. */
async function sacctGpuHours(jobId: string): Promise<{ gpuHours: number; start: number; state: string }> {
  const out = (await runRemote(conn, `sacct -n -P -X -j ${jobId} -o ElapsedRaw,AllocTRES,Start,State`)).stdout;
  const [elapsed, tres, start, state] = out.trim().split("\n")[0].split("|");
  const gpus = Number(/gres\/gpu=(\d+)/.exec(tres)?.[1]);
  expect(gpus, `sacct's AllocTRES counts the job's GPUs: ${out}`).toBeGreaterThan(0);
  const epoch = Number((await runRemote(conn, `date -d ${start} +%s`)).stdout.trim());
  return { gpuHours: (Number(elapsed) * gpus) / 3600, start: epoch, state };
}

describe("fleet cost agrees with the scheduler's own accounting", () => {
  it("SLURM (real cluster with slurmdbd, stand-in engines): sacct's ElapsedRaw x AllocTRES GPUs within 1% while the job runs and after it ended, the ledger's busy share, a job the accounting never saw said so (exit 1)", async () => {
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
    let jobId: string;
    let deleted = false;
    try {
      expectOk(await runRemote(c.connection, c.create, c.stdin), "create");
      jobId = (await runRemote(conn, `cat ${dir}/job_id`)).stdout.trim();
      const attempt = (await runRemote(conn, `readlink ${dir}/logs/latest`)).stdout.trim();
      // The activity monitor's ledger as it writes it: busy from the job's start, idle from 60 s on.
      const start = Number((await runRemote(conn, `stat -c %Y ${dir}/logs/${attempt}`)).stdout.trim());
      const ledger = Array.from({ length: 4 }, (_, k) => `${start + 30 * k} ${k < 2 ? "busy" : "idle"}`).join("\n");
      expectOk(await runRemote(conn, `printf '%s\\n' '${ledger}' > ${dir}/logs/${attempt}/activity`), "ledger");
      await sleep(HOLD_MS);

      const before = await sacctGpuHours(jobId);
      const r = await cost();
      const after = await sacctGpuHours(jobId);
      expect(r.code, r.err).toBe(0);
      const [island] = r.report.islands;
      expect(island.jobs).toMatchObject([
        {
          id: jobId,
          current: true,
          running: true,
          seenBy: "sacct",
          gpuSource: "sacct AllocTRES gres/gpu",
          ledger: true,
        },
      ]);
      expect(Date.parse(island.jobs[0].start!) / 1000).toBe(before.start);
      console.log(`fleet cost: ${island.sinceUp.gpuHours} GPU-hours; sacct ${before.gpuHours}..${after.gpuHours}`);
      expect(island.sinceUp.gpuHours).toBeGreaterThanOrEqual(before.gpuHours * 0.99);
      expect(island.sinceUp.gpuHours).toBeLessThanOrEqual(after.gpuHours * 1.01);
      expect(r.report.total.money).toBeCloseTo(island.total.gpuHours * 2, 9);
      expect(island.sinceUp.busy).toBeGreaterThan(0);
      expect(island.sinceUp.idle).toBeGreaterThan(0);
      expect(island.sinceUp.unrecorded).toBeGreaterThan(0);

      expectOk(await runRemote(c.connection, c.delete), "delete");
      deleted = true;
      // The ended job, from the accounting (sacct's record of its end can trail the end by a moment).
      let ended = await sacctGpuHours(jobId);
      for (let k = 0; k < 20 && ended.state === "RUNNING"; k++) {
        await sleep(500);
        ended = await sacctGpuHours(jobId);
      }
      const over = await cost();
      expect(over.code, over.err).toBe(0);
      const [gone] = over.report.islands;
      expect(gone.jobs).toMatchObject([{ id: jobId, running: false, seenBy: "sacct" }]);
      console.log(`fleet cost (ended): ${gone.total.gpuHours} GPU-hours; sacct ${ended.gpuHours} (${ended.state})`);
      expect(Math.abs(gone.total.gpuHours - ended.gpuHours)).toBeLessThanOrEqual(ended.gpuHours * 0.01);
      expect(gone.unaccounted).toEqual([]);

      // A job folder whose id the accounting never had: named, not counted, exit 1.
      expectOk(await runRemote(conn, `mkdir -p ${dir}/logs/job_99999999_0`), "a job the accounting never saw");
      const partial = await cost();
      expect(partial.code).toBe(1);
      expect(partial.err).toContain("lower bounds");
      expect(partial.report.complete).toBe(false);
      expect(partial.report.islands[0].unaccounted).toMatchObject([{ id: "99999999", current: false }]);
      expect(partial.report.islands[0].unaccounted[0].why).toContain("sacct printed nothing for it");
    } finally {
      if (!deleted) expectOk(await runRemote(c.connection, c.delete), "delete");
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
