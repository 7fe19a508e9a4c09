import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfigFile } from "../../components/config";
import { viewFromPlan } from "../../components/ops/fleet-view";
import { buildPlan } from "../../components/planner";
import { jobPhase, parseSchedulerReport, schedulerQueryScript } from "../../components/slurm/scheduler";
import { resolveStackFile } from "../../components/stack-file";
import { expectShellcheckClean } from "../shellcheck";

const plan = (stack: string) => buildPlan(loadConfigFile(resolveStackFile(stack).file), stack);

describe("SLURM job states map onto five statuses", () => {
  it.each([
    ["PENDING", "queued"],
    ["REQUEUED", "queued"],
    ["CONFIGURING", "running"],
    ["RUNNING", "running"],
    ["COMPLETING", "ended"],
    ["CANCELLED", "ended"],
    ["COMPLETED", "ended"],
    ["FAILED", "failed"],
    ["TIMEOUT", "failed"],
    ["NODE_FAIL", "failed"],
    ["OUT_OF_MEMORY", "failed"],
    ["PREEMPTED", "failed"],
    [null, "none"],
  ])("%s is %s", (state, phase) => {
    expect(jobPhase(state)).toBe(phase);
  });
});

describe("the scheduler report", () => {
  it("parses squeue, node, scontrol, sacct and exit-marker records", () => {
    const text = [
      "squeue\t0\t101|RUNNING|None|node[1-2]",
      "node\t0\tnode1\t10.1.0.11",
      "node\t0\tnode2\t10.1.0.12",
      "nodestate\t0\tnode1\tallocated",
      "nodestate\t0\tnode2\tdown*",
      "exit\t0\tvllm-fleet/multi/island-0/logs/job_101_0/node_1/i0-e1.exit\t137",
      "scontrol\t1\tJobId=202 JobName=x-i1 UserId=alice(1000) JobState=FAILED Reason=NonZeroExitCode Dependency=(null) ExitCode=1:0 Command=/a b",
      "sacct\t2\t303|CANCELLED by 1000|0:15|None",
      "gone\t3\t404",
      "none\t4",
      "garbage line",
    ].join("\n");
    const r = parseSchedulerReport(text, [0, 1, 2, 3, 4]);
    expect(r.get(0)).toMatchObject({
      jobId: "101",
      state: "RUNNING",
      reason: null,
      source: "squeue",
      hosts: ["node1", "node2"],
      addrs: ["10.1.0.11", "10.1.0.12"],
      exits: [{ node: 1, name: "i0-e1", code: 137 }],
    });
    expect(r.get(0)!.nodeStates).toEqual([
      { host: "node1", state: "allocated" },
      { host: "node2", state: "down*" },
    ]);
    expect(r.get(1)).toMatchObject({
      jobId: "202",
      state: "FAILED",
      reason: "NonZeroExitCode",
      exitCode: "1:0",
      source: "scontrol",
    });
    expect(r.get(2)).toMatchObject({ jobId: "303", state: "CANCELLED", exitCode: "0:15", source: "sacct" });
    expect(r.get(3)).toMatchObject({ jobId: "404", state: null, source: "job_id file" });
    expect(r.get(4)).toMatchObject({ jobId: null, state: null, source: "none" });
  });

  it("the query script is valid bash and passes shellcheck", () => {
    const script = schedulerQueryScript(viewFromPlan(plan("disaggregated-x3")).islands);
    expect(script.match(/^fleet_island /gm)).toHaveLength(3);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-q-"));
    const file = path.join(dir, "q.sh");
    fs.writeFileSync(file, script);
    execFileSync("bash", ["-n", file]);
    expectShellcheckClean(script, ["-e", "SC2034"]);
  });

  it("runs against fake squeue/scontrol/getent and reports what they say", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-q-"));
    const bin = path.join(dir, "bin");
    fs.mkdirSync(bin);
    const tool = (name: string, body: string) =>
      fs.writeFileSync(path.join(bin, name), `#!/bin/bash\n${body}\n`, { mode: 0o755 });
    tool(
      "squeue",
      `printf '%s\\n' "$*" >> ${dir}/squeue.args; case "$*" in *--name=live-i0*) echo "11|RUNNING|None|n[1-2]";; esac`,
    );
    tool(
      "scontrol",
      'if [ "$1 $2" = "show hostnames" ]; then printf "n1\\nn2\\n"; elif [ "$3" = "-o" ] && [ "$4" = 12 ]; then echo "JobId=12 JobState=FAILED Reason=NonZeroExitCode ExitCode=1:0"; else exit 1; fi',
    );
    tool("sacct", "exit 1");
    // sinfo lists nodes in its own order; the report must follow the job's node order.
    tool("sinfo", 'printf "n2|down*\\nn1|allocated\\n"');
    tool("getent", 'case "$2" in n1) echo "10.9.0.1 STREAM n1";; n2) echo "10.9.0.2 STREAM n2";; esac');
    const home = path.join(dir, "home");
    fs.mkdirSync(path.join(home, "out/i1/logs/job_12_0/node_0"), { recursive: true });
    fs.writeFileSync(path.join(home, "out/i1/job_id"), "12\n");
    fs.symlinkSync("job_12_0", path.join(home, "out/i1/logs/latest"));
    fs.writeFileSync(path.join(home, "out/i1/logs/job_12_0/node_0/i1-e0.exit"), "3\n");
    const script = schedulerQueryScript([
      { island: 0, jobName: "live-i0", islandDir: "out/i0" },
      { island: 1, jobName: "dead-i1", islandDir: "out/i1" },
      { island: 2, jobName: `never's $(touch ${dir}/canary) \`touch ${dir}/canary\``, islandDir: "out/i2" },
    ]);
    const stdout = execFileSync("bash", ["-s"], {
      input: script,
      env: { ...process.env, HOME: home, PATH: `${bin}:${process.env.PATH}` },
    }).toString();
    const r = parseSchedulerReport(stdout, [0, 1, 2]);
    expect(r.get(0)).toMatchObject({
      jobId: "11",
      state: "RUNNING",
      hosts: ["n1", "n2"],
      addrs: ["10.9.0.1", "10.9.0.2"],
      nodeStates: [
        { host: "n1", state: "allocated" },
        { host: "n2", state: "down*" },
      ],
    });
    expect(r.get(1)).toMatchObject({
      jobId: "12",
      state: "FAILED",
      exitCode: "1:0",
      source: "scontrol",
      exits: [{ node: 0, name: "i1-e0", code: 3 }],
    });
    expect(r.get(2)).toMatchObject({ jobId: null, source: "none" });
    // Names reach squeue as one word, unexpanded.
    expect(fs.readFileSync(path.join(dir, "squeue.args"), "utf8")).toContain(
      `--name=never's $(touch ${dir}/canary) \`touch ${dir}/canary\``,
    );
    expect(fs.existsSync(path.join(dir, "canary"))).toBe(false);
  });

  it("an island squeue did not answer for is not observed: the report refuses, never 'no job'", () => {
    expect(() => parseSchedulerReport("none\t0\n", [0, 1])).toThrow(/island 1: SLURM gave no answer/);
    expect(() => parseSchedulerReport("error\t0\tsqueue failed on login1: slurm_load_jobs error\n", [0])).toThrow(
      "could not observe the SLURM job, so no state is reported: island 0: squeue failed on login1: slurm_load_jobs error",
    );
  });

  /** Runs the query for one island with PATH = a folder of the given tools (plus bash's basics, not squeue). */
  function queryWith(tools: Record<string, string>): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-q-"));
    const bin = path.join(dir, "bin");
    fs.mkdirSync(bin);
    for (const t of ["id", "mktemp", "rm", "head", "cut", "tr", "hostname", "readlink"])
      fs.symlinkSync(
        execFileSync("bash", ["-c", `command -v ${t}`])
          .toString()
          .trim(),
        path.join(bin, t),
      );
    for (const [name, body] of Object.entries(tools))
      fs.writeFileSync(path.join(bin, name), `#!/bin/bash\n${body}\n`, { mode: 0o755 });
    return execFileSync("/bin/bash", ["-s"], {
      input: schedulerQueryScript([{ island: 0, jobName: "x-i0", islandDir: "out/i0", jobId: "77" }]),
      env: { HOME: dir, PATH: bin },
    }).toString();
  }

  it("squeue missing or failing is reported as such (fleet status exits 1), not as a job that is gone", () => {
    expect(() => parseSchedulerReport(queryWith({}), [0])).toThrow(/island 0: squeue is not on PATH on /);
    const failing = queryWith({
      squeue: 'echo "squeue: error: Munge encode failed: Failed to access munge.socket.2" >&2; exit 1',
    });
    expect(() => parseSchedulerReport(failing, [0])).toThrow(/squeue failed on .*: squeue: error: Munge encode failed/);
    // squeue answering (empty) is an observation: the job is not queued or running.
    const answered = queryWith({ squeue: "exit 0", scontrol: "exit 1", sacct: "exit 1" });
    expect(parseSchedulerReport(answered, [0]).get(0)).toMatchObject({ jobId: "77", source: "job_id file" });
  });
});
