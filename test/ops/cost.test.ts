/**
 * `fleet cost`: the accounting queries run against stand-in scheduler tools (sacct, squeue, scontrol
 * answering from fixtures: sacct's --parsable2 shape as SLURM 22.05 prints it, scontrol's line from
 * the test cluster), their records parsed, and the GPU-hours and ledger shares worked out.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { costReport, costText, jobHours } from "../../components/ops/cost";
import { heldQueryScript, parseHeldReport, slurmSeconds, tresGpus } from "../../components/slurm";
import { localHeldQueryScript, parseLocalHeldReport, RUN_ENDED_FILE } from "../../components/local";
import type { HeldJob } from "../../components/host/held-time";
import { expectShellcheckClean } from "../shellcheck";
import { viewFromPlan } from "../../components/ops/fleet-view";
import { plan, stackText } from "../helpers";

const FIXTURES = path.resolve(__dirname, "..", "fixtures", "cost");

/** A HOME with an island folder, and stand-in scheduler tools on PATH (each a bash script). */
function sandbox(tools: Record<string, string>) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-cost-"));
  const bin = path.join(root, "bin");
  fs.mkdirSync(bin);
  for (const [name, body] of Object.entries(tools))
    fs.writeFileSync(path.join(bin, name), `#!/bin/bash\n${body}\n`, { mode: 0o755 });
  const home = path.join(root, "home");
  fs.mkdirSync(home);
  const run = (script: string) =>
    spawnSync("bash", ["-s"], {
      input: script,
      encoding: "utf8",
      env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, HOME: home, TZ: "UTC" },
    });
  return { home, run };
}

const job = (over: Partial<HeldJob>): HeldJob => ({
  id: "1",
  current: true,
  running: true,
  start: 1000,
  elapsed: 3600,
  gpus: 8,
  gpuSource: "sacct AllocTRES gres/gpu",
  seenBy: "sacct",
  activity: null,
  ...over,
});

describe("fleet cost arithmetic", () => {
  it("GPU-hours are elapsed x GPUs; the ledger splits them, its gaps and a missing ledger are unrecorded", () => {
    expect(jobHours(job({}))).toEqual({ gpuHours: 8, busy: 0, idle: 0, paused: 0, unseen: 0, unrecorded: 8 });
    // Busy for 30 min (heartbeats every 60 s), then idle 10 min, then the monitor stops: the rest is unrecorded.
    const activity = [
      ...Array.from({ length: 30 }, (_, k) => ({ at: 1000 + 60 * k, state: "busy" as const })),
      ...Array.from({ length: 10 }, (_, k) => ({ at: 2800 + 60 * k, state: "idle" as const })),
    ];
    const h = jobHours(job({ activity }));
    expect(h.gpuHours).toBe(8);
    expect(h.busy).toBeCloseTo(4, 9);
    // The last idle line holds two heartbeats (120 s) past itself: 9 x 60 + 120 s.
    expect(h.idle).toBeCloseTo(((9 * 60 + 120) / 3600) * 8, 9);
    expect(h.busy + h.idle + h.paused + h.unseen + h.unrecorded).toBeCloseTo(8, 9);
  });

  it("sums islands, counts the current job since the up, prices hours, and marks a report with unseen jobs incomplete", () => {
    const r = costReport(
      [
        { island: 0, jobs: [job({ id: "7", current: false, elapsed: 7200 }), job({ id: "9" })], unseen: [] },
        { island: 1, jobs: [job({ id: "10", gpus: 4 })], unseen: [{ id: "5", current: false, why: "gone" }] },
      ],
      { model: "m", target: "slurm", gpuHourPrice: 2.5, now: new Date(0) },
    );
    expect(r.islands[0].total.gpuHours).toBe(24);
    expect(r.islands[0].sinceUp.gpuHours).toBe(8);
    expect(r.total).toMatchObject({ gpuHours: 28, money: 70 });
    expect(r.sinceUp).toMatchObject({ gpuHours: 12, money: 30 });
    expect(r.complete).toBe(false);
    const text = costText(r);
    expect(text).toContain("12.00 GPU-hours since the last up, 28.00 in all (at 2.5 per GPU-hour: 70.00)");
    expect(text).toContain("island 1 5: gone");
  });
});

describe("SLURM's accounting query (templates/slurm/cost-query.sh.mustache)", () => {
  const refs = [{ island: 0, jobName: "vllm-fleet-dev-i0", islandDir: "fleet/island-0", gpus: 8 }];

  it("passes bash -n and shellcheck", () => {
    const text = heldQueryScript(refs);
    expect(spawnSync("bash", ["-n"], { input: text }).status).toBe(0);
    expectShellcheckClean(text);
  });

  it("reads sacct's elapsed x AllocTRES gres/gpu for every job of the island's folders, with each job's ledger", () => {
    const s = sandbox({
      squeue: "echo 1002",
      sacct: `cat ${JSON.stringify(path.join(FIXTURES, "sacct-parsable2.txt"))}`,
      scontrol: "exit 1",
    });
    for (const d of ["job_1001_0", "job_1002_0", "job_1002_1"])
      fs.mkdirSync(path.join(s.home, "fleet/island-0/logs", d), { recursive: true });
    const start = Date.parse("2026-11-29T12:00:05Z") / 1000;
    fs.writeFileSync(path.join(s.home, "fleet/island-0/logs/job_1002_0/activity"), `${start} busy\n`);
    fs.writeFileSync(path.join(s.home, "fleet/island-0/logs/job_1002_1/activity"), `${start + 60} idle\n`);
    const out = s.run(heldQueryScript(refs));
    expect(out.status, out.stderr).toBe(0);
    const [island] = parseHeldReport(out.stdout, refs);
    expect(island.unseen).toEqual([]);
    expect(island.jobs.map((j) => [j.id, j.current, j.running, j.elapsed, j.gpus])).toEqual([
      ["1002", true, true, 3600, 16],
      ["1001", false, false, 7200, 8],
    ]);
    expect(island.jobs[0].start).toBe(start);
    expect(island.jobs[0].activity).toEqual([
      { at: start, state: "busy" },
      { at: start + 60, state: "idle" },
    ]);
    expect(island.jobs[1].activity).toBeNull();
    const r = costReport([island], { model: "m", target: "slurm", now: new Date() });
    expect(r.total.gpuHours).toBe(32);
    expect(r.sinceUp.gpuHours).toBe(16);
    expect(r.sinceUp.busy).toBeCloseTo((60 * 16) / 3600, 9);
  });

  it("without accounting, scontrol's RunTime x TresPerNode x NumNodes; a job neither knows is unaccounted, with why", () => {
    const line = fs.readFileSync(path.join(FIXTURES, "scontrol-running.txt"), "utf8").trim();
    const s = sandbox({
      squeue: "echo 925",
      sacct: "echo 'Slurm accounting storage is disabled' >&2; exit 1",
      scontrol: `[ "$4" = 925 ] && echo ${JSON.stringify(line)}`,
    });
    fs.mkdirSync(path.join(s.home, "fleet/island-0/logs/job_900_0"), { recursive: true });
    const out = s.run(heldQueryScript(refs));
    const [island] = parseHeldReport(out.stdout, refs);
    expect(island.jobs).toMatchObject([
      { id: "925", current: true, running: true, elapsed: 3, gpus: 2, gpuSource: "scontrol TresPerNode x NumNodes" },
    ]);
    expect(island.jobs[0].start).toBe(Date.parse("2026-11-29T17:35:35Z") / 1000);
    expect(island.unseen).toEqual([
      {
        id: "900",
        current: false,
        why: "sacct did not answer (Slurm accounting storage is disabled), and scontrol no longer knows job 900",
      },
    ]);
  });

  it("a co-scheduled island: its own component of each heterogeneous job (<leader>+<offset>), from sacct, with its ledger", () => {
    const co = [{ ...refs[0], component: 1 }];
    // As the test cluster's sacct printed a hetjob whose component 1 was released alone.
    const s = sandbox({
      squeue: "printf '1002+0\\n'",
      sacct: `[ "$5" = 1002+1,1001+1 ] || exit 3
echo '1002+1|2026-11-29T12:00:05|40|billing=1,cpu=1,gres/gpu=4,node=1|1|CANCELLED by 0'
echo '1001+1|2026-11-29T10:00:00|600|billing=1,cpu=1,gres/gpu=4,node=1|1|COMPLETED'`,
      scontrol: "exit 1",
    });
    for (const d of ["job_1001_0", "job_1002_0"])
      fs.mkdirSync(path.join(s.home, "fleet/island-0/logs", d), { recursive: true });
    const start = Date.parse("2026-11-29T12:00:05Z") / 1000;
    fs.writeFileSync(path.join(s.home, "fleet/island-0/logs/job_1002_0/activity"), `${start} idle\n`);
    const text = heldQueryScript(co);
    expectShellcheckClean(text);
    const out = s.run(text);
    expect(out.status, out.stderr).toBe(0);
    const [island] = parseHeldReport(out.stdout, co);
    expect(island.unseen).toEqual([]);
    expect(island.jobs.map((j) => [j.id, j.current, j.running, j.elapsed, j.gpus])).toEqual([
      ["1002+1", true, false, 40, 4],
      ["1001+1", false, false, 600, 4],
    ]);
    expect(island.jobs[0].activity).toEqual([{ at: start, state: "idle" }]);
  });

  it("a cluster that counts no GPUs: the plan's count, said so", () => {
    const line = fs
      .readFileSync(path.join(FIXTURES, "scontrol-running.txt"), "utf8")
      .trim()
      .replace(" TresPerNode=gres:gpu:2", "");
    const held = parseHeldReport(`job\t0\t925\tcurrent\nisland\t0\nscontrol\t925\t100\t${line}\n`, refs);
    expect(held[0].jobs[0]).toMatchObject({ gpus: 8, gpuSource: "the plan (scontrol counts no GPUs on this cluster)" });
  });

  it("a scheduler that does not answer: no hours, an error naming it", () => {
    const s = sandbox({ squeue: "echo 'slurm_load_jobs error: Unable to contact slurm controller' >&2; exit 1" });
    const out = s.run(heldQueryScript(refs));
    expect(() => parseHeldReport(out.stdout, refs)).toThrow(/squeue failed .*Unable to contact slurm controller/);
    expect(() => parseHeldReport("", refs)).toThrow(/printed nothing for island\(s\) 0/);
  });

  it("helpers: TRES GPU totals and SLURM durations", () => {
    expect(tresGpus("cpu=2,gres/gpu:a100=4,gres/gpu=4,node=1")).toBe(4);
    expect(tresGpus("cpu=2,node=1")).toBeUndefined();
    expect(slurmSeconds("1-02:03:04")).toBe(93784);
    expect(slurmSeconds("03:04")).toBe(184);
    expect(slurmSeconds("00:00:07")).toBe(7);
    expect(slurmSeconds("INVALID")).toBeUndefined();
    expect(slurmSeconds("1:2:3:4")).toBeUndefined();
  });
});

describe("the local target's accounting query (templates/local/cost-query.sh.mustache)", () => {
  const refs = [{ island: 0, islandDir: "fleet/island-0", gpus: 2 }];

  it("passes bash -n and shellcheck", () => {
    const text = localHeldQueryScript(refs);
    expect(spawnSync("bash", ["-n"], { input: text }).status).toBe(0);
    expectShellcheckClean(text);
  });

  it("the running run from its kernel start time until now x the plan's GPUs; an earlier run from its own end record, one without it unaccounted", () => {
    const s = sandbox({});
    const dir = path.join(s.home, "fleet/island-0");
    for (const d of ["run_20261129-090000_10", "run_20261129-100000_11", "run_20261129-110000_12"])
      fs.mkdirSync(path.join(dir, "logs", d), { recursive: true });
    // What the supervisor of run _11 wrote as it ended (supervisor.sh.mustache's EXIT trap).
    fs.writeFileSync(path.join(dir, "logs/run_20261129-100000_11", RUN_ENDED_FILE), "1796029200.50 1796032800.25\n");
    // This test's own process stands in for the supervisor: its start time as the kernel keeps it.
    const stat = fs.readFileSync(`/proc/${process.pid}/stat`, "utf8");
    const ticks = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
    fs.writeFileSync(path.join(dir, "run"), `${process.pid} ${ticks} hash ${dir}/logs/run_20261129-110000_12\n`);
    const out = s.run(localHeldQueryScript(refs));
    expect(out.status, out.stderr).toBe(0);
    const [island] = parseLocalHeldReport(out.stdout, refs);
    const btime = Number(/^btime (\d+)$/m.exec(fs.readFileSync("/proc/stat", "utf8"))![1]);
    const tck = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout);
    expect(island.jobs).toHaveLength(2);
    expect(island.jobs[0]).toMatchObject({
      id: "run_20261129-100000_11",
      current: false,
      running: false,
      start: 1796029200.5,
      elapsed: 3599.75,
      gpus: 2,
      seenBy: "the run's own end record",
    });
    expect(island.jobs[1]).toMatchObject({ id: "run_20261129-110000_12", current: true, running: true, gpus: 2 });
    expect(island.jobs[1].start).toBeCloseTo(btime + Number(ticks) / tck, 6);
    expect(island.unseen.map((u) => u.id)).toEqual(["run_20261129-090000_10"]);
  });

  it("a run that ended: from its supervisor's end record, else unaccounted (never estimated)", () => {
    const head = "clock\t2000\t1000\t100\nrun\t0\trun_x\t5\tENDED\nisland\t0\n";
    expect(parseLocalHeldReport(head, refs)[0]).toEqual({
      island: 0,
      jobs: [],
      unseen: [
        {
          id: "run_x",
          current: true,
          why: "the run has ended: when it ended was not recorded (its supervisor was killed)",
        },
      ],
    });
    const [held] = parseLocalHeldReport(`${head}ended\t0\trun_x\t1005\t1905\n`, refs);
    expect(held.unseen).toEqual([]);
    expect(held.jobs).toEqual([
      expect.objectContaining({ id: "run_x", current: true, running: false, start: 1005, elapsed: 900 }),
    ]);
    // A record whose end is before its start is no record.
    expect(parseLocalHeldReport(`${head}ended\t0\trun_x\t1905\t1005\n`, refs)[0].jobs).toEqual([]);
    expect(() => parseLocalHeldReport("", refs)).toThrow(/could not read the run records/);
  });
});

describe("what the plan says fleet cost needs", () => {
  it("each island's GPUs (SLURM: --gres per node x nodes; local device = cpu: none) and cost.gpu_hour_price", () => {
    const slurm = viewFromPlan(plan(`${stackText("single-node")}\n[cost]\ngpu_hour_price = 1.5\n`, "single-node"));
    expect(slurm.islands[0].gpus).toBe(8);
    expect(slurm.gpuHourPrice).toBe(1.5);
    const cpu = viewFromPlan(plan(stackText("local-cpu"), "local-cpu"));
    expect(cpu.islands[0].gpus).toBe(0);
    expect(cpu.gpuHourPrice).toBeUndefined();
    // prime-rl's layout: our own [vllm_fleet] table's [vllm_fleet.cost].
    const prime = viewFromPlan(plan(`${stackText("prime-single-node")}\n[vllm_fleet.cost]\ngpu_hour_price = 4\n`, "p"));
    expect(prime.gpuHourPrice).toBe(4);
  });
});
