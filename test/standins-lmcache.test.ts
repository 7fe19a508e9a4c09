import { afterAll, describe, expect, it } from "vitest";
import { buildPlan } from "../components/planner";
import { showValue } from "../components/plan/values";
import { loadConfigText } from "../components/config";
import { freePort, runToExit, start, stopAll, waitHttp } from "./standins-harness";
import { stackText } from "./helpers";

/*
 * The LMCache server's TEST STAND-IN (test/fixtures/standins/lib/lmcache.js), and the vLLM stand-in's
 * LMCacheMPConnector start-up check. The real LMCache runs on CPU here only outside the pinned
 * environment (docs/prime-rl.md); these hold the fleet's command lines to its real flags.
 */
afterAll(stopAll);

const CHECK = { STANDIN_CHECK_ONLY: "1" };
/** The server argv the planner renders for stacks/kv-offload-lmcache.toml. */
const planned = () =>
  buildPlan(loadConfigText(stackText("kv-offload-lmcache"), "s.toml"), "s")
    .islands[0].lmcache!.servers[0].argv.map((v) => showValue(v, 0))
    .slice(1);

describe("lmcache server stand-in", () => {
  it("accepts the planned argv and refuses what lmcache server's parser refuses", async () => {
    expect((await runToExit("lmcache", planned(), CHECK)).code).toBe(0);
    for (const [args, named] of [
      [["server", "--l1-size", "2"], "--l1-size"],
      [["server", "--eviction-policy", "LFU"], "--eviction-policy"],
      [["server", "--chunk-size", "many"], "--chunk-size"],
      [["server", "extra"], "extra"],
    ] as const) {
      const r = await runToExit("lmcache", [...args], CHECK);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(named);
    }
    const other = await runToExit("lmcache", ["serve"], CHECK);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain("only `lmcache server`");
  });

  it("an engine on LMCacheMPConnector fails its start until the server listens, then starts", async () => {
    const [zmq, http, api] = await Promise.all([freePort(), freePort(), freePort()]);
    const kv = JSON.stringify({
      kv_connector: "LMCacheMPConnector",
      kv_role: "kv_both",
      kv_connector_extra_config: { "lmcache.mp.host": "tcp://127.0.0.1", "lmcache.mp.port": zmq },
    });
    const engine = ["serve", "m", "--port", String(api), "--kv-transfer-config", kv];
    const early = await runToExit("vllm", engine);
    expect(early.code).toBe(1);
    expect(early.stderr).toContain(`no LMCache server answers at tcp://127.0.0.1:${zmq}`);
    const server = start("lmcache", ["server", "--host=127.0.0.1", `--port=${zmq}`, `--http-port=${http}`]);
    await waitHttp(`http://127.0.0.1:${http}/health`, 200, 10_000, server);
    const e = start("vllm", engine);
    await waitHttp(`http://127.0.0.1:${api}/health`, 200, 20_000, e);
  });
});
