/**
 * The end-to-end suite with real parts (issue 19): vLLM's CPU build (`vllm serve` from the pinned
 * venv of test/e2e/python-env.sh) serving a tiny random-weight model built here, behind the real
 * vllm-router, on the real SLURM test cluster, driven by the exact create/delete strings of the
 * Pulumi program. Shapes whose engines need GPUs (NIXL P/D, DeepEP expert parallelism, llm-d's EPP)
 * keep stand-in engines in slurm.e2e.test.ts; the Mooncake row below runs the real Mooncake master,
 * metadata server and client beside stand-in engines. Every test name says which parts are real.
 * Real vLLM engines run elsewhere, each fleet checked for more than one thing (real-vllm-checks.ts):
 * a single engine under the real Pulumi engine (pulumi-engine.e2e.test.ts), two behind the real
 * router for the Python client (python-client.e2e.test.ts): each real start costs a minute of 2 cores.
 */
import * as fs from "node:fs";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseIslandResult, type RunningIsland } from "../../components/slurm";
import { capture, env as clusterEnv, expectOk, login, privateKey } from "./cluster";
import {
  COMPILE_CACHE,
  launcherDir,
  expectNothingLeftOnNodes,
  pythonEnv,
  type Program,
  type PythonEnv,
} from "./real-parts";
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
  await expectNothingLeftOnNodes(clusterEnv);
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
