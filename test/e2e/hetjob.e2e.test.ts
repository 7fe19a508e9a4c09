/**
 * Co-scheduling on the real SLURM cluster: stacks/policy-and-judge.toml (a policy of two tp = 8
 * replicas on two whole nodes beside a tp = 4 judge on half a node) as ONE heterogeneous job. It
 * takes the exact create/delete strings the Pulumi program hands to remote.Command (captured under
 * mocks) and runs them over real SSH; engines are stand-ins, the routers the real vllm-router.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import OpenAI from "openai";
import { beforeAll, describe, expect, it, vi } from "vitest";
import type { CostReport } from "../../components/ops/cost";
import type { FleetStatusReport } from "../../components/ops/commands";
import {
  parseHetjobResult,
  parseSchedulerReport,
  schedulerQueryScript,
  type RunningIsland,
} from "../../components/slurm";
import { jobsQueryScript, parseFleetJobs } from "../../components/slurm";
import { env, expectOk, login, privateKey, pulumiConfig } from "./cluster";
import { runFleetCli } from "../helpers";
import { captureCommands, standinOverrides } from "./program-capture";
import { expectNothingLeftOnNodes, suiteBinDir } from "./real-parts";
import { runRemote, type Connection } from "./ssh";

const conn = (): Connection => ({ ...login, privateKey });
const queue = async () => (await runRemote(conn(), "squeue -h -o '%i %j %T'")).stdout.trim();

/** The judge's node is 8 CPUs and 16 GiB here: its own request (16 CPUs, 128G) is the stack's for a real node. */
const HERE = { "services.judge.slurm.mem": "8G", "services.judge.slurm.cpus_per_task": 4 };

/**
 * cluster.ts capture, with the SLURM keys spelled for a file in vllm-fleet's own layout (isPrimeStack
 * takes a file of [services] for prime-rl's, whose keys go under [vllm_fleet.slurm]).
 */
const overridesOf = (extra: Record<string, unknown>, pulumiStack: string) =>
  standinOverrides(env.FLEET_E2E_PARTITION, pulumiStack, extra, false, suiteBinDir());
const capture = (stack: string, extra: Record<string, unknown>, pulumiStack: string) =>
  captureCommands({
    stackFile: stack,
    pulumiStack,
    overrides: overridesOf(extra, pulumiStack),
    login,
    privateKey,
    loadProgram: async () => {
      vi.resetModules();
      return import("../../index");
    },
  });

async function talk(island: RunningIsland) {
  const client = new OpenAI({ baseURL: island.routerUrl!, apiKey: "unused", maxRetries: 0, timeout: 20_000 });
  const done = await client.completions.create({ model: island.model, prompt: "the quick brown fox", max_tokens: 8 });
  expect(done.model).toBe(island.model);
  expect(done.choices[0].text.length).toBeGreaterThan(0);
  const chat = await client.chat.completions.create({
    model: island.model,
    messages: [{ role: "user", content: "say hi" }],
    max_tokens: 8,
  });
  expect(chat.model).toBe(island.model);
  expect(chat.choices[0].message.content?.length).toBeGreaterThan(0);
}

describe("co-scheduled services on the real SLURM cluster (one heterogeneous job)", () => {
  beforeAll(async () => {
    expect(await queue(), "the test cluster must start with an empty queue").toBe("");
  });

  it("policy-and-judge: one hetjob, both routers answer the openai client, a second create adopts, delete leaves no job", async () => {
    const { commands } = await capture("policy-and-judge", HERE, "pj");
    expect(commands.map((c) => c.name)).toEqual(["pj-cosched-sbatch"]);
    const [c] = commands;
    const create = await runRemote(c.connection, c.create, c.stdin);
    try {
      expectOk(create, "co-scheduled create");
      const r = parseHetjobResult(create.stdout);
      if (r.dryRun) throw new Error("expected a submitted job");
      const [policy, judge] = r.islands as RunningIsland[];
      expect([policy.model, judge.model]).toEqual(["Qwen/Qwen3-32B", "Qwen/Qwen3-8B"]);
      expect([policy.nodes.length, judge.nodes.length]).toEqual([2, 1]);
      expect(new Set([...policy.nodes, ...judge.nodes].map((n) => n.host)).size).toBe(3);
      expect(r.islands.every((i) => !i.dryRun && i.jobId === r.jobId && !i.adopted)).toBe(true);
      // Each component as squeue shows it: <leader>+<offset>, both running, under one name.
      expect((await queue()).split("\n").sort()).toEqual([
        `${r.jobId}+0 policy-and-judge-pj-cosched RUNNING`,
        `${r.jobId}+1 policy-and-judge-pj-cosched RUNNING`,
      ]);
      for (const [island, dir] of [
        [policy, "policy/island-0"],
        [judge, "judge/island-0"],
      ] as const) {
        const onDisk = await runRemote(conn(), `cat /tmp/fleet-e2e/pj/${dir}/endpoints.json`);
        expect(JSON.parse(onDisk.stdout)).toEqual(island);
        await talk(island);
      }
      expect(policy.routerUrl).not.toBe(judge.routerUrl);
      // fleet status's query: each island is its component, with that component's nodes.
      const query = schedulerQueryScript(
        ["policy", "judge"].map((s, k) => ({
          island: k,
          jobName: r.jobName,
          islandDir: `/tmp/fleet-e2e/pj/${s}/island-0`,
          component: k,
        })),
      );
      const report = parseSchedulerReport((await runRemote(conn(), "bash -s", query)).stdout, [0, 1]);
      expect([0, 1].map((k) => [report.get(k)!.jobId, report.get(k)!.state, report.get(k)!.hosts])).toEqual([
        [`${r.jobId}+0`, "RUNNING", policy.nodes.map((n) => n.host)],
        [`${r.jobId}+1`, "RUNNING", judge.nodes.map((n) => n.host)],
      ]);
      // fleet jobs' query: both components, told from other jobs by the comment vllm-fleet gives.
      const listed = parseFleetJobs((await runRemote(conn(), "bash -s", jobsQueryScript())).stdout);
      expect(listed.map((j) => [j.jobId, j.name, j.state, j.nodes])).toEqual([
        [`${r.jobId}+0`, r.jobName, "RUNNING", 2],
        [`${r.jobId}+1`, r.jobName, "RUNNING", 1],
      ]);

      const again = await runRemote(c.connection, c.create, c.stdin);
      expectOk(again, "second create");
      const adopted = parseHetjobResult(again.stdout);
      expect(adopted).toMatchObject({ jobId: r.jobId });
      expect(adopted.islands.map((i) => !i.dryRun && i.adopted)).toEqual([true, true]);
      expect(again.stderr).toContain(`adopting job ${r.jobId} (RUNNING)`);
    } finally {
      expectOk(await runRemote(c.connection, c.delete), "delete");
    }
    expect(await queue()).toBe("");
    await expectNothingLeftOnNodes(env);
    const twice = await runRemote(c.connection, c.delete);
    expectOk(twice, "delete of a job already gone");
    expect(twice.stderr).toContain("nothing to cancel");
  });

  it("the judge's engine exits at start: the whole create fails naming the service island and the engine; no job left", async () => {
    const { commands } = await capture(
      "policy-and-judge",
      { ...HERE, "services.judge.env_vars": { STANDIN_EXIT_AT_START: "3" } },
      "pj-crash",
    );
    const [c] = commands;
    const create = await runRemote(c.connection, c.create, c.stdin);
    try {
      expect(create.code, create.stderr).toBe(1);
      expect(create.stdout).toBe("");
      expect(create.stderr).toMatch(
        /job \d+ ended \(.+\) before every endpoint served; not serving: .*judge\/island-0:/,
      );
      expect(create.stderr).toMatch(/judge\/island-0: i0-replica0-n0 exited \(status 3\)/);
      // Only the judge's engine died; the policy's were stopped with the job, leaving no exit marker.
      expect(create.stderr).not.toMatch(/policy\/island-0: \S+ exited/);
      expect(create.stderr).toMatch(/component 1 \(judge\/island-0\) ended/);
      // The create's own cancel waited for the job to leave the queue (wait_gone): its words if not.
      const cancel = create.stderr.split("\n").filter((l) => /cancel|queue/.test(l));
      expect(await queue(), cancel.join(" | ")).toBe("");
    } finally {
      expectOk(await runRemote(c.connection, c.delete), "delete after a failed create");
    }
    expect(await queue()).toBe("");
    await expectNothingLeftOnNodes(env);
  });
  it('the judge with idle_release_after = "20s": its component alone is cancelled ~20 s after it went idle, the policy serves on in the same job; fleet status and fleet cost (sacct, per component) say so', async () => {
    const stack = "pj-idle";
    const extra = { ...HERE, "services.judge.idle_release_after": "20s" };
    const { commands } = await capture("policy-and-judge", extra, stack);
    const [c] = commands;
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-pj-idle-"));
    const cfg = pulumiConfig(work, stack, "policy-and-judge", {}, login, overridesOf(extra, stack));
    // One service at a time (--service is required with [services]).
    const cli = async <T>(verb: string, service: string) => {
      const r = await runFleetCli([
        verb,
        stack,
        "--service",
        service,
        "--json",
        "--pulumi-config",
        cfg,
        "-i",
        env.FLEET_E2E_SSH_KEY,
      ]);
      return { ...r, report: JSON.parse(r.out || "null") as T };
    };
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    // No earlier run's job folders: fleet cost would count those jobs too.
    expectOk(await runRemote(conn(), `rm -rf /tmp/fleet-e2e/${stack}`), "clean output dir");
    const create = await runRemote(c.connection, c.create, c.stdin);
    try {
      expectOk(create, "co-scheduled create");
      const r = parseHetjobResult(create.stdout);
      if (r.dryRun) throw new Error("expected a submitted job");
      const [policy] = r.islands as RunningIsland[];
      const idleFrom = Date.now();
      // The policy is asked every 2 s throughout; the judge never: only its component goes.
      let released = 0;
      while (Date.now() - idleFrom < 90_000) {
        await talk(policy);
        const q = (await queue()).split("\n").sort();
        if (q.length === 1) {
          released = Date.now();
          expect(q).toEqual([`${r.jobId}+0 policy-and-judge-pj-idle-cosched RUNNING`]);
          break;
        }
        await sleep(2000);
      }
      expect(released, "the judge's component left the queue within 90 s").toBeGreaterThan(0);
      console.log(`judge released ${((released - idleFrom) / 1000).toFixed(1)} s after the create returned`);
      // Its monitor's mark: idle for 20 s to 30 s before the release.
      const mark = (await runRemote(conn(), `cat /tmp/fleet-e2e/${stack}/judge/island-0/logs/latest/idle-released`))
        .stdout;
      const [at, since] = mark.trim().split(" ").map(Number);
      expect(at - since).toBeGreaterThanOrEqual(20);
      expect(at - since).toBeLessThan(30);
      // The policy serves on, in the same job; the accounting has the judge's component cancelled.
      await talk(policy);
      await sleep(2000);
      const sacct = (await runRemote(conn(), `sacct -n -P -X -j ${r.jobId} -o JobID,State`)).stdout.trim().split("\n");
      expect(sacct).toEqual([`${r.jobId}+0|RUNNING`, `${r.jobId}+1|CANCELLED by 0`]);

      const services = ["policy", "judge"];
      const status = await Promise.all(services.map((v) => cli<FleetStatusReport>("status", v)));
      for (const st of status) expect(st.code, st.err).toBe(0);
      expect(status.map((st) => st.report.islands.map((i) => i.status))).toEqual([["READY"], ["IDLE-RELEASED"]]);
      // Each island's GPU-hours are its own component's, from sacct: the judge's stopped at its release.
      const cost = await Promise.all(services.map((v) => cli<CostReport>("cost", v)));
      for (const co of cost) expect(co.code, co.err).toBe(0);
      const held = await Promise.all(
        [0, 1].map(async (k) => {
          const line = (await runRemote(conn(), `sacct -n -P -X -j ${r.jobId}+${k} -o ElapsedRaw,AllocTRES`)).stdout;
          const [elapsed, tres] = line.trim().split("|");
          return (Number(elapsed) * Number(/gres\/gpu=(\d+)/.exec(tres)![1])) / 3600;
        }),
      );
      const islands = cost.map((co) => co.report.islands[0]);
      expect(islands.map((i) => i.jobs.map((j) => [j.id, j.seenBy, j.running]))).toEqual([
        [[`${r.jobId}+0`, "sacct", true]],
        [[`${r.jobId}+1`, "sacct", false]],
      ]);
      console.log(`fleet cost: ${islands.map((i) => i.total.gpuHours).join(", ")} GPU-hours; sacct ${held.join(", ")}`);
      // The running policy's sacct was read after the report: its hours are at most that.
      expect(islands[0].total.gpuHours).toBeLessThanOrEqual(held[0] * 1.01);
      expect(islands[0].total.gpuHours).toBeGreaterThanOrEqual(held[0] * 0.9);
      expect(Math.abs(islands[1].total.gpuHours - held[1])).toBeLessThanOrEqual(held[1] * 0.01);
    } finally {
      expectOk(await runRemote(c.connection, c.delete), "delete");
    }
    expect(await queue()).toBe("");
    await expectNothingLeftOnNodes(env);
  }, 300_000);
});
