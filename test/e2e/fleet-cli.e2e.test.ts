/**
 * `fleet status / metrics / endpoints / logs` against the real SLURM test cluster, over real ssh
 * (OpenSSH, with the host key pinned from the Pulumi stack config), following real jobs. The
 * engines are stand-ins (test/fixtures/standins), not vLLM.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FleetStatusReport } from "../../components/ops/commands";
import type { FleetEndpoints } from "../../components/trainer/contract";
import { parseIslandResult, type RunningIsland } from "../../components/slurm";
import { capture, env, expectOk, login, pulumiConfig } from "./cluster";
import { runRemote } from "./ssh";
import { runFleetCli } from "../helpers";

const conn = { ...login, privateKey: fs.readFileSync(env.FLEET_E2E_SSH_KEY, "utf8") };
const work = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-cli-e2e-"));
const observed: Record<string, string[]> = {};

const run = runFleetCli;

const cliArgs = (cfg: string) => ["--pulumi-config", cfg, "-i", env.FLEET_E2E_SSH_KEY];

async function status(stack: string, cfg: string): Promise<FleetStatusReport> {
  const r = await run(["status", stack, "--json", ...cliArgs(cfg)]);
  expect(r.code, r.err).toBe(0);
  return JSON.parse(r.out) as FleetStatusReport;
}

/** Polls `fleet status` until the fleet is `want`, recording every distinct status on the way. */
async function until(stack: string, cfg: string, want: string, timeoutMs = 60_000): Promise<FleetStatusReport> {
  const seen = (observed[stack] ??= []);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await status(stack, cfg);
    if (seen.at(-1) !== s.status) seen.push(s.status);
    if (s.status === want) return s;
    if (Date.now() > deadline)
      throw new Error(
        `${stack}: still ${s.status} after ${timeoutMs} ms (seen ${seen.join(" → ")}): ${JSON.stringify(s.islands)}`,
      );
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("fleet CLI on the real SLURM cluster", () => {
  beforeAll(async () => {
    const check = await runRemote(conn, "squeue -h -o %i | wc -l");
    expect(check.stdout.trim(), "the test cluster must start with an empty queue").toBe("0");
  });

  afterAll(() => {
    console.log(`fleet status transitions observed: ${JSON.stringify(observed)}`);
  });

  it("status follows a job PENDING → LAUNCHING → READY → SHUTDOWN; metrics shows live load; endpoints and logs agree", async () => {
    const stack = "cli-life";
    // Prefix caching on, so hit rates exist; a 3 s "weight load" so LAUNCHING lasts long enough to see.
    const extra = { enable_prefix_caching: true, env_vars: { STANDIN_STARTUP_DELAY_MS: "3000" } };
    const cfg = pulumiConfig(work, stack, "single-node", extra);
    const [c] = (await capture("single-node", extra, stack)).commands;

    // Before anything (a fresh output directory): no job.
    expectOk(await runRemote(conn, `rm -rf /tmp/fleet-e2e/${stack}`), "clean output dir");
    expect((await until(stack, cfg, "SHUTDOWN", 0)).islands[0].detail).toBe("no job");
    // Hold every node, so the island's job must wait.
    const blocker = await runRemote(
      conn,
      `sbatch --parsable -p ${env.FLEET_E2E_PARTITION} --nodes=4 --exclusive -J cli-blocker --wrap 'sleep 300'`,
    );
    expectOk(blocker, "blocker sbatch");
    const blockerId = blocker.stdout.trim();
    const create = runRemote(c.connection, c.create, c.stdin);
    try {
      const pending = await until(stack, cfg, "PENDING");
      expect(pending.islands[0].schedulerState).toBe("PENDING");
      expect(pending.islands[0].processes.every((p) => p.status === "PENDING")).toBe(true);
      expectOk(await runRemote(conn, `scancel ${blockerId}`), "scancel blocker");
      const launching = await until(stack, cfg, "LAUNCHING");
      expect(launching.islands[0].nodes).toHaveLength(1);
      const ready = await until(stack, cfg, "READY");
      expect(ready.islands[0].processes.map((p) => [p.id, p.role, p.status])).toEqual([
        ["i0-replica0-n0", "replica", "READY"],
        ["router", "router", "READY"],
      ]);
      const created = await create;
      expectOk(created, "create");
      const result = parseIslandResult(created.stdout) as RunningIsland;
      expect(ready.islands[0].jobId).toBe(result.jobId);
      expect(ready.islands[0].processes.map((p) => p.url)).toEqual([...result.adminUrls, result.routerUrl]);

      // endpoints: what the job wrote, as the trainer contract.
      const ep = await run(["endpoints", stack, "--json", ...cliArgs(cfg)]);
      expect(ep.code, ep.err).toBe(0);
      const endpoints = JSON.parse(ep.out) as FleetEndpoints;
      expect(endpoints).toMatchObject({
        model: result.model,
        adminUrls: result.adminUrls,
        roles: result.roles,
        baseUrls: [result.routerUrl],
      });

      // metrics under load: completions keep flowing while the CLI scrapes twice, 1 s apart.
      const client = new OpenAI({ baseURL: result.routerUrl!, apiKey: "unused", maxRetries: 0 });
      let load = true;
      const sent: Promise<unknown>[] = [];
      const pump = (async () => {
        for (let i = 0; load; i++) {
          sent.push(
            client.completions.create({
              model: result.model,
              prompt: `${"a long shared system prompt that the prefix cache keeps ".repeat(20)} request ${i % 4}`,
              max_tokens: 16,
            }),
          );
          await new Promise((r) => setTimeout(r, 20));
        }
      })();
      await new Promise((r) => setTimeout(r, 500));
      const m = await run(["metrics", stack, "--json", "--interval", "1", ...cliArgs(cfg)]);
      load = false;
      await pump;
      await Promise.all(sent);
      expect(m.code, m.err).toBe(0);
      const metrics = JSON.parse(m.out);
      console.log(`fleet metrics under load (stand-in engine): ${JSON.stringify(metrics.total)}`);
      expect(metrics.engines).toHaveLength(1);
      expect(metrics.engines[0]).toMatchObject({ id: "i0-replica0-n0", url: result.adminUrls[0] });
      expect(metrics.total.promptTps).toBeGreaterThan(0);
      expect(metrics.total.generationTps).toBeGreaterThan(0);
      expect(metrics.total.requestsPerS).toBeGreaterThan(0);
      expect(metrics.total.prefixHitRate).toBeGreaterThan(0);
      expect(metrics.total.kvUsage).toBeGreaterThanOrEqual(0);
      expect(metrics.total.windowS).toBeGreaterThan(0.9);
      // The people's view says the same in a table.
      const table = await run(["metrics", stack, "--interval", "0.5", ...cliArgs(cfg)]);
      expect(table.out).toMatch(/i0-replica0-n0 .*replica/);

      const logs = await run(["logs", stack, "--process", "i0-replica0-n0", "-n", "50", ...cliArgs(cfg)]);
      expect(logs.code, logs.err).toBe(0);
      expect(logs.out).toContain("==> island 0: i0-replica0-n0");
      expect(logs.out).toContain("TEST STAND-IN vllm serve");
    } finally {
      await runRemote(conn, `scancel ${blockerId}`);
      expectOk(await runRemote(c.connection, c.delete), "delete");
      await create.catch(() => undefined);
    }
    const gone = await until(stack, cfg, "SHUTDOWN");
    expect(gone.islands[0].schedulerState).toBe("CANCELLED");
    expect(observed[stack]).toEqual(["SHUTDOWN", "PENDING", "LAUNCHING", "READY", "SHUTDOWN"]);
  });

  it("fail-fast (restart.max_restarts = 0): an engine that crashes after start is FAILED, named, with SLURM's verdict; no job is left", async () => {
    const stack = "cli-crash";
    // Long enough for create to see every endpoint serve first: the real vllm-router starts
    // listening only once it has seen its workers healthy (a few seconds on a loaded machine).
    const extra = {
      "inference.env_vars": { STANDIN_CRASH_AFTER_MS: "20000" },
      "inference.restart": { max_restarts: 0 },
    };
    const cfg = pulumiConfig(work, stack, "multi-replica", extra);
    const [c] = (await capture("multi-replica", extra, stack)).commands;
    try {
      expectOk(await runRemote(c.connection, c.create, c.stdin), "create");
      const failed = await until(stack, cfg, "FAILED", 60_000);
      const island = failed.islands[0];
      const engines = island.processes.filter((p) => p.role === "replica");
      expect(engines.some((p) => p.status === "FAILED" && p.detail === "exited with status 1")).toBe(true);
      expect(island.detail).toMatch(/i0-replica\d-n\d exited with status 1/);
      // Once SLURM has ended the job, its verdict is there too (scontrol, within MinJobAge).
      const settled = await (async () => {
        for (let i = 0; i < 50; i++) {
          const s = await status(stack, cfg);
          if (s.islands[0].schedulerState === "FAILED") return s;
          await new Promise((r) => setTimeout(r, 200));
        }
        throw new Error("the job never reached FAILED in SLURM");
      })();
      expect(settled.status).toBe("FAILED");
      expect(settled.islands[0].detail).toMatch(
        /^FAILED, reason NonZeroExitCode, exit \d+:\d+; i0-replica\d-n\d exited with status 1/,
      );
      const text = await run(["status", stack, ...cliArgs(cfg)]);
      expect(text.out).toMatch(/: FAILED\n/);
    } finally {
      expectOk(await runRemote(c.connection, c.delete), "delete");
    }
    expect((await runRemote(conn, "squeue -h -o %i")).stdout.trim()).toBe("");
  });

  it("without a login the CLI says how to give one (exit 2); a wrong host fails clearly (exit 1)", async () => {
    const noLogin = await run(["status", "single-node"]);
    expect(noLogin.code).toBe(2);
    expect(noLogin.err).toMatch(/needs the login node: --login user@host\[:port\]/);
    const wrong = await run([
      "status",
      "single-node",
      "--login",
      "nobody@127.0.0.1:1",
      "--ssh-option",
      "ConnectTimeout=2",
    ]);
    expect(wrong.code).toBe(1);
    expect(wrong.err).toMatch(/the scheduler query on ssh nobody@127\.0\.0\.1:1 failed \(exit 255\)/);
  });
});
