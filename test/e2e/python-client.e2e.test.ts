/**
 * The Python client (clients/python, issue 30) against fleets on the real SLURM test cluster: this file
 * deploys each fleet with the program's own create string, then runs the client's pytest suite for
 * it (clients/python/tests/e2e) from a venv where the client is installed from a wheel built here
 * (clients/python/tests/env.sh), handing it the island's endpoints.json as the job wrote it. pytest's
 * JUnit report goes to FLEET_PYTEST_REPORTS when set, so .ci/run counts its tests.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseIslandResult, type RunningIsland } from "../../components/slurm";
import { clientPython, runClientPytest as pytest } from "./client-pytest";
import { capture, env as clusterEnv, expectOk, login, privateKey } from "./cluster";
import {
  COMPILE_CACHE,
  launcherDir,
  expectNothingLeftOnNodes,
  pythonEnv,
  REAL_SGLANG_CPU,
  realSglangLauncher,
  realVllmVersion,
  type PythonEnv,
} from "./real-parts";
import { checkRealReplicas } from "./real-vllm-checks";
import { runRemote, type Connection } from "./ssh";

const conn = (): Connection => ({ ...login, privateKey });
let env: PythonEnv;

/** Deploys `stack` as Pulumi stack `name`, hands the running island to `body`, then deletes it and checks nothing is left. */
async function deployed(
  name: string,
  stack: string,
  overrides: Record<string, unknown>,
  secrets: Record<string, string>,
  body: (island: RunningIsland, endpointsFile: string) => void | Promise<void>,
) {
  const { commands } = await capture(stack, overrides, name, secrets);
  // With a key, the island's secrets command (the key file) runs before its sbatch command, as Pulumi orders them.
  expect(commands.map((c) => c.name)).toEqual([...(secrets.apiKey ? [`${name}-i0-secrets`] : []), `${name}-i0-sbatch`]);
  const created: typeof commands = [];
  try {
    let result = "";
    for (const c of commands) {
      const run = await runRemote(c.connection, c.create, c.stdin);
      created.push(c);
      expectOk(run, `${c.name} create`);
      result = run.stdout;
    }
    const island = parseIslandResult(result);
    if (island.dryRun) throw new Error("expected a submitted job");
    // The job's own endpoints.json, as a trainer beside the job reads it (the test cluster's nodes share this filesystem).
    const file = `/tmp/fleet-e2e/${name}/island-0/endpoints.json`;
    expect(fs.existsSync(file), `${file} written by the job`).toBe(true);
    await body(island, file);
  } finally {
    for (const c of created.reverse()) expectOk(await runRemote(c.connection, c.delete), `${c.name} delete`);
  }
  expect((await runRemote(conn(), "squeue -h -o %i")).stdout.trim()).toBe("");
  await expectNothingLeftOnNodes(clusterEnv);
}

describe("the Python client (clients/python) against fleets on the real SLURM test cluster", () => {
  beforeAll(async () => {
    env = pythonEnv();
    clientPython();
    const check = await runRemote(conn(), "squeue -h -o %i | wc -l");
    expect(check.stdout.trim(), "the test cluster must start with an empty queue").toBe("0");
  }, 40 * 60_000);

  afterAll(() => {
    for (const dir of ["client-weights"]) fs.rmSync(path.join("/tmp/fleet-e2e", dir), { recursive: true, force: true });
  });

  it(
    "real vLLM (CPU build) ×2 behind the real vllm-router, with an API key: one X-Session-ID sticks to one engine, sessions " +
      "spread over both, a /pause sent to the router reaches one engine only; then the client: generate() token ids decode " +
      "with the tiny model's tokenizer, pause() holds generation until resume(), update_weights() reloads every engine and " +
      "the ledger (the engines' own /weight_info and /weight_checker) names an engine whose weights were zeroed",
    async () => {
      const { dir } = launcherDir(env, "client-real-vllm", ["vllm", "vllm-router"]);
      const overrides = {
        "slurm.launcher": { type: "vllm", bin_dir: dir },
        "slurm.ready_timeout": 900,
        "slurm.cache_dir": COMPILE_CACHE,
        "inference.model": env.FLEET_TINY_MODEL,
        "inference.vllm_version": realVllmVersion(env),
        "inference.parallel.tp": 1,
        "inference.parallel.dp": 1,
        "inference.vllm_extra.kv_cache_memory_bytes": 256 * 1024 * 1024,
        // The pause, weight-transfer and weight-checker routes are vLLM's dev-mode routes.
        "inference.env_vars.VLLM_SERVER_DEV_MODE": "1",
      };
      const apiKey = "sk-client-e2e-7c1d";
      await deployed("client-real-vllm", "multi-replica", overrides, { apiKey }, async (island, file) => {
        await checkRealReplicas(island, apiKey);
        pytest(
          "test_real_vllm.py",
          { FLEET_CLIENT_ENDPOINTS: file, VLLM_API_KEY: apiKey, FLEET_TINY_MODEL: env.FLEET_TINY_MODEL },
          "client-real-vllm",
        );
      });
    },
    40 * 60_000,
  );

  it(
    "prime-rl's per-rank topology (stand-in prime-rl servers, 4 ranks on 2 nodes) behind the real vllm-router: " +
      "update_weights() and load_lora_adapter() reach every rank, the greedy-probe ledger agrees and names a rank left behind; " +
      "a rank killed between pause() and update_weights() fails the call naming it, the others resumed",
    async () => {
      const weights = path.join("/tmp/fleet-e2e", "client-weights");
      for (const v of ["v1", "v2"]) fs.mkdirSync(path.join(weights, v), { recursive: true });
      // The launcher is the suite's (the real vllm-router, stand-in engines): e2eOverrides sets it.
      // prime-rl's server in each rank (its /update_weights, /pause, /resume), as slurm.e2e's prime rows run it.
      const overrides = { "vllm_fleet.engine": "prime-rl", "vllm.enable_lora": true };
      await deployed("client-prime", "prime-multi-replica", overrides, {}, (island, file) => {
        expect(island.adminUrls).toHaveLength(4);
        pytest(
          "test_prime_per_rank.py",
          { FLEET_CLIENT_ENDPOINTS: file, FLEET_CLIENT_WEIGHTS: weights },
          "client-prime",
        );
      });
    },
    20 * 60_000,
  );

  it(
    "prime-rl's routing today: sticky_least_loaded on PrimeIntellect's router v0.2.1 (the vllm-router TEST STAND-IN as " +
      "that release; the real one is not on PyPI) before prime-rl per-rank stand-ins: new sessions spread, a session's " +
      "turns stay, the client finishes the sessions it opened (/finish_session)",
    async () => {
      const { dir } = launcherDir(env, "client-sticky", []);
      const overrides = {
        "vllm_fleet.slurm.launcher": { type: "vllm", bin_dir: dir },
        "vllm_fleet.engine": "prime-rl",
        "vllm_fleet.router_release": "primeintellect-v0.2.1",
        "router.policy": "sticky_least_loaded",
      };
      await deployed("client-sticky", "prime-multi-replica", overrides, {}, (island, file) => {
        const metrics = `http://${new URL(island.routerUrl!).hostname}:29000/metrics`;
        pytest(
          "test_sticky_router.py",
          { FLEET_CLIENT_ENDPOINTS: file, FLEET_CLIENT_ROUTER_METRICS: metrics },
          "client-sticky",
        );
      });
    },
    20 * 60_000,
  );

  it(
    "real SGLang 0.5.23 (CPU) behind the real sglang-router, with a key: generate() token ids, pause_generation holds " +
      "generation until continue_generation, update_weights_from_disk and the ledger on SGLang's own weight_version",
    async () => {
      const overrides = {
        "slurm.launcher": { type: "vllm", bin_dir: realSglangLauncher(env, "client-sglang") },
        // Importing torch and SGLang takes one to three minutes on 2 cores.
        "slurm.ready_timeout": 900,
        "model.name": env.FLEET_TINY_MODEL,
        "parallel.tp": 1,
        ...REAL_SGLANG_CPU,
      };
      const apiKey = "sk-client-sgl-3b9e";
      await deployed("client-sglang", "sglang-single-node", overrides, { apiKey }, (_island, file) => {
        pytest(
          "test_real_sglang.py",
          { FLEET_CLIENT_ENDPOINTS: file, VLLM_API_KEY: apiKey, FLEET_TINY_MODEL: env.FLEET_TINY_MODEL },
          "client-sglang",
        );
      });
    },
    40 * 60_000,
  );
});
