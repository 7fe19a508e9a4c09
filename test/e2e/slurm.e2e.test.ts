/**
 * The real-SLURM end-to-end test. For each stack that fits the 4-node test cluster it takes the
 * exact create/delete strings the Pulumi program hands to remote.Command (captured under mocks),
 * runs them over real SSH on the login node, talks to the fleet with the official `openai` client,
 * checks every admin URL, adopts the running job on a second create, deletes, and checks that no
 * job is left. The engines, routers and stores are stand-ins (test/fixtures/standins), not vLLM.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseIslandResult, type RunningIsland } from "../../components/report/island-result";
import { installMocks, setConfig, settle, slurmConfig, value, type Registered } from "../program-harness";
import { runRemote, type Connection, type RemoteRun } from "./ssh";

const ROOT = path.resolve(__dirname, "..", "..");
const STANDINS = path.join(ROOT, "test", "fixtures", "standins", "bin");
const ENV_FILE = process.env.FLEET_E2E_ENV ?? "/var/lib/fleet-e2e/cluster.env";
/** vLLM stand-ins listen after this delay (their default), standing for weight loading. */
const STANDIN_STARTUP_DELAY_MS = 300;

function clusterEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of fs.readFileSync(ENV_FILE, "utf8").split("\n")) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line);
    if (m) env[m[1]] = m[2].replace(/^"(.*)"$/, "$1");
  }
  return env;
}

const env = clusterEnv();
const login = { host: env.FLEET_E2E_SSH_HOST, port: Number(env.FLEET_E2E_SSH_PORT), user: env.FLEET_E2E_SSH_USER, hostKey: env.FLEET_E2E_HOST_KEY };
const privateKey = fs.readFileSync(env.FLEET_E2E_SSH_KEY, "utf8");
const timings: Record<string, { createMs: number; runningToReadyMs: number; submitToReadyMs: number; adoptMs: number; deleteMs: number }> = {};

interface CapturedCommand {
  name: string;
  connection: Connection;
  create: string;
  stdin: string;
  delete: string;
}

/** Runs index.ts under mocks for `stack` and returns the remote.Command inputs it registers. */
async function capture(stack: string): Promise<{ commands: CapturedCommand[]; planned: any }> {
  const registered: Registered[] = installMocks(stack);
  const outputDir = `/tmp/fleet-e2e/${stack}`;
  const overrides = {
    "slurm.launcher": { type: "vllm", bin_dir: STANDINS },
    "slurm.partition": env.FLEET_E2E_PARTITION,
    "slurm.pending_timeout": 60,
    "slurm.ready_timeout": 90,
    output_dir: outputDir,
  };
  setConfig({ ...slurmConfig({ overrides }, login), "vllm-fleet:sshPrivateKey": privateKey });
  vi.resetModules();
  const infra = await import("../../index");
  const planned = await value(infra.planned);
  await value(infra.islands!);
  await settle(registered);
  const commands = registered
    .filter((r) => r.type === "command:remote:Command")
    .map((r) => ({ name: r.name, connection: r.inputs.connection as Connection, create: r.inputs.create, stdin: r.inputs.stdin, delete: r.inputs.delete }));
  return { commands, planned };
}

const squeueByName = async (conn: Connection, name: string) => (await runRemote(conn, `squeue -h --name=${name} -o '%i %T'`)).stdout.trim();

function expectOk(run: RemoteRun, what: string) {
  expect(run.code, `${what} failed (exit ${run.code}); stderr:\n${run.stderr}`).toBe(0);
}

/** Requests through the router with the official client; returns which engines answered. */
async function sendTraffic(island: RunningIsland): Promise<string[]> {
  const client = new OpenAI({ baseURL: island.routerUrl!, apiKey: "unused", maxRetries: 0, timeout: 20_000 });
  const workers: string[] = [];
  for (let i = 0; i < 6; i++) {
    const { data, response } = await client.completions
      .create({ model: island.model, prompt: `the quick brown fox ${i} jumps`, max_tokens: 8, logprobs: 2 }, { headers: { "X-Session-ID": `session-${i}` } })
      .withResponse();
    expect(data.model).toBe(island.model);
    expect(data.choices[0].text.length).toBeGreaterThan(0);
    expect(data.choices[0].logprobs?.tokens?.length).toBeGreaterThan(0);
    workers.push(response.headers.get("x-standin-worker") ?? response.headers.get("x-standin-envoy-upstream") ?? response.headers.get("x-standin-engine") ?? "");
  }
  const chat = await client.chat.completions.create({ model: island.model, messages: [{ role: "user", content: "say hi" }], max_tokens: 8, logprobs: true, top_logprobs: 2, ...({ return_token_ids: true } as object) });
  expect(chat.choices[0].message.content?.length).toBeGreaterThan(0);
  expect(chat.choices[0].logprobs?.content?.length).toBeGreaterThan(0);
  expect((chat.choices[0] as unknown as { token_ids?: number[] }).token_ids?.length).toBeGreaterThan(0);
  return workers;
}

/** Every admin URL serves the engine's own routes: health, models, pause/resume, weight updates. */
async function checkAdmin(island: RunningIsland) {
  for (const url of island.adminUrls) {
    const origin = new URL(url).origin;
    expect((await fetch(`${origin}/health`)).status, url).toBe(200);
    const models = (await (await fetch(`${url}/models`)).json()) as { data: { id: string }[] };
    expect(models.data.map((m) => m.id)).toContain(island.model);
    expect(await (await fetch(`${origin}/pause`, { method: "POST" })).json()).toEqual({ status: "paused" });
    expect(await (await fetch(`${origin}/resume`, { method: "POST" })).json()).toEqual({ status: "resumed" });
    const update = await fetch(`${origin}/update_weights`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ weight_dir: "/tmp" }) });
    expect(update.status, `${origin}/update_weights`).toBe(200);
  }
  if (island.routerUrl) {
    // Admin routes are engine-only: the router must not expose them.
    const viaRouter = await fetch(`${new URL(island.routerUrl).origin}/pause`, { method: "POST" });
    expect(viaRouter.status).toBe(404);
  }
}

const STACKS: { stack: string; expectSpread: boolean }[] = [
  { stack: "single-node", expectSpread: false },
  { stack: "multi-replica", expectSpread: true },
  { stack: "wide-ep", expectSpread: true },
  { stack: "disaggregated-small", expectSpread: false },
  { stack: "kv-offload-mooncake", expectSpread: true },
  { stack: "llm-d", expectSpread: true },
];

describe("SLURM end to end (real slurmctld/slurmd, real ssh, stand-in engines)", () => {
  beforeAll(async () => {
    const conn = { ...login, privateKey };
    const check = await runRemote(conn, "command -v node sbatch && squeue -h -o %i | wc -l");
    expect(check.code, `login node not ready: ${check.stderr}`).toBe(0);
    expect(check.stdout.trim().split("\n").pop(), "the test cluster must start with an empty queue").toBe("0");
  });

  afterAll(() => {
    const rows = Object.entries(timings).map(([stack, t]) => ({ stack, ...t }));
    console.log(`stand-in start-up delay: ${STANDIN_STARTUP_DELAY_MS} ms\n${JSON.stringify(rows, null, 1)}`);
    if (process.env.FLEET_E2E_REPORT) fs.writeFileSync(process.env.FLEET_E2E_REPORT, JSON.stringify({ standinStartupDelayMs: STANDIN_STARTUP_DELAY_MS, stacks: rows }, null, 2));
  });

  it.each(STACKS)("$stack: create serves through the router and every admin URL, a second create adopts, delete leaves no job", async ({ stack, expectSpread }) => {
    const { commands, planned } = await capture(stack);
    expect(commands.length).toBe(planned.islands.length);
    const c = commands[0];
    expect(c.connection).toMatchObject({ host: login.host, port: login.port, user: login.user, hostKey: login.hostKey });

    const create = await runRemote(c.connection, c.create, c.stdin);
    try {
      expectOk(create, `${stack} create`);
      const result = parseIslandResult(create.stdout);
      if (result.dryRun) throw new Error("expected a submitted job");
      expect(result.adopted).toBe(false);
      expect(result.roles).toEqual(planned.islands[0].roles);
      expect(result.adminUrls).toHaveLength(planned.islands[0].adminUrls.length);
      // endpoints.json beside the logs holds the same line, for trainers on the cluster.
      const onDisk = await runRemote(c.connection, `cat /tmp/fleet-e2e/${stack}/island-0/endpoints.json`);
      expect(JSON.parse(onDisk.stdout)).toEqual(JSON.parse(create.stdout.trim()));

      const workers = await sendTraffic(result);
      if (expectSpread) expect(new Set(workers).size, `requests through ${result.routerUrl} all went to ${workers[0]}`).toBeGreaterThan(1);
      await checkAdmin(result);

      const again = await runRemote(c.connection, c.create, c.stdin);
      expectOk(again, `${stack} second create`);
      const adopted = parseIslandResult(again.stdout);
      expect(adopted).toMatchObject({ adopted: true, jobId: result.jobId });
      expect((await squeueByName(c.connection, result.jobName)).split("\n")).toEqual([`${result.jobId} RUNNING`]);

      timings[stack] = {
        createMs: create.ms,
        runningToReadyMs: Math.round((result.timing.readyAt - result.timing.runningAt) * 1000),
        submitToReadyMs: Math.round((result.timing.readyAt - result.timing.submittedAt) * 1000),
        adoptMs: again.ms,
        deleteMs: 0,
      };
    } finally {
      const del = await runRemote(c.connection, c.delete);
      expectOk(del, `${stack} delete`);
      if (timings[stack]) timings[stack].deleteMs = del.ms;
    }
    expect(await runRemote(c.connection, "squeue -h -o %i").then((r) => r.stdout.trim())).toBe("");
    const twice = await runRemote(c.connection, c.delete);
    expectOk(twice, `${stack} delete of a job already gone`);
    expect(twice.stderr).toContain("nothing to cancel");
  });
});
