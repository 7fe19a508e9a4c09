/**
 * What fleets of the REAL vLLM (CPU build) behind the REAL vllm-router must do for a trainer,
 * checked on a running island by tests that deploy one for something else as well (a real-vLLM
 * start costs about a minute of the suite's 2 cores): a single engine under the real Pulumi engine
 * (pulumi-engine.e2e.test.ts), two for the Python client (python-client.e2e.test.ts).
 */
import OpenAI from "openai";
import { expect } from "vitest";
import { parseScrape } from "../../components/ops/metrics";
import { completionWithTokenIds } from "./openai-checks";
import { COMPILE_CACHE, type PythonEnv } from "./real-parts";

/**
 * Completions and chat with logprobs and token ids through the router; every admin URL's /health,
 * /models, /pause and /resume (VLLM_SERVER_DEV_MODE=1); and the compile cache named below
 * COMPILE_CACHE for this vLLM, as `logs` (the job's output and node logs) show.
 */
export async function checkRealSingleNode(
  island: { routerUrl: string | null; adminUrls: string[] },
  env: PythonEnv,
  logs: string,
) {
  const model = env.FLEET_TINY_MODEL;
  const client = new OpenAI({ baseURL: island.routerUrl!, apiKey: "unused", maxRetries: 0, timeout: 120_000 });
  const completion = await completionWithTokenIds(client, model, 6);
  expect(completion.model).toBe(model);
  expect(completion.choices[0].logprobs!.token_logprobs!.every((l) => typeof l === "number" && l <= 0)).toBe(true);

  const chat = await client.chat.completions.create({
    model,
    messages: [{ role: "user", content: "say hi" }],
    max_tokens: 5,
    logprobs: true,
    top_logprobs: 2,
    ...({ return_token_ids: true } as object),
  });
  expect(chat.choices[0].logprobs?.content?.length).toBe(5);
  expect((chat.choices[0] as unknown as { token_ids?: number[] }).token_ids).toHaveLength(5);

  // vLLM serves /pause, /resume and /update_weights only in its dev mode (vllm/entrypoints/
  // launchers/api_server/routers.py); the trainer contract needs them on every admin URL.
  for (const url of island.adminUrls) {
    const origin = new URL(url).origin;
    expect((await fetch(`${origin}/health`)).status).toBe(200);
    const models = (await (await fetch(`${url}/models`)).json()) as { data: { id: string }[] };
    expect(models.data.map((m) => m.id)).toEqual([model]);
    expect(await (await fetch(`${origin}/pause`, { method: "POST" })).json()).toEqual({ status: "paused" });
    expect(await (await fetch(`${origin}/is_paused`)).json()).toEqual({ is_paused: true });
    expect((await fetch(`${origin}/resume`, { method: "POST" })).status).toBe(200);
    expect(await (await fetch(`${origin}/is_paused`)).json()).toEqual({ is_paused: false });
  }

  // The compile cache (issue 32): the job names the folder for this vLLM version below
  // slurm.cache_dir (the suite's shared one), and vLLM read or wrote its AOT artifact there (on a
  // warm start the line says "warm: N entries").
  const cache = /\[fleet\] compile cache: (\S+) \((empty|warm: \d+ entries)\)/.exec(logs);
  expect(cache?.[1].startsWith(`${COMPILE_CACHE}/`), cache?.[1]).toBe(true);
  expect(cache?.[1]).toMatch(/\/vllm-[^/]+\/tp1-dp1$/);
  expect(cache![1]).toContain(`/vllm-${env.FLEET_PYENV_VLLM}`);
  expect(logs).toContain(`${cache![1]}/vllm/torch_compile_cache/torch_aot_compile/`);
}

/** Requests each engine of `adminUrls` has served, from its own /metrics. */
async function engineRequests(adminUrls: string[]): Promise<number[]> {
  return Promise.all(
    adminUrls.map(
      async (url) => parseScrape(await (await fetch(`${new URL(url).origin}/metrics`)).text(), Date.now()).requests,
    ),
  );
}

/**
 * Two real engines behind the real router (consistent hash): one X-Session-ID sticks to one engine,
 * sessions spread over both (counted on the engines' own /metrics); and a /pause sent to the router
 * reaches one engine only, the hazard docs/trainer.md warns of.
 */
export async function checkRealReplicas(
  island: { routerUrl: string | null; adminUrls: string[]; model: string },
  apiKey = "unused",
) {
  expect(island.adminUrls).toHaveLength(2);
  const client = new OpenAI({ baseURL: island.routerUrl!, apiKey, maxRetries: 0, timeout: 120_000 });
  const send = (session: string, i: number) =>
    client.completions.create(
      { model: island.model, prompt: `rollout ${i} of ${session}`, max_tokens: 2 },
      { headers: { "X-Session-ID": session } },
    );
  // One session: every request lands on the same engine.
  const before = await engineRequests(island.adminUrls);
  for (let i = 0; i < 6; i++) await send("session-sticky", i);
  const after = await engineRequests(island.adminUrls);
  const delta = after.map((n, k) => n - before[k]);
  expect(delta.sort(), `per-engine requests for one session: ${delta}`).toEqual([0, 6]);
  // Many sessions: both engines get some.
  const start = await engineRequests(island.adminUrls);
  for (let s = 0; s < 16; s++) await send(`session-${s}`, 0);
  const end = await engineRequests(island.adminUrls);
  const spread = end.map((n, k) => n - start[k]);
  expect(spread.reduce((a, b) => a + b, 0)).toBe(16);
  expect(Math.min(...spread), `16 sessions over two engines: ${spread}`).toBeGreaterThan(0);

  // vllm-router 0.1.17 proxies any path it does not know to one worker: a trainer's /pause sent to
  // the router URL pauses one engine of the island and answers 200. Admin calls must go to every
  // admin URL (docs/trainer.md); this pins the hazard so a router upgrade that changes it shows.
  const auth = { authorization: `Bearer ${apiKey}` };
  const paused = async () =>
    Promise.all(
      island.adminUrls.map(
        async (url) =>
          (
            (await (await fetch(`${new URL(url).origin}/is_paused`, { headers: auth })).json()) as {
              is_paused: boolean;
            }
          ).is_paused,
      ),
    );
  expect(await paused()).toEqual([false, false]);
  const viaRouter = await fetch(`${new URL(island.routerUrl!).origin}/pause`, { method: "POST", headers: auth });
  expect(viaRouter.status).toBe(200);
  expect((await paused()).filter(Boolean)).toHaveLength(1);
  for (const url of island.adminUrls) await fetch(`${new URL(url).origin}/resume`, { method: "POST", headers: auth });
  expect(await paused()).toEqual([false, false]);
}
