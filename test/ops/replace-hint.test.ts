/**
 * `fleet status` on a SLURM fleet whose job ended behind Pulumi's back: remote.Command has no Read
 * (pulumi-command v1.2.1 remote/commandController.go: Create, Update, Delete only), so the program
 * asks the login node before planning and `pulumi up` starts the job again (host/presence.ts).
 * Status prints that `pulumi up`, and only when it saw the job gone: squeue answered and lists no
 * job of the island's name, and `pulumi destroy` did not end it.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { main as fleet } from "../../bin/fleet";
import type { FleetStatusReport } from "../../components/ops/commands";
import { jobsGone } from "../../components/ops/replace-hint";
import type { JobReport } from "../../components/slurm";
import { fakeSlurm, type FakeSlurm } from "../slurm/fake-slurm";

let slurm: FakeSlurm;
const saved = { PATH: process.env.PATH, HOME: process.env.HOME, FAKE_SLURM: process.env.FAKE_SLURM };

beforeEach(() => {
  // `--local` runs the scheduler query with this process's environment: the fake tools come first.
  slurm = fakeSlurm();
  Object.assign(process.env, { PATH: `${slurm.bin}:${saved.PATH}`, HOME: slurm.home, FAKE_SLURM: slurm.dir });
  const dir = path.join(slurm.home, "vllm-fleet/single-node/island-0");
  fs.mkdirSync(dir, { recursive: true });
  // The create wrote the id of the job it submitted.
  fs.writeFileSync(path.join(dir, "job_id"), "100\n");
});

afterEach(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  delete process.env.FAKE_SQUEUE_FAIL;
});

async function status(json = false) {
  let out = "";
  let err = "";
  const code = await fleet(
    ["status", "single-node", "--local", ...(json ? ["--json"] : [])],
    (s) => (out += s),
    (s) => (err += s),
  );
  return { code, out, err };
}

describe("fleet status: a job that is gone gets the pulumi up that brings it back", () => {
  it("squeue answered and lists no job of the island's name: the message and the command", async () => {
    const text = await status();
    expect(text.code, text.err).toBe(0);
    expect(text.out).toContain("FAILED");
    expect(text.err).toBe(
      "island 0's job is gone; `pulumi up` sees that (it asks the host before planning) and starts it again, " +
        "leaving the islands that serve untouched:\n  pulumi up --stack single-node\n",
    );
    const json = await status(true);
    const report = JSON.parse(json.out) as FleetStatusReport;
    expect(report.islands[0]).toMatchObject({ jobId: "100", schedulerState: "FAILED" });
    expect(report.replace).toEqual({ islands: [0], command: "pulumi up --stack single-node" });
  });

  it("`pulumi destroy` ended it (its delete left `destroyed`): nothing to bring back, no command", async () => {
    fs.writeFileSync(path.join(slurm.home, "vllm-fleet/single-node/island-0/destroyed"), "");
    const s = await status(true);
    expect(s.code, s.err).toBe(0);
    expect((JSON.parse(s.out) as FleetStatusReport).replace).toBeUndefined();
    expect(s.err).not.toContain("pulumi up");
  });

  it("squeue failed: nothing was observed, so no command (status says it could not observe the job)", async () => {
    process.env.FAKE_SQUEUE_FAIL = "1";
    const s = await status(true);
    expect(s.code).toBe(1);
    expect(s.out).toBe("");
    expect(s.err).toContain("could not observe the SLURM job");
    expect(s.err).not.toContain("pulumi up");
  });

  it("the job is in the queue: no command", async () => {
    fs.writeFileSync(path.join(slurm.dir, "jobs"), "100|single-node-i0|PENDING|vllm-fleet:x\n");
    const s = await status(true);
    const report = JSON.parse(s.out) as FleetStatusReport;
    expect(report.islands[0].status).toBe("PENDING");
    expect(report.replace).toBeUndefined();
    expect(s.err).not.toContain("pulumi up");
  });
});

describe("jobsGone", () => {
  const report = (over: Partial<JobReport>): JobReport => ({
    island: 0,
    jobId: "7",
    state: null,
    reason: null,
    exitCode: null,
    source: "job_id file",
    hosts: [],
    addrs: [],
    exits: [],
    restarts: [],
    nodeStates: [],
    generation: 0,
    destroyed: false,
    ...over,
  });
  it("is the islands whose submitted job squeue, having answered, no longer lists", () => {
    const jobs = new Map<number, JobReport>([
      [0, report({ island: 0, source: "scontrol", state: "CANCELLED" })],
      [1, report({ island: 1, source: "squeue", state: "RUNNING" })],
      [3, report({ island: 3, source: "none", jobId: null })],
      [4, report({ island: 4, source: "sacct", state: "FAILED" })],
      [5, report({ island: 5, source: "job_id file" })],
    ]);
    expect(jobsGone(jobs)).toEqual([0, 4, 5]);
    // Ended by `pulumi destroy`: not gone.
    expect(jobsGone(new Map([[0, report({ source: "scontrol", state: "CANCELLED", destroyed: true })]]))).toEqual([]);
  });
});
