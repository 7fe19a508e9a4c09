/**
 * The real-SLURM end-to-end test. For each stack that fits the 4-node test cluster it takes the
 * exact create/delete strings the Pulumi program hands to remote.Command (captured under mocks),
 * runs them over real SSH on the login node, talks to the fleet with the official `openai` client,
 * checks every admin URL, adopts the running job on a second create, deletes, and checks that no
 * job is left. The vllm-router and the Mooncake store are the real ones from the pinned venv
 * (test/e2e/python-env.sh); the engines, llm-d's EPP, Envoy and the P/D sidecar are stand-ins
 * (test/fixtures/standins), not vLLM: real vLLM runs in the tests real-vllm-checks.ts names.
 */
import * as fs from "node:fs";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseIslandResult, type RunningIsland } from "../../components/slurm";
import { capture, env, expectOk, login, privateKey, STANDIN_STARTUP_DELAY_MS } from "./cluster";
import { expectNothingLeftOnNodes } from "./real-parts";
import { runRemote, type Connection, type RemoteRun } from "./ssh";

const conn = (): Connection => ({ ...login, privateKey });

const timings: Record<
  string,
  { createMs: number; runningToReadyMs: number; submitToReadyMs: number; adoptMs: number; deleteMs: number }
> = {};

const squeueByName = async (conn: Connection, name: string) =>
  (await runRemote(conn, `squeue -h --name=${name} -o '%i %T'`)).stdout.trim();

/** Requests through the router with the official client; returns which engines answered. */
async function sendTraffic(island: RunningIsland): Promise<{ workers: string[] }> {
  const client = new OpenAI({ baseURL: island.routerUrl!, apiKey: "unused", maxRetries: 0, timeout: 20_000 });
  const workers: string[] = [];
  for (let i = 0; i < 6; i++) {
    const { data, response } = await client.completions
      .create(
        { model: island.model, prompt: `the quick brown fox ${i} jumps`, max_tokens: 8, logprobs: 2 },
        { headers: { "X-Session-ID": `session-${i}` } },
      )
      .withResponse();
    expect(data.model).toBe(island.model);
    expect(data.choices[0].text.length).toBeGreaterThan(0);
    expect(data.choices[0].logprobs?.tokens?.length).toBeGreaterThan(0);
    workers.push(
      response.headers.get("x-standin-worker") ??
        response.headers.get("x-standin-envoy-upstream") ??
        response.headers.get("x-standin-engine") ??
        "",
    );
  }
  const chat = await client.chat.completions.create({
    model: island.model,
    messages: [{ role: "user", content: "say hi" }],
    max_tokens: 8,
    logprobs: true,
    top_logprobs: 2,
    ...({ return_token_ids: true } as object),
  });
  expect(chat.choices[0].message.content?.length).toBeGreaterThan(0);
  expect(chat.choices[0].logprobs?.content?.length).toBeGreaterThan(0);
  expect((chat.choices[0] as unknown as { token_ids?: number[] }).token_ids?.length).toBeGreaterThan(0);
  return { workers };
}

/**
 * P/D, counted on the engines themselves (the real router names no worker in its response): every
 * request went to a prefill engine and to a decode engine, and the decode engines got the
 * kv_transfer_params a prefill engine returned (the NIXL handshake the router relays).
 */
async function checkDisaggregated(island: RunningIsland) {
  type State = { requests: number; last_request: { kv_transfer_params: unknown } | null };
  const states = await Promise.all(
    island.engines.map(async (e) => ({
      role: e.role,
      state: (await (await fetch(`${new URL(e.url).origin}/standin/state`)).json()) as State,
    })),
  );
  const of = (role: string) => states.filter((x) => x.role === role).map((x) => x.state);
  const requests = (role: string) => of(role).reduce((n, s) => n + s.requests, 0);
  // sendTraffic sends 6 completions and 1 chat completion.
  expect(requests("prefill"), "requests prefilled").toBe(7);
  expect(requests("decode"), "requests decoded").toBe(7);
  for (const s of of("decode").filter((s) => s.last_request))
    expect(s.last_request!.kv_transfer_params, "a decode request carries the prefill's KV handle").not.toBeNull();
}

/** Every admin URL serves the engine's own routes: health, models, pause/resume, weight updates. */
async function checkAdmin(island: RunningIsland, vllmRouter: boolean) {
  for (const url of island.adminUrls) {
    const origin = new URL(url).origin;
    expect((await fetch(`${origin}/health`)).status, url).toBe(200);
    const models = (await (await fetch(`${url}/models`)).json()) as { data: { id: string }[] };
    expect(models.data.map((m) => m.id)).toContain(island.model);
    expect(await (await fetch(`${origin}/pause`, { method: "POST" })).json()).toEqual({ status: "paused" });
    expect(await (await fetch(`${origin}/resume`, { method: "POST" })).json()).toEqual({ status: "resumed" });
    const update = await fetch(`${origin}/update_weights`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ weight_dir: "/tmp" }),
    });
    expect(update.status, `${origin}/update_weights`).toBe(200);
  }
  if (vllmRouter && island.routerUrl && !island.roles.includes("prefill")) {
    // The real vllm-router proxies a path it does not know to one worker: an admin call sent to
    // the router URL reaches one engine of the island, never all (docs/trainer.md).
    const viaRouter = await fetch(`${new URL(island.routerUrl).origin}/pause`, { method: "POST" });
    expect(viaRouter.status).toBe(200);
    const engine = viaRouter.headers.get("x-standin-engine") ?? viaRouter.headers.get("x-standin-worker");
    expect(engine, "the engine that took the router's /pause").toBeTruthy();
    for (const url of island.adminUrls) await fetch(`${new URL(url).origin}/resume`, { method: "POST" });
  }
}

/**
 * prime-rl's own server on every engine: the admin URLs reach each DP rank's own process, which
 * records the weight update (GET /standin/state) and runs prime-rl's worker extension for the
 * stack's weight_broadcast.type (a standalone prime-rl file defaults to filesystem).
 */
async function checkPrimeWeightUpdate(island: RunningIsland) {
  const engineIds = new Set<string>();
  for (const url of island.adminUrls) {
    const state = (await (await fetch(`${new URL(url).origin}/standin/state`)).json()) as {
      engine_id: string;
      weight_updates: number;
      weight_dir: string | null;
      prime?: { worker_extension_cls: string; weight_broadcast_type: string };
    };
    expect(state.prime, `${url} runs prime-rl's inference server`).toMatchObject({
      weight_broadcast_type: "filesystem",
      worker_extension_cls: "prime_rl.inference.vllm.worker.filesystem.FileSystemWeightUpdateWorker",
    });
    expect({ updates: state.weight_updates, dir: state.weight_dir }, url).toEqual({ updates: 1, dir: "/tmp" });
    engineIds.add(state.engine_id);
  }
  // One engine process per admin URL: every DP rank was updated, none twice.
  expect(engineIds.size).toBe(island.adminUrls.length);
}

/** `name`: the Pulumi stack (job and output dir); the stack file is `stack`, with `extra` overrides. */
type Row = {
  name: string;
  stack: string;
  expectSpread: boolean;
  extra?: Record<string, unknown>;
  primeServer?: boolean;
};
const row = (stack: string, expectSpread: boolean): Row => ({ name: stack, stack, expectSpread });
/** The same stack with one engine per DP rank (prime-rl's topology): per-rank ports, groups, sidecars, IPC dirs. */
const perRank = (stack: string, expectSpread: boolean): Row => ({
  name: `${stack}-per-rank`,
  stack,
  expectSpread,
  extra: { "inference.engine_processes": "per_rank" },
});
/** A stack in prime-rl's layout, unchanged; its engines run prime-rl's server, as its RL runs do. */
const primeRow = (stack: string, expectSpread: boolean): Row => ({
  name: stack,
  stack,
  expectSpread,
  extra: { "vllm_fleet.engine": "prime-rl" },
  primeServer: true,
});
/**
 * The real Mooncake master and clients: no RDMA NIC here, so the store runs over TCP, each node
 * contributing 256 MiB instead of the stack's 128 GB.
 */
const MOONCAKE_HERE = {
  "inference.kv_cache_offload.protocol": "tcp",
  "inference.kv_cache_offload.device_name": "",
  "inference.kv_cache_offload.cpu.num_bytes": 256 * 1024 * 1024,
};
const STACKS: Row[] = [
  row("single-node", false),
  row("multi-replica", true),
  row("wide-ep", true),
  row("disaggregated-small", false),
  { ...row("kv-offload-mooncake", true), extra: MOONCAKE_HERE },
  row("llm-d", true),
  perRank("wide-ep", true),
  perRank("disaggregated-small", false),
  {
    ...perRank("kv-offload-mooncake", true),
    extra: { ...perRank("kv-offload-mooncake", true).extra, ...MOONCAKE_HERE },
  },
  perRank("llm-d", true),
  primeRow("prime-multi-replica", true),
  primeRow("prime-disaggregated", false),
];

describe("SLURM end to end (real slurmctld/slurmd, real ssh, real vllm-router and Mooncake, stand-in engines)", () => {
  beforeAll(async () => {
    const conn = { ...login, privateKey };
    const check = await runRemote(conn, "command -v node sbatch && squeue -h -o %i | wc -l");
    expect(check.code, `login node not ready: ${check.stderr}`).toBe(0);
    expect(check.stdout.trim().split("\n").pop(), "the test cluster must start with an empty queue").toBe("0");
  });

  afterAll(() => {
    const rows = Object.entries(timings).map(([stack, t]) => ({ stack, ...t }));
    console.log(`stand-in start-up delay: ${STANDIN_STARTUP_DELAY_MS} ms\n${JSON.stringify(rows, null, 1)}`);
    if (process.env.FLEET_E2E_REPORT)
      fs.writeFileSync(
        process.env.FLEET_E2E_REPORT,
        JSON.stringify({ standinStartupDelayMs: STANDIN_STARTUP_DELAY_MS, stacks: rows }, null, 2),
      );
  });

  it.each(STACKS)(
    "$name: create serves through the router and every admin URL, a second create adopts, delete leaves no job",
    async ({ name, stack, expectSpread, extra, primeServer }) => {
      const { commands, planned } = await capture(stack, extra, name);
      expect(commands.length).toBe(planned.islands.length);
      const c = commands[0];
      expect(c.connection).toMatchObject({
        host: login.host,
        port: login.port,
        user: login.user,
        hostKey: login.hostKey,
      });

      const create = await runRemote(c.connection, c.create, c.stdin);
      try {
        expectOk(create, `${name} create`);
        const result = parseIslandResult(create.stdout);
        if (result.dryRun) throw new Error("expected a submitted job");
        expect(result.adopted).toBe(false);
        expect(result.roles).toEqual(planned.islands[0].roles);
        expect(result.adminUrls).toHaveLength(planned.islands[0].adminUrls.length);
        // endpoints.json beside the logs holds the same line, for trainers on the cluster.
        const onDisk = await runRemote(c.connection, `cat /tmp/fleet-e2e/${name}/island-0/endpoints.json`);
        expect(JSON.parse(onDisk.stdout)).toEqual(JSON.parse(create.stdout.trim()));

        const { workers } = await sendTraffic(result);
        if (result.roles.includes("prefill")) await checkDisaggregated(result);
        if (expectSpread)
          expect(
            new Set(workers).size,
            `requests through ${result.routerUrl} all went to ${workers[0]}`,
          ).toBeGreaterThan(1);
        await checkAdmin(result, !stack.includes("llm-d"));
        if (primeServer) await checkPrimeWeightUpdate(result);

        const again = await runRemote(c.connection, c.create, c.stdin);
        expectOk(again, `${name} second create`);
        const adopted = parseIslandResult(again.stdout);
        expect(adopted).toMatchObject({ adopted: true, jobId: result.jobId });
        expect((await squeueByName(c.connection, result.jobName)).split("\n")).toEqual([`${result.jobId} RUNNING`]);

        timings[name] = {
          createMs: create.ms,
          runningToReadyMs: Math.round((result.timing.readyAt - result.timing.runningAt) * 1000),
          submitToReadyMs: Math.round((result.timing.readyAt - result.timing.submittedAt) * 1000),
          adoptMs: again.ms,
          deleteMs: 0,
        };
      } finally {
        const del = await runRemote(c.connection, c.delete);
        expectOk(del, `${name} delete`);
        if (timings[name]) timings[name].deleteMs = del.ms;
      }
      expect(await runRemote(c.connection, "squeue -h -o %i").then((r) => r.stdout.trim())).toBe("");
      await expectNothingLeftOnNodes(env);
      const twice = await runRemote(c.connection, c.delete);
      expectOk(twice, `${stack} delete of a job already gone`);
      expect(twice.stderr).toContain("nothing to cancel");
    },
  );

  // The second island starts while the first serves: its node cleanup must leave the first job's
  // processes alone (the real vllm-router titles itself vllm::router, and the test cluster's nodes
  // share one process table; CI of 4e6c2bd lost a router that way when the two raced).
  it("two islands: the second job starts while the first serves, each behind its own router; delete cancels both", async () => {
    const { commands, planned } = await capture("multi-replica", { "deployment.num_infer_replicas": 2 }, "two-islands");
    expect(commands.map((c) => c.name)).toEqual(["two-islands-i0-sbatch", "two-islands-i1-sbatch"]);
    const creates: RemoteRun[] = [];
    for (const c of commands) creates.push(await runRemote(c.connection, c.create, c.stdin));
    try {
      creates.forEach((r, i) => expectOk(r, `island ${i} create`));
      const results = creates.map((r) => parseIslandResult(r.stdout) as RunningIsland);
      expect(results.map((r) => r.jobName)).toEqual(["multi-replica-two-islands-i0", "multi-replica-two-islands-i1"]);
      expect(new Set(results.flatMap((r) => r.nodes.map((n) => n.host))).size).toBe(4);
      expect(results.map((r) => r.roles)).toEqual(planned.islands.map((i: any) => i.roles));
      for (const r of results) await sendTraffic(r);
    } finally {
      for (const c of commands) expectOk(await runRemote(c.connection, c.delete), `${c.name} delete`);
    }
    expect((await runRemote(commands[0].connection, "squeue -h -o %i")).stdout.trim()).toBe("");
  });

  it("credentials: 0600 files beside the job; engines demand the key (through the router too); no value in any script, log or output; destroy removes them", async () => {
    const apiKey = "sk-e2e-$(touch /tmp/e2e-canary)-'q\"-9f3a";
    const hfToken = "hf_e2e_token_51d0";
    const { commands } = await capture("single-node", {}, "creds", { apiKey, hfToken });
    expect(commands.map((c) => c.name)).toEqual(["creds-i0-secrets", "creds-i0-sbatch"]);
    const [secrets, job] = commands;
    const dir = "/tmp/fleet-e2e/creds/island-0";
    const wrote = await runRemote(secrets.connection, secrets.create, secrets.stdin);
    expectOk(wrote, "write the secret files");
    const create = await runRemote(job.connection, job.create, job.stdin);
    let deleted: RemoteRun[];
    try {
      expectOk(create, "create with credentials");
      const result = parseIslandResult(create.stdout) as RunningIsland;
      const modes = await runRemote(conn(), `stat -c '%a %n' ${dir}/secrets ${dir}/secrets/*`);
      expect(modes.stdout.trim().split("\n")).toEqual([
        `700 ${dir}/secrets`,
        `600 ${dir}/secrets/api_key`,
        `600 ${dir}/secrets/hf_token`,
      ]);
      // The engine enforces the key; the router forwards the caller's header and adds none.
      const engine = result.adminUrls[0];
      expect((await fetch(`${engine}/models`)).status).toBe(401);
      expect((await fetch(`${result.routerUrl}/models`)).status).toBe(401);
      const authorized = await fetch(`${result.routerUrl}/models`, { headers: { authorization: `Bearer ${apiKey}` } });
      expect(authorized.status).toBe(200);
      const client = new OpenAI({ baseURL: result.routerUrl!, apiKey, maxRetries: 0, timeout: 20_000 });
      expect(
        (await client.completions.create({ model: result.model, prompt: "hello", max_tokens: 4 })).choices[0].text
          .length,
      ).toBeGreaterThan(0);
      // The router passes a path it does not know to an engine, and vLLM's --api-key guards only
      // /v1, /v2, /inference and /cohere (vllm/entrypoints/serve/middleware/authenticate.py,
      // GUARDED_PREFIX): an admin route answers without the key, through the router too.
      expect((await fetch(`${new URL(result.routerUrl!).origin}/update_weights`, { method: "POST" })).status).toBe(200);
      // The engine process got --api-key and HF_TOKEN from the files (same host: /proc is shared).
      const out = (await runRemote(conn(), `cat ${dir}/slurm-${result.jobId}.out`)).stdout;
      const pid = /i0-replica0-n0 started \(pid (\d+)\)/.exec(out)![1];
      const argv = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      expect(argv[argv.indexOf("--api-key") + 1]).toBe(apiKey);
      expect(fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0")).toContain(`HF_TOKEN=${hfToken}`);
    } finally {
      deleted = [await runRemote(job.connection, job.delete), await runRemote(secrets.connection, secrets.delete)];
      deleted.forEach((d, k) => expectOk(d, `delete ${k}`));
    }
    expect(fs.existsSync("/tmp/e2e-canary")).toBe(false);
    // The search: every file the fleet left (scripts, logs, endpoints.json, batch output), every
    // command line and every output of create and delete. The secrets directory itself is gone.
    expect((await runRemote(conn(), `test -e ${dir}/secrets; echo $?`)).stdout.trim()).toBe("1");
    const files = (await runRemote(conn(), `find ${dir} -type f | sort`)).stdout.trim().split("\n");
    expect(files.length).toBeGreaterThan(3);
    const everything = [
      (
        await runRemote(
          conn(),
          `cat ${dir}/*.sbatch ${dir}/slurm-*.out ${dir}/endpoints.json 2>/dev/null; find ${dir} -type f -exec cat {} +`,
        )
      ).stdout,
      job.create,
      job.stdin,
      job.delete,
      secrets.create,
      secrets.delete,
      wrote.stdout,
      wrote.stderr,
      create.stdout,
      create.stderr,
      ...deleted.flatMap((d) => [d.stdout, d.stderr]),
    ].join("\n");
    for (const value of [apiKey, hfToken, "e2e-canary", "hf_e2e_token"])
      expect(everything.includes(value), `${value} leaked`).toBe(false);
    expect(await runRemote(conn(), "squeue -h -o %i").then((r) => r.stdout.trim())).toBe("");
  });

  it("two Pulumi stacks writing one output_dir: the second create is refused, and its delete leaves the first's endpoints.json", async () => {
    const shared = { output_dir: "/tmp/fleet-e2e/shared-dir" };
    const a = (await capture("single-node", shared, "shared-a")).commands[0];
    const b = (await capture("single-node", shared, "shared-b")).commands[0];
    const first = await runRemote(a.connection, a.create, a.stdin);
    try {
      expectOk(first, "first stack's create");
      const second = await runRemote(b.connection, b.create, b.stdin);
      expect(second.code).toBe(1);
      expect(second.stderr).toContain(
        "/tmp/fleet-e2e/shared-dir/island-0 is the folder of another fleet (job single-node-shared-a-i0): give this stack its own output_dir",
      );
      expect((await runRemote(b.connection, "squeue -h -o %j")).stdout.trim()).toBe("single-node-shared-a-i0");
      expectOk(await runRemote(b.connection, b.delete), "second stack's delete");
      const left = await runRemote(a.connection, "cat /tmp/fleet-e2e/shared-dir/island-0/endpoints.json");
      expect(JSON.parse(left.stdout)).toEqual(JSON.parse(first.stdout.trim()));
    } finally {
      expectOk(await runRemote(a.connection, a.delete), "first stack's delete");
      await runRemote(a.connection, "rm -rf /tmp/fleet-e2e/shared-dir");
    }
  });

  it("dry run writes the script and asks sbatch --test-only; nothing is queued", async () => {
    const { commands } = await capture("single-node", { dry_run: true }, "dry");
    const [c] = commands;
    const create = await runRemote(c.connection, c.create, c.stdin);
    expectOk(create, "dry-run create");
    const result = parseIslandResult(create.stdout);
    expect(result).toMatchObject({ dryRun: true, script: "/tmp/fleet-e2e/dry/island-0/single-node-dry-i0.sbatch" });
    expect(create.stderr).toMatch(/sbatch: Job \d+ to start at/);
    expect(
      (await runRemote(c.connection, `head -c 11 ${result.dryRun ? result.script : ""}; squeue -h -o %i`)).stdout,
    ).toBe("#!/bin/bash");
  });

  it("a create that finds this island's name on a job with another script cancels it first: never two jobs", async () => {
    const old = (await capture("single-node", {}, "stale")).commands[0];
    const first = await runRemote(old.connection, old.create, old.stdin);
    expectOk(first, "first create");
    const oldId = (parseIslandResult(first.stdout) as RunningIsland).jobId;
    // Same island, changed stack file (state lost, so no delete ran): the new create must replace it.
    const changed = (await capture("single-node", { "server.port": 8001 }, "stale")).commands[0];
    expect(changed.delete).toBe(old.delete);
    const second = await runRemote(changed.connection, changed.create, changed.stdin);
    try {
      expectOk(second, "create with a changed script");
      const now = parseIslandResult(second.stdout) as RunningIsland;
      expect(second.stderr).toContain(
        `cancelling job ${oldId} (RUNNING): it has this island's name but another script`,
      );
      expect(now.jobId).not.toBe(oldId);
      expect(now.routerUrl).toMatch(/:8001\/v1$/);
      expect((await squeueByName(changed.connection, now.jobName)).split("\n")).toEqual([`${now.jobId} RUNNING`]);
    } finally {
      expectOk(await runRemote(changed.connection, changed.delete), "delete");
    }
  });
});
