/**
 * SGLang on the local target end to end (issues 27 and 29), on this machine with no SLURM: the exact
 * create and delete commands the Pulumi program hands local.Command, run as the provider runs them
 * (test/e2e/local-target.ts), for `engine = "sglang"`:
 *
 * - TEST STAND-IN SGLang engines (test/fixtures/standins/lib/sglang.js, reached through the launcher
 *   folder's `python3` shim for `-m sglang.launch_server`) behind the REAL sglang-router from the
 *   pinned venv (`python3 -m sglang_router.launch_router`, which retitles itself `sglang::router`);
 * - the REAL SGLang server (0.5.23 from the pinned venv, on CPU) behind the REAL sglang-router,
 *   serving the tiny model of test/e2e/real/tiny-model.py.
 *
 * Every test name says which parts are real and which are stand-ins.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseScrape } from "../../components/ops/metrics";
import { drainRpcs } from "../program-harness";
import {
  captureLocal,
  create,
  destroy,
  freshHome,
  killLeftovers,
  type LocalCommand,
  processesUnder,
  running,
} from "./local-target";
import { completionWithTokenIds } from "./openai-checks";
import { launcherDir, pythonEnv, type PythonEnv } from "./real-parts";

afterEach(drainRpcs);
afterEach(killLeftovers);

const timings: Record<string, { createMs: number; runningToReadyMs: number; deleteMs: number }> = {};
afterAll(() => console.log(`local SGLang timings (ms):\n${JSON.stringify(timings, null, 1)}`));

let env: PythonEnv;
beforeAll(() => {
  env = pythonEnv();
}, 40 * 60_000);

/** A local stack file for SGLang in vllm-fleet's standalone layout: `body`, then [local] with the launcher folder. */
function sglangStack(body: string, local: string, binDir: string): string {
  return `engine = "sglang"\n${body.trim()}\n\n[local]\n${local}\n\n[local.launcher]\nbin_dir = ${JSON.stringify(binDir)}\n`;
}

/** The real router: sglang-router retitles its process `sglang::router` (setproctitle). */
const routerProcs = (home: string) => processesUnder(home).filter((p) => / sglang::router/.test(p));

/** Requests each engine counted (sglang:num_requests_total on its own /metrics, as `fleet metrics` reads it). */
async function engineRequests(adminUrls: string[]): Promise<number[]> {
  return Promise.all(
    adminUrls.map(
      async (u) => parseScrape(await (await fetch(`${new URL(u).origin}/metrics`)).text(), Date.now()).requests,
    ),
  );
}

/** create → every engine and the router serve → `body` → a second create adopts → delete → nothing left → delete again succeeds. */
async function upAndDown(
  name: string,
  c: LocalCommand,
  home: string,
  body: (island: ReturnType<typeof running>) => Promise<void>,
  apiKey?: string,
) {
  const first = await create(c, home);
  try {
    const island = running(first, `${name} create`);
    expect(island.adopted).toBe(false);
    expect(island.engine ?? "sglang").toBe("sglang");
    for (const url of island.adminUrls) expect((await fetch(`${new URL(url).origin}/health`)).status).toBe(200);
    const headers: Record<string, string> = apiKey ? { authorization: `Bearer ${apiKey}` } : {};
    const models = (await (await fetch(`${island.routerUrl}/models`, { headers })).json()) as {
      data: { id: string }[];
    };
    expect(models.data.map((m) => m.id)).toContain(island.model);
    // The router on the island's URL is the real sglang-router, one process of this run.
    expect(routerProcs(home), processesUnder(home).join("\n")).toHaveLength(1);
    await body(island);
    const again = running(await create(c, home), `${name} second create`);
    expect(again).toMatchObject({ adopted: true, jobId: island.jobId });
    timings[name] = {
      createMs: first.ms,
      runningToReadyMs: Math.round((island.timing.readyAt - island.timing.runningAt) * 1000),
      deleteMs: 0,
    };
  } finally {
    const del = await destroy(c, home);
    expect(del.code, del.stderr).toBe(0);
    if (timings[name]) timings[name].deleteMs = del.ms;
  }
  // Nothing is left once delete returns (no grace period: the next create may want the ports at once).
  expect(processesUnder(home)).toEqual([]);
  const twice = await destroy(c, home);
  expect(twice.code, twice.stderr).toBe(0);
}

describe("local target, engine = sglang: TEST STAND-IN SGLang engines behind the REAL sglang-router (pinned venv)", () => {
  /** Every program a stand-in but `python3`, which runs the SGLang stand-in for -m sglang.launch_server and the venv's interpreter (the real router) otherwise. */
  const standinStack = (name: string, body: string) =>
    sglangStack(
      `[model]\nname = "Qwen/Qwen3-0.6B"\n[parallel]\ntp = 1\n${body}`,
      `gpus = [0, 1]\nready_timeout = 120`,
      launcherDir(env, `local-sglang-${name}`, []).dir,
    );

  it("single node: one stand-in SGLang engine behind the real sglang-router: completions and chat through the openai client, admin routes at the engine's root, adoption, delete leaves no process", async () => {
    const home = freshHome("sglang-standin-single");
    const { commands, planned } = await captureLocal(standinStack("single", `[deployment]\ngpus_per_node = 1`));
    expect(planned.target).toBe("local");
    expect(commands).toHaveLength(1);
    await upAndDown("stand-in single node", commands[0], home, async (island) => {
      expect(island.adminUrls).toEqual(["http://127.0.0.1:8100"]);
      // The engine is the stand-in (it says so), the router the real one.
      expect(processesUnder(home).some((p) => /node \S+sglang-launch-server /.test(p))).toBe(true);
      const info = (await (await fetch(`${island.adminUrls[0]}/get_server_info`)).json()) as Record<string, unknown>;
      expect(info.standin).toBe(true);
      const client = new OpenAI({ baseURL: island.routerUrl!, apiKey: "unused", maxRetries: 0, timeout: 60_000 });
      await completionWithTokenIds(client, island.model);
      const chat = await client.chat.completions.create({
        model: island.model,
        messages: [{ role: "user", content: "hello" }],
        max_tokens: 4,
      });
      expect(chat.choices[0].message.role).toBe("assistant");
      const flush = await fetch(`${island.adminUrls[0]}/flush_cache`, { method: "POST" });
      expect(flush.status).toBe(200);
    });
  });

  // round_robin: with the planned cache_aware policy, sglang-router 0.3.2 sent 8 distinct chats to one engine.
  it("multi-replica: two stand-in SGLang engines behind the real sglang-router (round_robin) on one machine: chats through the router reach both", async () => {
    const home = freshHome("sglang-standin-two");
    const { commands } = await captureLocal(
      standinStack(
        "two",
        `[deployment]\ntype = "multi_node"\nnum_nodes = 2\ngpus_per_node = 1\n[deployment.router]\ntype = "sglang-router"\npolicy = "round_robin"`,
      ),
    );
    await upAndDown("stand-in multi-replica", commands[0], home, async (island) => {
      expect(island.adminUrls).toEqual(["http://127.0.0.1:8100", "http://127.0.0.1:8200"]);
      const before = await engineRequests(island.adminUrls);
      const client = new OpenAI({ baseURL: island.routerUrl!, apiKey: "unused", maxRetries: 0, timeout: 60_000 });
      for (let s = 0; s < 8; s++) {
        const chat = await client.chat.completions.create(
          { model: island.model, messages: [{ role: "user", content: `${s} `.repeat(20 + s) }], max_tokens: 2 },
          { headers: { "X-Session-ID": `session-${s}` } },
        );
        expect(chat.choices).toHaveLength(1);
      }
      const after = await engineRequests(island.adminUrls);
      const served = after.map((n, i) => n - before[i]);
      expect(served.reduce((a, b) => a + b, 0)).toBe(8);
      expect(Math.min(...served), `8 prompts over two engines: ${served}`).toBeGreaterThan(0);
    });
  });

  it("credentials: the API key reaches the stand-in SGLang engines and the real sglang-router, which demand it; probes and the router's worker checks authenticate", async () => {
    const home = freshHome("sglang-standin-key");
    // Quotes, a command substitution and a backslash: the key goes through bash and a YAML file.
    const key = "sk-sglang $(touch /tmp/pwned-sglang) 'quote'' \" `id` \\n";
    const { commands } = await captureLocal(
      standinStack("key", `[deployment]\ntype = "multi_node"\nnum_nodes = 2\ngpus_per_node = 1`),
      { secrets: { apiKey: key } },
    );
    const c = commands[0];
    expect(c.stdin + c.create + c.delete).not.toContain(key);
    await upAndDown(
      "stand-in credentials",
      c,
      home,
      async (island) => {
        const dir = path.join(home, "vllm-fleet", "local-dev", "island-0", "secrets");
        expect(fs.statSync(path.join(dir, "api_key")).mode & 0o777).toBe(0o600);
        // Each SGLang engine reads it from its own 0600 config file (--config), not its command line.
        for (const e of island.engines) expect(fs.statSync(path.join(dir, `${e.id}.yaml`)).mode & 0o777).toBe(0o600);
        // The engine demands the key on every API route; sglang-router on the inference routes (its
        // own /v1/models is open, as 0.3.2 serves it).
        const body = JSON.stringify({
          model: island.model,
          messages: [{ role: "user", content: "hi" }],
          max_tokens: 2,
        });
        for (const url of [island.routerUrl!, `${island.adminUrls[0]}/v1`]) {
          const chat = (authorization?: string) =>
            fetch(`${url}/chat/completions`, {
              method: "POST",
              headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
              body,
            });
          expect((await chat()).status, url).toBe(401);
          expect((await chat("Bearer wrong")).status, url).toBe(401);
          expect((await chat(`Bearer ${key}`)).status, url).toBe(200);
        }
        expect((await fetch(`${island.adminUrls[0]}/v1/models`)).status).toBe(401);
        const client = new OpenAI({ baseURL: island.routerUrl!, apiKey: key, maxRetries: 0, timeout: 60_000 });
        const chat = await client.chat.completions.create({
          model: island.model,
          messages: [{ role: "user", content: "hi" }],
          max_tokens: 2,
        });
        expect(chat.choices).toHaveLength(1);
        // Where the key is visible: every process's command line, as any user of the machine reads it.
        const shown = processesUnder(home).filter((p) => p.includes(key));
        console.log(
          `API key on a command line: ${shown.length ? shown.map((p) => p.slice(0, 120)).join(" | ") : "none"}`,
        );
        expect(shown).toEqual([]);
      },
      key,
    );
    expect(fs.existsSync(path.join(home, "vllm-fleet", "local-dev", "island-0", "secrets"))).toBe(false);
    expect(fs.existsSync("/tmp/pwned-sglang")).toBe(false);
  });
});

describe("local target, engine = sglang: the REAL SGLang server (0.5.23, CPU) behind the REAL sglang-router, both from the pinned venv", () => {
  /**
   * A launcher folder whose `python3` is the pinned venv's interpreter, nothing else: the fleet's
   * `python3 -m sglang.launch_server` is the real SGLang server and `python3 -m
   * sglang_router.launch_router` the real router (no shim, no stand-in).
   */
  const realDir = (name: string) => {
    const dir = path.join("/tmp", "fleet-e2e-bin", name);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    const python = path.join(env.FLEET_PYENV, "bin", "python3");
    if (!fs.existsSync(python)) throw new Error(`${python} is missing`);
    fs.writeFileSync(
      path.join(dir, "python3"),
      `#!/bin/sh\n# the pinned venv's python3 (real SGLang, real sglang-router)\nexec '${python}' "$@"\n`,
      {
        mode: 0o755,
      },
    );
    return dir;
  };

  /**
   * What SGLang needs to serve the tiny model on this machine's CPU:
   * - device = "cpu": SGLang's default device is cuda, and there is no GPU;
   * - max_total_tokens = 8192: a fixed KV pool; otherwise SGLang sizes it as mem_fraction_static
   *   (the planner's 0.728) of the host's memory, gigabytes for a model of a few MB;
   * - attention_backend = "torch_native": with device = "cpu" on x86 SGLang picks intel_amx, whose
   *   kernels are sgl-kernel's CPU build, which the pinned venv lacks (sglang is installed there
   *   --no-deps: test/e2e/python/requirements.in); torch_native is plain PyTorch (and SGLang then
   *   disables CUDA graphs by itself). The sampling backend is pytorch on CPU without being asked.
   */
  const REAL_SGLANG_EXTRA = `[sglang_extra]\ndevice = "cpu"\nmax_total_tokens = 8192\nattention_backend = "torch_native"`;

  it(
    "single node: real SGLang (CPU) behind the real sglang-router, with an API key: completions with token ids and logprobs and a chat through the openai client, /get_server_info and /flush_cache at the engine's root, adoption, delete leaves no process",
    async () => {
      const home = freshHome("sglang-real-single");
      const stack = sglangStack(
        [
          `[model]\nname = ${JSON.stringify(env.FLEET_TINY_MODEL)}`,
          `[parallel]\ntp = 1`,
          `[deployment]\ngpus_per_node = 1`,
          REAL_SGLANG_EXTRA,
        ].join("\n"),
        `device = "cpu"\nready_timeout = 900`,
        realDir("local-sglang-real"),
      );
      // An API key: the real engine must read it from its --config file (nothing on its command line).
      const key = "sk-real-sglang 'quoted'' \" $(id)";
      const { commands } = await captureLocal(stack, { secrets: { apiKey: key } });
      const auth = { authorization: `Bearer ${key}` };
      await upAndDown(
        "real SGLang single node",
        commands[0],
        home,
        async (island) => {
          const root = island.adminUrls[0];
          expect(root).toBe("http://127.0.0.1:8100");
          expect(processesUnder(home).filter((p) => p.includes(key))).toEqual([]);
          expect((await fetch(`${root}/v1/models`)).status).toBe(401);
          expect((await fetch(`${root}/v1/models`, { headers: auth })).status).toBe(200);
          // The engine is the real one: no stand-in answers, and SGLang names its version.
          expect(processesUnder(home).some((p) => p.includes("sglang-launch-server"))).toBe(false);
          const info = (await (await fetch(`${root}/get_server_info`, { headers: auth })).json()) as Record<
            string,
            unknown
          >;
          expect(info.standin).toBeUndefined();
          expect(info.version).toBe("0.5.23");
          expect(info.device).toBe("cpu");
          expect(info.max_total_num_tokens).toBeLessThanOrEqual(8192);
          const client = new OpenAI({ baseURL: island.routerUrl!, apiKey: key, maxRetries: 0, timeout: 120_000 });
          const completion = await client.completions.create({
            model: island.model,
            prompt: "the fleet serves",
            max_tokens: 5,
            logprobs: 1,
            ...({ return_token_ids: true, ignore_eos: true } as object),
          });
          const choice = completion.choices[0] as unknown as { token_ids?: number[]; prompt_token_ids?: number[] };
          console.log(`real SGLang completion: ${JSON.stringify(completion).slice(0, 1500)}`);
          expect(choice.token_ids).toHaveLength(5);
          expect(completion.choices[0].logprobs?.token_logprobs?.length).toBe(5);
          const chat = await client.chat.completions.create({
            model: island.model,
            messages: [{ role: "user", content: "hello" }],
            max_tokens: 4,
          });
          expect(chat.choices[0].message.role).toBe("assistant");
          expect(chat.usage?.completion_tokens).toBeGreaterThan(0);
          expect((await fetch(`${root}/flush_cache`, { method: "POST" })).status).toBe(401);
          const flush = await fetch(`${root}/flush_cache`, { method: "POST", headers: auth });
          expect(flush.status, await flush.text()).toBe(200);
        },
        key,
      );
    },
    20 * 60_000,
  );
});
