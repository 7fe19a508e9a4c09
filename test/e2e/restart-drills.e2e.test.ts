/**
 * Restart drills (issue 41) on the local target: the exact create and delete commands `pulumi up`
 * hands local.Command, then real faults (SIGKILL of an engine under steady traffic through the
 * router). Every test name says which parts are real: the router is the REAL vllm-router or the REAL
 * sglang-router from the pinned venv; engines are STAND-INs (test/fixtures/standins) or the REAL
 * vLLM CPU build.
 * Each drill prints its failed-request share and recovery time (docs/benchmarks.md).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { RunningIsland } from "../../components/host/island-result";
import { drainRpcs } from "../program-harness";
import { COMPILE_CACHE, launcherDir, pythonEnv, realVllmVersion, type PythonEnv } from "./real-parts";
import { completionWithTokenIds } from "./openai-checks";
import { captureLocal, create, destroy, freshHome, killLeftovers, leftUnder, running } from "./local-target";
import {
  clientUpdateWeights,
  healthy,
  killAndListedServing,
  killUnderTraffic,
  listed,
  OVERHEAD_BOUND_MS,
  processesWith,
  steadyTraffic,
  until,
} from "./restart-drill";

const report: Record<string, unknown> = {};
afterAll(() => console.log(`restart drills (local):\n${JSON.stringify(report, null, 1)}`));

afterEach(drainRpcs);
afterEach(killLeftovers);

/**
 * create, `body` with the running island (and `again`, a second create, which must adopt it),
 * delete; nothing of the run is left.
 */
async function upRunDown(
  home: string,
  text: string,
  body: (island: RunningIsland, again: () => Promise<RunningIsland>) => Promise<void>,
) {
  const { commands } = await captureLocal(text);
  const c = commands[0];
  try {
    await body(running(await create(c, home), "create"), async () => running(await create(c, home), "second create"));
  } finally {
    expect((await destroy(c, home)).code).toBe(0);
  }
  expect(await leftUnder(home)).toEqual([]);
}

/**
 * The drill on the engine of node 1 (port 8200), reported under `label`, with its goals: no request
 * fails once the router has seen it down, and it serves again within its own start + OVERHEAD_BOUND_MS.
 */
async function drillOn8200(home: string, island: RunningIsland, boundMs: number, label: string) {
  const drill = await killUnderTraffic(
    island.routerUrl!,
    island.model,
    "http://127.0.0.1:8200",
    engineOn(home, 8200),
    boundMs,
  );
  report[label] = drill;
  expect(drill.failedAfterRouterSawItDown, JSON.stringify(drill)).toBe(0);
  expect(drill.overheadMs, JSON.stringify(drill)).toBeLessThan(OVERHEAD_BOUND_MS);
}

const version = async (port: number) =>
  ((await (await fetch(`http://127.0.0.1:${port}/weight_info`)).json()) as { weight_version: string }).weight_version;
const setVersion = (port: number, v: string) =>
  fetch(`http://127.0.0.1:${port}/update_weight_version`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ new_version: v }),
  });

/**
 * The weights drill on node 1's engine (port 8200; VLLM_SERVER_DEV_MODE=1): both engines labelled
 * v2 as Fleet.update_weights labels them, SIGKILL, the restarted one serves "default" and is never
 * listed while it does (the router log says why), then the update reaches it and it is listed.
 */
async function weightGateOn8200(home: string, island: RunningIsland, boundMs: number, label: string) {
  for (const port of [8100, 8200]) expect((await setVersion(port, "v2")).status).toBe(200);
  const url = "http://127.0.0.1:8200";
  const victim = engineOn(home, 8200)();
  expect(victim).toBeDefined();
  process.kill(victim!, "SIGKILL");
  await until(
    "the restarted engine serves",
    async () => engineOn(home, 8200)() !== victim && (await healthy(url)),
    boundMs,
  );
  expect(await version(8200)).toBe("default");
  // Healthy, but with the base weights: never listed while they differ.
  for (let i = 0; i < 15; i++) {
    expect(await listed(island.routerUrl!, url)).toBe(false);
    await new Promise((r) => setTimeout(r, 200));
  }
  const attempt = attemptOf(home);
  expect(fs.readFileSync(path.join(attempt, "node_0", "router.log"), "utf8")).toContain(
    `[fleet] router: ${url} kept out: it serves weight version default, the fleet v2`,
  );
  // The update reaches it: the router lists it again within the follower's poll.
  expect((await setVersion(8200, "v2")).status).toBe(200);
  report[`${label}: listed again after the update reached the restarted engine (ms)`] = await until(
    "listed once its weights are current",
    () => listed(island.routerUrl!, url),
    5_000,
  );
}

/**
 * What a trainer asks of two real engines behind the router: completions with token ids and
 * logprobs, and chat sessions that reach both engines (counted on their own /metrics).
 */
async function servesTrainer(island: RunningIsland) {
  expect(island.adminUrls).toEqual(["http://127.0.0.1:8100/v1", "http://127.0.0.1:8200/v1"]);
  const client = new OpenAI({ baseURL: island.routerUrl!, apiKey: "unused", maxRetries: 0, timeout: 120_000 });
  await completionWithTokenIds(client, island.model);
  const served = async () =>
    Promise.all(
      island.adminUrls.map(async (u) => {
        const text = await (await fetch(`${new URL(u).origin}/metrics`)).text();
        const m = /^vllm:request_success_total\{[^}]*finished_reason="length"[^}]*\} (\d+(?:\.\d+)?)/m.exec(text);
        return m ? Number(m[1]) : 0;
      }),
    );
  const before = await served();
  for (let s = 0; s < 8; s++) {
    const chat = await client.chat.completions.create(
      { model: island.model, messages: [{ role: "user", content: `hi ${s}` }], max_tokens: 2 },
      { headers: { "X-Session-ID": `session-${s}` } },
    );
    expect(chat.choices).toHaveLength(1);
  }
  const per = (await served()).map((n, k) => n - before[k]);
  expect(per.reduce((a, b) => a + b, 0)).toBe(8);
  expect(Math.min(...per), `8 sessions over two engines: ${per}`).toBeGreaterThan(0);
}

/**
 * The catch-up drill on node 1's engine (port 8200) with the REAL Python client: from the island's
 * endpoints.json, update_weights(<the tiny model's folder>, version="v2") reloads both engines and
 * records the update beside endpoints.json; after a SIGKILL, the restarted engine is never listed
 * while it serves other weights, and is listed serving v2 once its follower replayed the record.
 */
async function catchUpOn8200(home: string, island: RunningIsland, model: string, boundMs: number, label: string) {
  const folder = islandOf(home);
  expect(clientUpdateWeights(path.join(folder, "endpoints.json"), model, "v2")).toEqual({
    recorded: [path.join(folder, "weights")],
    catching_up: [],
  });
  for (const port of [8100, 8200]) expect(await version(port)).toBe("v2");
  const url = "http://127.0.0.1:8200";
  const ms = await killAndListedServing(
    island.routerUrl!,
    url,
    engineOn(home, 8200),
    () => version(8200),
    "v2",
    boundMs,
  );
  report[`${label}: killed to listed again serving v2 (ms)`] = ms;
  const attempt = attemptOf(home);
  const routerLog = fs.readFileSync(path.join(attempt, "node_0", "router.log"), "utf8");
  expect(routerLog).toContain(
    `${url} serves weight version default after its restart: replaying the fleet's update to v2`,
  );
  expect(routerLog).toMatch(new RegExp(`replay POST ${url}/collective_rpc: .*\\(HTTP 200\\)`));
}

/** The island folder of the local run under `home` (the stack's defaults: output_dir, stack local-dev). */
const islandOf = (home: string) => path.join(home, "vllm-fleet", "local-dev", "island-0");
/** That run's attempt folder (its logs), from the run record the create wrote. */
const attemptOf = (home: string) =>
  fs
    .readFileSync(path.join(islandOf(home), "run"), "utf8")
    .trim()
    .split(" ")[3];

/** The engine serving `port` of the local run under `home`: its `serve` process. */
const engineOn = (home: string, port: number) => () =>
  processesWith({ HOME: home }, ["serve", "--port", String(port)]).find(
    (pid) => !fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("multiprocessing"),
  );

/** The SGLang stand-in serving `port` of the local run under `home` (exec'ed as node by the python3 shim). */
const sglangOn = (home: string, port: number) => () =>
  processesWith({ HOME: home }, ["--port", String(port)]).find((pid) =>
    fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("sglang-launch-server"),
  );

/** A local stack file: `body`, the [local] table, the launcher folder. */
const stackWith = (body: string, local: string, binDir: string) =>
  `${body.trim()}\n\n[local]\n${local}\n\n[local.launcher]\nbin_dir = ${JSON.stringify(binDir)}\n`;
const TWO_REPLICAS = `[deployment]\ntype = "multi_node"\nnum_nodes = 2\ngpus_per_node = 1`;

// The pinned venv (real routers, the tiny model, the real Python client) every drill here uses.
let env: PythonEnv;
beforeAll(() => {
  env = pythonEnv();
}, 40 * 60_000);

describe("restart drills on the local target (REAL vllm-router)", () => {
  it("two STAND-IN engines behind the REAL vllm-router: SIGKILL of one under steady traffic; it restarts in place, the router takes it out and back; no request fails once the router has seen it down; the restart is on record beside its log", async () => {
    const home = freshHome("restart-standins");
    const { dir } = launcherDir(env, "restart-standins", ["vllm-router"]);
    const text = stackWith(
      `[model]\nname = "Qwen/Qwen3-0.6B"\n[parallel]\ntp = 1\n${TWO_REPLICAS}`,
      "gpus = [0, 1]\nready_timeout = 90",
      dir,
    );
    await upRunDown(home, text, async (island) => {
      await drillOn8200(home, island, 30_000, "local, stand-in engines, real vllm-router");
      // The run kept its other engine and its router: one restart on record, nothing gave up.
      const attempt = attemptOf(home);
      expect(fs.readFileSync(path.join(attempt, "node_1", "i0-replica1-n0.restarts"), "utf8")).toMatch(
        /^1 \d+ i0-replica1-n0 137 1\n$/,
      );
      expect(fs.existsSync(path.join(attempt, "node_0", "i0-replica0-n0.restarts"))).toBe(false);
      // The router's follower (beside it, in its log) took the engine out and told it again.
      const routerLog = fs.readFileSync(path.join(attempt, "node_0", "router.log"), "utf8");
      expect(routerLog).toContain("router remove_worker http://127.0.0.1:8200: Successfully removed worker");
      expect(routerLog).toContain("router add_worker http://127.0.0.1:8200: Successfully added worker");
    });
  }, 120_000);

  it("weights: after an update to v2, a STAND-IN engine killed and restarted serves the base weights ('default'): the router's follower keeps it out, naming the versions, until an update reaches it", async () => {
    const home = freshHome("restart-weights");
    const { dir } = launcherDir(env, "restart-weights", ["vllm-router"]);
    const text = stackWith(
      `[model]\nname = "Qwen/Qwen3-0.6B"\n[parallel]\ntp = 1\n${TWO_REPLICAS}\n[env_vars]\nVLLM_SERVER_DEV_MODE = "1"`,
      "gpus = [0, 1]\nready_timeout = 90",
      dir,
    );
    await upRunDown(home, text, async (island) => {
      await weightGateOn8200(home, island, 30_000, "local, stand-in engines");
    });
  }, 120_000);

  // The local target's one fleet of real engines: first what a trainer asks of it (completions
  // with token ids, chat spread over both engines, adoption), then the drills.
  it(
    "two REAL vLLM engines (CPU) behind the REAL vllm-router on one machine: completions with token ids and logprobs, chat sessions reaching both engines, a second create adopts; SIGKILL of one under steady traffic: it serves again within its own start + 3 s of back-off and re-adding, reusing the compile cache; after the REAL Python client's update_weights(v2), a restarted one replays the recorded update and is listed again only serving v2; delete leaves no process",
    async () => {
      const home = freshHome("restart-real");
      const { dir } = launcherDir(env, "restart-real", ["vllm", "vllm-router"]);
      const text = stackWith(
        `vllm_version = "${realVllmVersion(env)}"\n[model]\nname = ${JSON.stringify(env.FLEET_TINY_MODEL)}\n[parallel]\ntp = 1\n${TWO_REPLICAS}\n[vllm_extra]\nkv_cache_memory_bytes = ${256 * 1024 * 1024}\n[env_vars]\nVLLM_SERVER_DEV_MODE = "1"`,
        `device = "cpu"\nready_timeout = 900\ncache_dir = ${JSON.stringify(COMPILE_CACHE)}`,
        dir,
      );
      await upRunDown(home, text, async (island, again) => {
        await servesTrainer(island);
        expect(await again()).toMatchObject({ adopted: true, jobId: island.jobId });
        await drillOn8200(home, island, 15 * 60_000, "local, real vLLM CPU engines, real vllm-router");
        await catchUpOn8200(
          home,
          island,
          env.FLEET_TINY_MODEL,
          15 * 60_000,
          "local, real vLLM CPU engines, real Python client",
        );
      });
    },
    40 * 60_000,
  );
});

/**
 * Whether vllm-router in P/D mode routes to the worker at `url`: its own GET /workers says
 * `is_healthy` (its health checks; P/D mode has no run-time add or remove, GET /list_workers lists
 * every worker always).
 */
const routedInPd = (routerUrl: string) => async (url: string) => {
  try {
    const { workers } = (await (await fetch(`${new URL(routerUrl).origin}/workers`)).json()) as {
      workers: { url: string; is_healthy: boolean }[];
    };
    return workers.some((w) => w.url === url && w.is_healthy);
  } catch {
    return false;
  }
};

/** vllm-router's health checks in P/D mode (router-plan.ts): a restarted engine is routed again after two good ones. */
const PD_HEALTH_CHECK_MS = 2000;

describe("restart drills on the local target (REAL vllm-router in P/D mode)", () => {
  it("P/D: a STAND-IN prefill and two decodes behind the REAL vllm-router in P/D mode: SIGKILL of a decode under steady traffic, out at the router's next health check, back once it serves; after the REAL Python client's update_weights(v2), a decode killed restarts behind its restart gate (503, /health too) while it reloads v2, and serves no request with other weights", async () => {
    const home = freshHome("restart-vllm-pd");
    const { dir } = launcherDir(env, "restart-vllm-pd", ["vllm-router"]);
    // A reload that takes seconds, as a real checkpoint's does: long enough for the router's health
    // checks to find the restarted decode answering before it serves v2, were it not gated.
    const text = stackWith(
      `[model]\nname = "Qwen/Qwen3-0.6B"\n[parallel]\ntp = 1\n[deployment]\ntype = "disaggregated"\nnum_prefill_nodes = 1\nnum_decode_nodes = 1\nnum_decode_replicas = 2\ngpus_per_node = 1\n[deployment.router]\npolicy = "round_robin"\n[env_vars]\nVLLM_SERVER_DEV_MODE = "1"\nSTANDIN_RELOAD_DELAY_MS = "6000"`,
      "gpus = [0, 1, 2]\nready_timeout = 120",
      dir,
    );
    await upRunDown(home, text, async (island) => {
      expect(island.roles).toEqual(["prefill", "decode", "decode"]);
      const url = new URL(island.adminUrls[2]).origin;
      const port = Number(new URL(url).port);
      const routed = routedInPd(island.routerUrl!);
      const drill = await killUnderTraffic(
        island.routerUrl!,
        island.model,
        url,
        engineOn(home, port),
        30_000,
        undefined,
        routed,
      );
      report["local, stand-in P/D (1 prefill, 2 decodes), real vllm-router in P/D mode: a decode killed"] = drill;
      expect(drill.failedAfterRouterSawItDown, JSON.stringify(drill)).toBe(0);
      // Back after two good health checks: up to two intervals beyond what any other router takes.
      expect(drill.overheadMs, JSON.stringify(drill)).toBeLessThan(OVERHEAD_BOUND_MS + 2 * PD_HEALTH_CHECK_MS);

      // The trainer's update through the real client, recorded beside endpoints.json.
      const folder = islandOf(home);
      expect(clientUpdateWeights(path.join(folder, "endpoints.json"), env.FLEET_TINY_MODEL, "v2")).toEqual({
        recorded: [path.join(folder, "weights")],
        catching_up: [],
      });
      const ports = island.adminUrls.map((u) => Number(new URL(u).port));
      for (const p of ports) expect(await version(p)).toBe("v2");
      const traffic = steadyTraffic(island.routerUrl!, island.model, 50);
      const victim = engineOn(home, port)();
      expect(victim).toBeDefined();
      const killed = Date.now();
      process.kill(victim!, "SIGKILL");
      await until("the router marks the dead decode down", async () => !(await routed(url)), 10_000);
      const seenDown = Date.now();
      const again = () => {
        const pid = engineOn(home, port)();
        return pid !== undefined && pid !== victim;
      };
      // Restarted, answering, and behind its gate while it reloads.
      await until(
        "the restarted decode answers behind its closed gate",
        async () => {
          if (!again()) return false;
          try {
            const r = await fetch(`${url}/health`);
            return r.status === 503 && (await r.text()).includes("restart gate closed");
          } catch {
            return false;
          }
        },
        30_000,
      );
      report["local, P/D, real vllm-router: killed to answering behind its restart gate (ms)"] = Date.now() - killed;
      expect(await routed(url)).toBe(false);
      const back = await until("routed again", () => routed(url), 30_000);
      report["local, P/D, real vllm-router: killed to routed again serving v2 (ms)"] = Date.now() - killed;
      expect(back).toBeGreaterThan(0);
      expect(await version(port)).toBe("v2");
      await new Promise((r) => setTimeout(r, 2000));
      const sent = await traffic.stop();
      // The restarted decode served requests again, every one with v2.
      const state = (await (await fetch(`${url}/standin/state`)).json()) as {
        by_weight_version: Record<string, number>;
      };
      expect(Object.keys(state.by_weight_version)).toEqual(["v2"]);
      expect(state.by_weight_version.v2).toBeGreaterThan(0);
      const gateDrill = {
        requests: sent.length,
        failedBeforeRouterSawItDown: sent.filter((x) => !x.ok && x.t < seenDown).length,
        failedAfterRouterSawItDown: sent.filter((x) => !x.ok && x.t >= seenDown).length,
        routerSawItDownMs: seenDown - killed,
        servedByItAfter: state.by_weight_version,
      };
      report["local, P/D, real vllm-router: requests while a decode restarted behind its gate"] = gateDrill;
      expect(gateDrill.failedAfterRouterSawItDown, JSON.stringify(gateDrill)).toBe(0);
      const log = fs.readFileSync(path.join(attemptOf(home), "supervisor.out"), "utf8");
      expect(log).toContain(`${url}: restart gate open`);
    });
  }, 240_000);
});

describe("restart drills on the local target (STAND-IN llm-d: EPP and Envoy)", () => {
  it("two STAND-IN engines behind the STAND-IN EPP and Envoy: SIGKILL of one under steady traffic; the follower rewrites the EPP's endpoints file without it and with it again once it serves (the EPP reloads the file it watches); no request fails once it is out of the file", async () => {
    const home = freshHome("restart-llmd");
    const { dir } = launcherDir(env, "restart-llmd", []);
    const text = stackWith(
      `[model]\nname = "Qwen/Qwen3-0.6B"\n[parallel]\ntp = 1\n${TWO_REPLICAS}\n[deployment.router]\ntype = "llm-d"`,
      "gpus = [0, 1]\nready_timeout = 90",
      dir,
    );
    await upRunDown(home, text, async (island) => {
      const attempt = attemptOf(home);
      const file = path.join(attempt, "node_0", "endpoints.yaml");
      // What the EPP reads: one endpoint a line, each naming its engine's URL.
      const inFile = async (url: string) =>
        fs
          .readFileSync(file, "utf8")
          .split("\n")
          .some((l) => l.endsWith(` # ${url}`));
      const url = "http://127.0.0.1:8200";
      const drill = await killUnderTraffic(
        island.routerUrl!,
        island.model,
        url,
        engineOn(home, 8200),
        30_000,
        undefined,
        inFile,
      );
      report["local, stand-in engines, stand-in llm-d (EPP file discovery)"] = drill;
      expect(drill.failedAfterRouterSawItDown, JSON.stringify(drill)).toBe(0);
      expect(drill.overheadMs, JSON.stringify(drill)).toBeLessThan(OVERHEAD_BOUND_MS);
      const log = fs.readFileSync(path.join(attempt, "node_0", "epp.log"), "utf8");
      expect(log).toContain(`[fleet] router: remove ${url} in the EPP's endpoints file: 1 endpoint(s) listed`);
      expect(log).toContain(`[fleet] router: add ${url} in the EPP's endpoints file: 2 endpoint(s) listed`);
      // The EPP (stand-in) reloaded the file each time.
      expect(log.match(/file-discovery: reloaded 1 endpoints/g)?.length).toBeGreaterThanOrEqual(1);
      expect(log).toMatch(/file-discovery: reloaded 2 endpoints/);
    });
  }, 120_000);
});

describe("restart drills on the local target (REAL sglang-router)", () => {
  it("P/D: two STAND-IN SGLang prefill engines and a decode behind the REAL sglang-router in P/D mode: SIGKILL of a prefill under steady traffic; the follower takes it out and tells it again as a prefill with its bootstrap port; no request fails once the router has seen it down", async () => {
    const home = freshHome("restart-sglang-pd");
    const { dir } = launcherDir(env, "restart-sglang-pd", []);
    const text = stackWith(
      `engine = "sglang"\n[model]\nname = "Qwen/Qwen3-0.6B"\n[parallel]\ntp = 1\n[deployment]\ntype = "disaggregated"\nnum_prefill_nodes = 1\nnum_prefill_replicas = 2\nnum_decode_nodes = 1\ngpus_per_node = 1\n[deployment.router]\ntype = "sglang-router"\npolicy = "round_robin"`,
      "gpus = [0, 1, 2]\nready_timeout = 120",
      dir,
    );
    await upRunDown(home, text, async (island) => {
      expect(island.roles).toEqual(["prefill", "prefill", "decode"]);
      const url = new URL(island.adminUrls[1]).origin;
      const port = Number(new URL(url).port);
      const drill = await killUnderTraffic(island.routerUrl!, island.model, url, sglangOn(home, port), 30_000);
      report["local, stand-in SGLang P/D (2 prefill, 1 decode), real sglang-router: a prefill killed"] = drill;
      expect(drill.failedAfterRouterSawItDown, JSON.stringify(drill)).toBe(0);
      expect(drill.overheadMs, JSON.stringify(drill)).toBeLessThan(OVERHEAD_BOUND_MS);
      const routerLog = fs.readFileSync(path.join(attemptOf(home), "node_0", "router.log"), "utf8");
      expect(routerLog).toMatch(
        new RegExp(`router POST /workers ${url}, "worker_type": "prefill", "bootstrap_port": \\d+: .*\\(HTTP 202\\)`),
      );
      // It is a prefill again, with its bootstrap port.
      const workers = (
        (await (await fetch(`${new URL(island.routerUrl!).origin}/workers`)).json()) as {
          workers: { url: string; worker_type: string; bootstrap_port?: number }[];
        }
      ).workers;
      expect(workers.find((w) => w.url === url)).toMatchObject({
        worker_type: "prefill",
        bootstrap_port: expect.any(Number),
      });
    });
  }, 180_000);

  it("two STAND-IN SGLang engines behind the REAL sglang-router holding the API key: SIGKILL of one under steady traffic; the follower takes it out (DELETE /workers/<id>) and back (POST /workers) with the key, no request fails once the router has seen it down; after the REAL Python client's update_weights(v2), a restarted one is replayed the record with the key and listed again only serving v2", async () => {
    const home = freshHome("restart-sglang");
    const key = "sk-restart $(id) 'q'";
    // Every program a stand-in but python3, which runs the real router (launcher folder's shim).
    const { dir } = launcherDir(env, "restart-sglang", []);
    const text = stackWith(
      `engine = "sglang"\n[model]\nname = "Qwen/Qwen3-0.6B"\n[parallel]\ntp = 1\n${TWO_REPLICAS}\n[deployment.router]\ntype = "sglang-router"\npolicy = "round_robin"`,
      "gpus = [0, 1]\nready_timeout = 120",
      dir,
    );
    const { commands } = await captureLocal(text, { secrets: { apiKey: key } });
    const c = commands[0];
    try {
      const island = running(await create(c, home), "create");
      const url = "http://127.0.0.1:8200";
      const drill = await killUnderTraffic(island.routerUrl!, island.model, url, sglangOn(home, 8200), 30_000, key);
      report["local, stand-in SGLang engines, real sglang-router (API key)"] = drill;
      expect(drill.failedAfterRouterSawItDown, JSON.stringify(drill)).toBe(0);
      expect(drill.overheadMs, JSON.stringify(drill)).toBeLessThan(OVERHEAD_BOUND_MS);
      const attempt = attemptOf(home);
      let routerLog = fs.readFileSync(path.join(attempt, "node_0", "router.log"), "utf8");
      expect(routerLog).toMatch(new RegExp(`router DELETE /workers/[0-9a-f-]+ \\(${url}\\): .*\\(HTTP 202\\)`));
      expect(routerLog).toMatch(new RegExp(`router POST /workers ${url}: .*\\(HTTP 202\\)`));

      // The trainer's update through the real client (the key from VLLM_API_KEY), recorded beside endpoints.json.
      const folder = islandOf(home);
      expect(clientUpdateWeights(path.join(folder, "endpoints.json"), env.FLEET_TINY_MODEL, "v2", key)).toEqual({
        recorded: [path.join(folder, "weights")],
        catching_up: [],
      });
      const version = async (port: number) =>
        (
          (await (
            await fetch(`http://127.0.0.1:${port}/model_info`, { headers: { authorization: `Bearer ${key}` } })
          ).json()) as { weight_version: string }
        ).weight_version;
      for (const port of [8100, 8200]) expect(await version(port)).toBe("v2");
      const ms = await killAndListedServing(
        island.routerUrl!,
        url,
        sglangOn(home, 8200),
        () => version(8200),
        "v2",
        30_000,
        key,
      );
      report["local, stand-in SGLang engines, real sglang-router: killed to listed again serving v2 (ms)"] = ms;
      routerLog = fs.readFileSync(path.join(attempt, "node_0", "router.log"), "utf8");
      expect(routerLog).toContain(
        `${url} serves weight version default after its restart: replaying the fleet's update to v2`,
      );
      expect(routerLog).toMatch(new RegExp(`replay POST ${url}/update_weights_from_disk: .*\\(HTTP 200\\)`));
      // The key never reached a log.
      expect(fs.readdirSync(path.join(attempt, "node_0")).some((f) => f.endsWith(".log"))).toBe(true);
      for (const n of ["node_0", "node_1"])
        for (const f of fs.readdirSync(path.join(attempt, n)).filter((x) => x.endsWith(".log")))
          expect(fs.readFileSync(path.join(attempt, n, f), "utf8"), `${n}/${f}`).not.toContain("sk-restart");
    } finally {
      expect((await destroy(c, home)).code).toBe(0);
    }
    expect(await leftUnder(home)).toEqual([]);
  }, 180_000);
});
