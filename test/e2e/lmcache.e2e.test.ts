/**
 * kv_cache_offload.type = "lmcache" with the REAL LMCache server (lmcache 0.5.5 from LMCache's
 * optional layer, test/e2e/lmcache-env.sh) in front of the REAL vLLM CPU build on the local target:
 * the exact create and delete commands `pulumi up` hands local.Command. It proves the hit comes from
 * LMCache (vLLM's own prefix cache reset in between), then SIGKILLs the server: the keeper restarts
 * it with the node's engine (their restart group, docs/restarts.md), and LMCache serves the engine
 * again. Skips, saying so, where the layer is not built.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { FIXED_PORTS } from "../../components/config/fixed-ports";
import { drainRpcs } from "../program-harness";
import { lmcacheLayer, lmcacheMissing } from "./lmcache-layer";
import { captureLocal, create, destroy, leftUnder, processesUnder, running } from "./local-target";
import { COMPILE_CACHE, launcherDir, pythonEnv, realVllmVersion } from "./real-parts";
import { processesWith, until } from "./restart-drill";

const missing = lmcacheMissing();
if (missing) console.warn(`lmcache e2e: SKIPPED: ${missing}`);

const report: Record<string, unknown> = {};
afterAll(() => console.log(`lmcache (local, real LMCache server):\n${JSON.stringify(report, null, 1)}`));
/**
 * The run's HOME, outside local-target.ts's LOCAL_E2E_HOMES: a local suite of another checkout on
 * this machine SIGKILLs whatever runs under that folder after each of its tests.
 */
const home = path.join(os.tmpdir(), "fleet-lmcache-e2e", String(process.pid));
afterEach(drainRpcs);
// A failed test leaves no process holding LMCache's fixed ports for the next run.
afterEach(() => {
  for (const p of processesUnder(home))
    try {
      process.kill(Number(p.split(" ")[0]), "SIGKILL");
    } catch {
      // gone meanwhile
    }
});

/** A port of this file's own (no other suite's engine listens there). */
const PORT = 18740;
/** 300 tokens: one whole 256-token LMCache chunk (chunk_size's default) and a partial one it does not store. */
const PROMPT = Array.from({ length: 300 }, (_, i) => 10 + ((i * 7) % 200));

/** A counter of the engine's Prometheus text (vLLM's names, with the `vllm:` prefix). */
async function counter(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const lines = text.split("\n").filter((l) => l.startsWith(`vllm:${name}{`) || l.startsWith(`vllm:${name} `));
  return lines.reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
}

async function complete(url: string, model: string, ms = 60_000): Promise<string> {
  const res = await fetch(`${url}/v1/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model, prompt: PROMPT, max_tokens: 2, temperature: 0 }),
    signal: AbortSignal.timeout(ms),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { choices: { text: string }[] }).choices[0].text;
}

const LMCACHE_HTTP = `http://127.0.0.1:${FIXED_PORTS.lmcacheHttp}/`;
/** Whether `url` answers at all (`ok`: with a 2xx). */
const answers = (url: string, ok = false) =>
  fetch(url, { signal: AbortSignal.timeout(2000) }).then(
    (r) => !ok || r.ok,
    () => false,
  );

/**
 * The same prompt again after vLLM's own prefix cache is emptied (POST /reset_prefix_cache, dev
 * mode): what it finds of the prompt is what LMCache gives back. Returns the hits it added.
 */
async function hitFromLmcache(url: string, model: string): Promise<number> {
  await complete(url, model);
  const reset = await fetch(`${url}/reset_prefix_cache`, { method: "POST" });
  expect(reset.status).toBe(200);
  const before = await counter(url, "external_prefix_cache_hits_total");
  await complete(url, model);
  return (await counter(url, "external_prefix_cache_hits_total")) - before;
}

describe.skipIf(!!missing)("LMCache offload with the REAL LMCache server (local target)", () => {
  let text: string;
  beforeAll(() => {
    const env = pythonEnv();
    const { dir } = launcherDir(env, "lmcache-real", ["vllm", "lmcache"], lmcacheLayer());
    fs.rmSync(home, { recursive: true, force: true });
    fs.mkdirSync(home, { recursive: true });
    text = [
      `vllm_version = "${realVllmVersion(env)}"`,
      `[model]\nname = ${JSON.stringify(env.FLEET_TINY_MODEL)}`,
      `[server]\nport = ${PORT}`,
      `[parallel]\ntp = 1`,
      `[vllm_extra]\nkv_cache_memory_bytes = ${256 * 1024 * 1024}`,
      `[env_vars]\nVLLM_SERVER_DEV_MODE = "1"`,
      // 256 MiB of LMCache DRAM: the tiny model's KV of a 300-token prompt is a few MB.
      `[kv_cache_offload]\ntype = "lmcache"\n[kv_cache_offload.cpu]\nnum_bytes = ${256 * 1024 * 1024}`,
      `[local]\ndevice = "cpu"\nready_timeout = 900\ncache_dir = ${JSON.stringify(COMPILE_CACHE)}`,
      `[local.launcher]\nbin_dir = ${JSON.stringify(dir)}`,
    ].join("\n\n");
  });

  it(
    "a REAL vLLM CPU engine on LMCacheMPConnector, the REAL `lmcache server` (0.5.5) beside it: a repeated 300-token prompt " +
      "with vLLM's prefix cache reset between is served 256 tokens from LMCache; SIGKILL of the server: the keeper restarts it with " +
      "the node's engine (one group), which serves again and is served 256 tokens from LMCache again; delete leaves no process",
    async () => {
      const { commands } = await captureLocal(text);
      const c = commands[0];
      try {
        const started = Date.now();
        const island = running(await create(c, home), "create");
        report.createMs = Date.now() - started;
        // The engine itself (its result URL names the OpenAI base, /v1).
        const url = new URL(island.engines[0].url).origin;
        const server = () =>
          processesWith({ HOME: home }, ["server", `--port=${FIXED_PORTS.lmcacheServer}`]).filter((pid) =>
            fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(path.join("bin", "lmcache")),
          );
        const restartsFile = () =>
          path.join(
            home,
            fs
              .readdirSync(home, { recursive: true, encoding: "utf8" })
              .find((f) => f.endsWith(path.join("node_0", "lmcache_server.restarts")))!,
          );
        const [victim] = server();
        // The engine's API server (not its engine core, started by it).
        const [engine] = processesWith({ HOME: home }, ["serve", "--port", new URL(url).port]).filter(
          (pid) => !fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("multiprocessing"),
        );
        expect(engine, "the engine's process").toBeDefined();
        expect(victim, "the real LMCache server process").toBeDefined();
        report.firstHitTokens = await hitFromLmcache(url, island.model);
        expect(report.firstHitTokens).toBe(256);

        // The drill: SIGKILL of the server.
        const killed = Date.now();
        process.kill(victim, "SIGKILL");
        await until("the keeper starts the LMCache server again", () => server().some((p) => p !== victim), 60_000);
        await until("the restarted server's HTTP frontend answers", () => answers(LMCACHE_HTTP), 120_000);
        report.serverBackMs = Date.now() - killed;
        report.restarts = fs.readFileSync(restartsFile(), "utf8").trim();
        expect(report.restarts).toMatch(/^1 \d+ lmcache_server 137 0$/);
        report.restartsEngine = fs
          .readFileSync(restartsFile().replace("lmcache_server", "i0-replica0-n0"), "utf8")
          .trim();
        // The node's engine restarts with it (one group: a restarted server alone does not know the
        // engine's registration, and the engine's requests would wait on it for good), serves
        // again, and LMCache serves it the prompt again.
        expect(report.restartsEngine).toMatch(/^1 \d+ lmcache_server 137 0$/);
        await until("the old engine is gone", () => !fs.existsSync(`/proc/${engine}`), 60_000);
        await until("the engine serves again", () => answers(`${url}/health`, true), 600_000);
        report.engineBackMs = Date.now() - killed;
        report.afterRestartHitTokens = await hitFromLmcache(url, island.model);
        expect(report.afterRestartHitTokens).toBe(256);
      } finally {
        expect((await destroy(c, home)).code).toBe(0);
      }
      expect(await leftUnder(home)).toEqual([]);
    },
    15 * 60_000,
  );
});
