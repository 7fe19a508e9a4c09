/**
 * The end-to-end suite with real parts (issue 19): vLLM's CPU build (`vllm serve` from the pinned
 * venv of test/e2e/python-env.sh) serving a tiny random-weight model built here, behind the real
 * vllm-router, on the real SLURM test cluster, driven by the exact create/delete strings of the
 * Pulumi program. Shapes whose engines need GPUs (NIXL P/D, DeepEP expert parallelism, llm-d's EPP)
 * keep stand-in engines in slurm.e2e.test.ts; the Mooncake row below runs the real Mooncake master,
 * metadata server and client beside stand-in engines. Every test name says which parts are real.
 */
import * as fs from "node:fs";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseIslandResult, type RunningIsland } from "../../components/slurm";
import { parseScrape } from "../../components/ops/metrics";
import { capture, env as clusterEnv, expectOk, login, privateKey } from "./cluster";
import { COMPILE_CACHE, launcherDir, leftOnNodes, pythonEnv, type Program, type PythonEnv } from "./real-parts";
import { runRemote, type Connection } from "./ssh";

const conn = (): Connection => ({ ...login, privateKey });
let env: PythonEnv;
const timings: Record<string, { createMs: number; runningToReadyMs: number; deleteMs: number }> = {};

/**
 * The overrides that put a stack on real parts: the launcher folder, the tiny model, one CPU
 * "GPU" per engine, a small fixed KV cache (vLLM's CPU build otherwise sizes it from host memory),
 * and a ready bound for engines that take a minute or two to start on 2 cores.
 */
function realOverrides(name: string, real: Program[], extra: Record<string, unknown>, prime = false) {
  const { dir } = launcherDir(env, name, real);
  const ours = prime ? "vllm_fleet.slurm" : "slurm";
  return {
    [`${ours}.launcher`]: { type: "vllm", bin_dir: dir },
    [`${ours}.ready_timeout`]: 900,
    [`${ours}.cache_dir`]: COMPILE_CACHE,
    ...extra,
  };
}

async function engineRequests(island: RunningIsland): Promise<number[]> {
  return Promise.all(
    island.adminUrls.map(async (url) => {
      const text = await (await fetch(`${new URL(url).origin}/metrics`)).text();
      return parseScrape(text, Date.now()).requests;
    }),
  );
}

/** Runs create, hands the running island to `body`, then deletes and checks nothing is left. */
async function deployed(
  name: string,
  stack: string,
  overrides: Record<string, unknown>,
  body: (island: RunningIsland) => Promise<void>,
) {
  const { commands, planned } = await capture(stack, overrides, name);
  expect(commands).toHaveLength(1);
  const c = commands[0];
  const create = await runRemote(c.connection, c.create, c.stdin);
  let island: RunningIsland | undefined;
  try {
    expectOk(create, `${name} create`);
    const result = parseIslandResult(create.stdout);
    if (result.dryRun) throw new Error("expected a submitted job");
    island = result;
    expect(island.roles).toEqual(planned.islands[0].roles);
    await body(island);
    const again = await runRemote(c.connection, c.create, c.stdin);
    expectOk(again, `${name} second create`);
    expect(parseIslandResult(again.stdout)).toMatchObject({ adopted: true, jobId: island.jobId });
    timings[name] = {
      createMs: create.ms,
      runningToReadyMs: Math.round((island.timing.readyAt - island.timing.runningAt) * 1000),
      deleteMs: 0,
    };
  } finally {
    const del = await runRemote(c.connection, c.delete);
    expectOk(del, `${name} delete`);
    if (timings[name]) timings[name].deleteMs = del.ms;
  }
  expect((await runRemote(conn(), "squeue -h -o %i")).stdout.trim()).toBe("");
  // No process of the job outlives it on any node (each node's namespace holds slurmd alone).
  expect(await leftOnNodes(clusterEnv)).toEqual([]);
}

describe("SLURM end to end with real parts (vLLM CPU build, vllm-router, Mooncake from PyPI)", () => {
  beforeAll(async () => {
    env = pythonEnv();
    const check = await runRemote(conn(), "squeue -h -o %i | wc -l");
    expect(check.stdout.trim(), "the test cluster must start with an empty queue").toBe("0");
  }, 40 * 60_000);

  afterAll(() => {
    const rows = Object.entries(timings).map(([stack, t]) => ({ stack, ...t }));
    console.log(`real parts (vllm ${env?.FLEET_PYENV_VLLM}):\n${JSON.stringify(rows, null, 1)}`);
    if (process.env.FLEET_E2E_REAL_REPORT)
      fs.writeFileSync(process.env.FLEET_E2E_REAL_REPORT, JSON.stringify({ stacks: rows }, null, 2));
  });

  it(
    "single-node: real vLLM + real vllm-router: completions and chat with logprobs and token ids through the router, " +
      "the engine's /pause and /resume (VLLM_SERVER_DEV_MODE), adoption, delete leaves no job and no process",
    async () => {
      const overrides = realOverrides("single-node-real", ["vllm", "vllm-router"], {
        "model.name": env.FLEET_TINY_MODEL,
        "parallel.tp": 1,
        "vllm_extra.kv_cache_memory_bytes": 256 * 1024 * 1024,
        // vLLM serves /pause, /resume and /update_weights only in its dev mode (vllm/entrypoints/
        // launchers/api_server/routers.py); the trainer contract needs them on every admin URL.
        "env_vars.VLLM_SERVER_DEV_MODE": "1",
      });
      await deployed("single-node-real", "single-node", overrides, async (island) => {
        const client = new OpenAI({ baseURL: island.routerUrl!, apiKey: "unused", maxRetries: 0, timeout: 120_000 });
        const completion = await client.completions.create({
          model: island.model,
          prompt: "the fleet serves",
          max_tokens: 6,
          logprobs: 2,
          ...({ return_token_ids: true } as object),
        });
        expect(completion.model).toBe(island.model);
        const choice = completion.choices[0] as (typeof completion.choices)[0] & { token_ids?: number[] };
        expect(choice.logprobs?.token_logprobs?.length).toBe(6);
        expect(choice.logprobs!.token_logprobs!.every((l) => typeof l === "number" && l <= 0)).toBe(true);
        expect(choice.token_ids).toHaveLength(6);

        const chat = await client.chat.completions.create({
          model: island.model,
          messages: [{ role: "user", content: "say hi" }],
          max_tokens: 5,
          logprobs: true,
          top_logprobs: 2,
          ...({ return_token_ids: true } as object),
        });
        expect(chat.choices[0].logprobs?.content?.length).toBe(5);
        expect((chat.choices[0] as unknown as { token_ids?: number[] }).token_ids).toHaveLength(5);

        for (const url of island.adminUrls) {
          const origin = new URL(url).origin;
          expect((await fetch(`${origin}/health`)).status).toBe(200);
          const models = (await (await fetch(`${url}/models`)).json()) as { data: { id: string }[] };
          expect(models.data.map((m) => m.id)).toEqual([island.model]);
          expect(await (await fetch(`${origin}/pause`, { method: "POST" })).json()).toEqual({ status: "paused" });
          expect(await (await fetch(`${origin}/is_paused`)).json()).toEqual({ is_paused: true });
          expect((await fetch(`${origin}/resume`, { method: "POST" })).status).toBe(200);
          expect(await (await fetch(`${origin}/is_paused`)).json()).toEqual({ is_paused: false });
        }

        // The compile cache (issue 32): the job names the folder for this vLLM version below
        // slurm.cache_dir (the suite's shared one), and vLLM read or wrote its AOT artifact there (on
        // a warm start the line says "warm: N entries").
        const dir = "/tmp/fleet-e2e/single-node-real/island-0";
        const logs = (
          await runRemote(conn(), `cat ${dir}/slurm-${island.jobId}.out ${dir}/logs/job_${island.jobId}_0/node_0/*.log`)
        ).stdout;
        const cache = /\[fleet\] compile cache: (\S+) \((empty|warm: \d+ entries)\)/.exec(logs);
        expect(cache?.[1].startsWith(`${COMPILE_CACHE}/`), cache?.[1]).toBe(true);
        expect(cache?.[1]).toMatch(/\/vllm-[^/]+\/tp1-dp1$/);
        expect(cache![1]).toContain(`/vllm-${env.FLEET_PYENV_VLLM}`);
        expect(logs).toContain(`${cache![1]}/vllm/torch_compile_cache/torch_aot_compile/`);
      });
    },
    40 * 60_000,
  );

  it(
    "multi-replica: two real vLLM engines behind the real vllm-router: one X-Session-ID sticks to one engine, " +
      "sessions spread over both (counted on the engines' own /metrics); a /pause sent to the router reaches one engine only",
    async () => {
      const overrides = realOverrides("multi-replica-real", ["vllm", "vllm-router"], {
        "inference.model": env.FLEET_TINY_MODEL,
        "inference.parallel.tp": 1,
        "inference.parallel.dp": 1,
        "inference.vllm_extra.kv_cache_memory_bytes": 256 * 1024 * 1024,
        "inference.env_vars.VLLM_SERVER_DEV_MODE": "1",
      });
      await deployed("multi-replica-real", "multi-replica", overrides, async (island) => {
        expect(island.adminUrls).toHaveLength(2);
        const client = new OpenAI({ baseURL: island.routerUrl!, apiKey: "unused", maxRetries: 0, timeout: 120_000 });
        const send = (session: string, i: number) =>
          client.completions.create(
            { model: island.model, prompt: `rollout ${i} of ${session}`, max_tokens: 2 },
            { headers: { "X-Session-ID": session } },
          );
        // One session: every request lands on the same engine.
        const before = await engineRequests(island);
        for (let i = 0; i < 6; i++) await send("session-sticky", i);
        const after = await engineRequests(island);
        const delta = after.map((n, k) => n - before[k]);
        expect(delta.sort(), `per-engine requests for one session: ${delta}`).toEqual([0, 6]);
        // Many sessions: both engines get some.
        const start = await engineRequests(island);
        for (let s = 0; s < 16; s++) await send(`session-${s}`, 0);
        const end = await engineRequests(island);
        const spread = end.map((n, k) => n - start[k]);
        expect(spread.reduce((a, b) => a + b, 0)).toBe(16);
        expect(Math.min(...spread), `16 sessions over two engines: ${spread}`).toBeGreaterThan(0);

        // vllm-router 0.1.17 proxies any path it does not know to one worker: a trainer's /pause sent
        // to the router URL pauses one engine of the island and answers 200. Admin calls must go to
        // every admin URL (docs/trainer.md); this pins the hazard so a router upgrade that changes it shows.
        const paused = async () =>
          Promise.all(
            island.adminUrls.map(
              async (url) =>
                ((await (await fetch(`${new URL(url).origin}/is_paused`)).json()) as { is_paused: boolean }).is_paused,
            ),
          );
        expect(await paused()).toEqual([false, false]);
        const viaRouter = await fetch(`${new URL(island.routerUrl!).origin}/pause`, { method: "POST" });
        expect(viaRouter.status).toBe(200);
        expect((await paused()).filter(Boolean)).toHaveLength(1);
        for (const url of island.adminUrls) await fetch(`${new URL(url).origin}/resume`, { method: "POST" });
        expect(await paused()).toEqual([false, false]);
      });
    },
    40 * 60_000,
  );
  it(
    "kv-offload-mooncake: the real Mooncake master (with its HTTP metadata server) and a real mooncake_client on " +
      "every node, from our flags over TCP; stand-in engines (vLLM's MooncakeStoreConnector needs GPU memory) behind the real vllm-router",
    async () => {
      const segment = 256 * 1024 * 1024;
      const overrides = realOverrides(
        "kv-offload-mooncake-real",
        ["vllm-router", "mooncake_master", "mooncake_client", "mooncake_http_metadata_server"],
        {
          // No RDMA NIC here: the store runs over TCP, each client contributing 256 MiB.
          "inference.kv_cache_offload.protocol": "tcp",
          "inference.kv_cache_offload.device_name": "",
          "inference.kv_cache_offload.cpu.num_bytes": segment,
        },
      );
      await deployed("kv-offload-mooncake-real", "kv-offload-mooncake", overrides, async (island) => {
        const head = island.nodes[0].addr;
        // The master's own Prometheus text: one client per node, each contributing its segment.
        const text = await (await fetch(`http://${head}:9003/metrics`)).text();
        const metric = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1]);
        expect(metric("master_active_clients")).toBe(island.nodes.length);
        expect(metric("master_total_capacity_bytes")).toBe(island.nodes.length * segment);
        // The processes serving it are the venv's Mooncake binaries, not stand-ins.
        const ps = (await runRemote(conn(), "pgrep -af 'mooncake_(master|client)' || true")).stdout;
        expect(ps.split("\n").filter((l) => l.includes(env.FLEET_PYENV)).length).toBeGreaterThanOrEqual(
          1 + island.nodes.length,
        );
        const client = new OpenAI({ baseURL: island.routerUrl!, apiKey: "unused", maxRetries: 0, timeout: 60_000 });
        const answer = await client.completions.create({ model: island.model, prompt: "offload", max_tokens: 4 });
        expect(answer.choices[0].text.length).toBeGreaterThan(0);
      });
    },
    40 * 60_000,
  );
});
