/**
 * The fleet CLI on a stack of services (issue 28 item 4): `--service <name>` picks one, and is
 * required for a stack of several and refused for a stack of one; a co-scheduled island is found
 * as a component of the stack's one heterogeneous job (its name, offset and the group's batch
 * output); `pulumi up --replace` names the group's command; `pulumi stack output --json` of a
 * stack of services reads per service. The plan's request table says what SLURM is asked for.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { logsScript } from "../../components/ops/commands";
import { viewFromEndpoints } from "../../components/ops/fleet-view";
import { replaceHint } from "../../components/ops/replace-hint";
import { resolveSource } from "../../components/ops/source";
import type { JobReport } from "../../components/host/job-report";
import { gresGpus, jobRequests, requestTable, timeLimitHours } from "../../components/slurm";
import { ROOT, runFleetCli, stackPlanOf } from "../helpers";

const run = runFleetCli;

const source = (service?: string, stack = "policy-and-judge") =>
  resolveSource({ stack, service, overrides: [], sshOptions: [], local: false });

describe("fleet --service on a stack of services", () => {
  it("a stack of several services needs --service, and names them (exit 2)", async () => {
    const r = await run(["endpoints", "policy-and-judge"]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--service: the stack has 2 services \(policy, judge\): name one/);
    const wrong = await run(["endpoints", "policy-and-judge", "--service", "critic"]);
    expect(wrong.code).toBe(2);
    expect(wrong.err).toMatch(/has no service "critic"; its services: policy, judge/);
    const single = await run(["endpoints", "single-node", "--service", "judge"]);
    expect(single.code).toBe(2);
    expect(single.err).toMatch(/has no \[services\]; it serves one model \(Qwen\/Qwen3-8B\)/);
  });

  it("a co-scheduled island is a component of the one hetjob: its name, offset, own folder and the group's batch output", () => {
    const judge = source("judge").view;
    expect(judge.model).toBe("Qwen/Qwen3-8B");
    expect(judge.service).toBe("judge");
    expect(judge.islands).toEqual([
      expect.objectContaining({
        jobName: "policy-and-judge-cosched",
        component: 1,
        islandDir: "vllm-fleet/policy-and-judge/judge/island-0",
        jobDir: "vllm-fleet/policy-and-judge/cosched",
      }),
    ]);
    const policy = source("policy").view;
    expect(policy.islands[0]).toMatchObject({ component: 0, jobName: "policy-and-judge-cosched" });
    // The batch output is the group's, found by the leader's id (squeue prints <leader>+<offset>).
    const script = logsScript(judge, () => false, 5, true);
    expect(script).toContain("id=${id%%+*}");
    expect(script).toContain("vllm-fleet/policy-and-judge/cosched/slurm-");
  });

  it("co_schedule = false: each service island is its own job, under its own name", () => {
    const view = resolveSource({
      stack: "policy-and-judge",
      service: "judge",
      overrides: [{ path: ["slurm", "co_schedule"], value: false }],
      sshOptions: [],
      local: false,
    }).view;
    expect(view.islands[0]).toMatchObject({ jobName: "policy-and-judge-judge-i0" });
    expect(view.islands[0].component).toBeUndefined();
  });

  it("a job seen gone: the hint is the stack's pulumi up, co-scheduled or not", () => {
    const gone = (island: number): Map<number, JobReport> =>
      new Map([
        [
          island,
          {
            island,
            jobId: "77+1",
            state: "CANCELLED",
            reason: null,
            exitCode: "0:15",
            source: "sacct",
            hosts: [],
            addrs: [],
            exits: [],
            restarts: [],
            nodeStates: [],
            generation: 0,
            destroyed: false,
          } as JobReport,
        ],
      ]);
    const co = replaceHint(source("judge").view, gone(0));
    expect(co?.command).toBe("pulumi up --stack policy-and-judge");
    const apart = replaceHint(
      resolveSource({
        stack: "policy-and-judge",
        service: "judge",
        overrides: [{ path: ["slurm", "co_schedule"], value: false }],
        sshOptions: [],
        local: false,
      }).view,
      gone(0),
    );
    expect(apart).toEqual({ islands: [0], command: "pulumi up --stack policy-and-judge" });
  });

  it("`pulumi stack output --json` of a stack of services: --service picks its islands and model", () => {
    const outputs = {
      planned: {
        target: "slurm",
        services: { policy: { model: "P" }, judge: { model: "J" } },
      },
      islands: [
        {
          service: "policy",
          island: 0,
          routerUrl: "http://a:8000/v1",
          adminUrls: ["http://a:8100/v1"],
          roles: ["replica"],
        },
        {
          service: "judge",
          island: 0,
          routerUrl: "http://b:9000/v1",
          adminUrls: ["http://b:9100/v1"],
          roles: ["replica"],
        },
      ],
    };
    const judge = viewFromEndpoints(outputs, "out.json", "judge");
    expect(judge.model).toBe("J");
    expect(judge.islands.map((i) => i.router?.url)).toEqual(["http://b:9000/v1"]);
    expect(() => viewFromEndpoints(outputs, "out.json")).toThrow(
      /2 services \(policy, judge\): name one with --service/,
    );
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-svc-"));
    fs.writeFileSync(path.join(dir, "o.json"), JSON.stringify(outputs));
    expect(fs.existsSync(path.join(ROOT, "stacks", "policy-and-judge.toml"))).toBe(true);
  });
});

/** Runs `fleet jobs --local` with `squeue` on PATH printing `body` (a bash script's body). */
async function jobsWith(body: string, args: string[] = []) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-jobs-"));
  fs.writeFileSync(path.join(dir, "squeue"), `#!/bin/bash\n${body}\n`, { mode: 0o755 });
  const saved = process.env.PATH;
  process.env.PATH = `${dir}:${saved}`;
  try {
    return await run(["jobs", "--local", ...args]);
  } finally {
    process.env.PATH = saved;
  }
}

describe("fleet jobs: every fleet's job of the user (vec-inf's status with no job id)", () => {
  const LISTING = [
    "553+0|policy-and-judge-pj-cosched|RUNNING|1:02|UNLIMITED|2|node[1-2]|vllm-fleet:abc",
    "553+1|policy-and-judge-pj-cosched|RUNNING|1:02|4:00:00|1|node3|vllm-fleet:abc",
    "560|my-notebook|RUNNING|10:00|1:00:00|1|node4|(null)",
    "561|single-node-dev-i0|PENDING|0:00|UNLIMITED|1|(Resources)|vllm-fleet:def",
  ].join("\\n");

  it("lists only vllm-fleet's jobs, each hetjob component on its own row", async () => {
    const r = await jobsWith(`printf '${LISTING}\\n'`, ["--json"]);
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toEqual([
      {
        jobId: "553+0",
        name: "policy-and-judge-pj-cosched",
        state: "RUNNING",
        elapsed: "1:02",
        limit: "UNLIMITED",
        nodes: 2,
        where: "node[1-2]",
      },
      {
        jobId: "553+1",
        name: "policy-and-judge-pj-cosched",
        state: "RUNNING",
        elapsed: "1:02",
        limit: "4:00:00",
        nodes: 1,
        where: "node3",
      },
      {
        jobId: "561",
        name: "single-node-dev-i0",
        state: "PENDING",
        elapsed: "0:00",
        limit: "UNLIMITED",
        nodes: 1,
        where: "(Resources)",
      },
    ]);
    const text = await jobsWith(`printf '${LISTING}\\n'`);
    expect(text.out).toMatch(/553\+1 .*policy-and-judge-pj-cosched .*RUNNING/);
    expect(text.out).not.toContain("my-notebook");
  });

  it("an empty queue says so; a failing squeue is an error (exit 1), never an empty list", async () => {
    const none = await jobsWith("exit 0");
    expect(none).toMatchObject({ code: 0, out: "no job of a vllm-fleet stack is queued or running\n" });
    const broken = await jobsWith(
      "echo 'squeue: error: slurm_load_jobs error: Unable to contact slurm controller' >&2; exit 1",
    );
    expect(broken).toMatchObject({ code: 1, out: "" });
    expect(broken.err).toContain("Unable to contact slurm controller");
    const garbled = await jobsWith("echo 'not a record'");
    expect(garbled.code).toBe(1);
    expect(garbled.err).toContain("squeue printed a line that is not a job record: not a record");
  });

  it("without a login node it says how to name one (exit 2)", async () => {
    const r = await run(["jobs"]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/jobs asks the login node: --login/);
  });
});

describe("what SLURM is asked for (the plan's first table)", () => {
  it("reads SLURM's time formats as hours", () => {
    expect(timeLimitHours("90")).toBe(1.5);
    expect(timeLimitHours("30:00")).toBe(0.5);
    expect(timeLimitHours("04:00:00")).toBe(4);
    expect(timeLimitHours("1-12")).toBe(36);
    expect(timeLimitHours("2-00:30")).toBe(48.5);
    expect(timeLimitHours("UNLIMITED")).toBeUndefined();
    expect([gresGpus("gpu:8"), gresGpus("gpu:h100:4"), gresGpus("shard:2")]).toEqual([8, 4, undefined]);
  });

  it("policy-and-judge: one row per component, the judge's 4 GPUs for 4 h = 16 GPU-hours, and the policy's time unbounded", () => {
    const table = requestTable(jobRequests(stackPlanOf("policy-and-judge")));
    expect(table.rows).toEqual([
      ["policy-and-judge-cosched+0", "cluster", "2 x 8", "partition default", "yes", expect.any(String), "-"],
      ["policy-and-judge-cosched+1", "cluster", "1 x 4", "04:00:00", "no", expect.any(String), "16.0"],
    ]);
    expect(table.title).toMatch(/unbounded by the file/);
    const bounded = requestTable(jobRequests(stackPlanOf("policy-and-judge")).map((r) => ({ ...r, time: "02:00:00" })));
    // 2 nodes x 8 GPUs x 2 h + 1 x 4 x 2 h
    expect(bounded.title).toMatch(/40\.0 GPU-hours at the time limits/);
  });
});
