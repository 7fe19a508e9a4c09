/**
 * Restart drills (issue 41) on the real SLURM test cluster: the exact create and delete commands
 * the program hands remote.Command, then a real fault (SIGKILL of an engine process on a node). The
 * cluster's nodes share this machine's process table, so the engine is found by its job's
 * environment (SLURM_JOB_ID, SLURM_PROCID) and killed from here. The router is the REAL
 * vllm-router from the pinned venv (suiteBinDir); engines are STAND-INs (test/fixtures/standins).
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseIslandResult, type RunningIsland } from "../../components/slurm";
import { capture, expectOk, fleetStatusIn, login, privateKey, type CapturedCommand } from "./cluster";
import {
  clientUpdateWeights,
  killAndListedServing,
  killUnderTraffic,
  listedServing,
  OVERHEAD_BOUND_MS,
  processesWith,
  until,
} from "./restart-drill";
import { runRemote, type Connection } from "./ssh";

const conn: Connection = { ...login, privateKey };
const work = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-restart-"));
const report: Record<string, unknown> = {};
afterAll(() => console.log(`restart drills (SLURM):\n${JSON.stringify(report, null, 1)}`));

async function fleetStatus(pulumiStack: string, stackFile: string, extra: Record<string, unknown>) {
  const s = await fleetStatusIn(work, pulumiStack, stackFile, extra);
  expect(s.code, s.err).toBe(0);
  return s.report!;
}

/** Runs an island's create command; the running island it reports. */
async function createIsland(c: CapturedCommand): Promise<RunningIsland> {
  const create = await runRemote(c.connection, c.create, c.stdin);
  expectOk(create, "create");
  return parseIslandResult(create.stdout) as RunningIsland;
}

/** The job's `serve` process on node `node` (SLURM_PROCID) serving `port`. */
const engineOf = (jobId: string, node: number, port: number) => () =>
  processesWith({ SLURM_JOB_ID: jobId, SLURM_PROCID: String(node) }, ["serve", "--port", String(port)])[0];

describe("restart drills on the real SLURM cluster", () => {
  it("multi-replica, 2 nodes: SIGKILL of the STAND-IN engine on node 2 under steady traffic through the REAL vllm-router: the job keeps running, the engine restarts in place and the router takes it out and back; no request fails once the router saw it down; status counts the restart", async () => {
    const stack = "restart-node2";
    const extra = { "inference.restart": { backoff: 0.5 } };
    const [c] = (await capture("multi-replica", extra, stack)).commands;
    try {
      const island = await createIsland(c);
      const url = `http://${island.nodes[1].addr}:8100`;
      const drill = await killUnderTraffic(
        island.routerUrl!,
        island.model,
        url,
        engineOf(island.jobId, 1, 8100),
        60_000,
      );
      report["SLURM, 2 nodes, stand-in engines, real vllm-router"] = drill;
      expect(drill.failedAfterRouterSawItDown).toBe(0);
      expect(drill.overheadMs, JSON.stringify(drill)).toBeLessThan(OVERHEAD_BOUND_MS);
      // The same job: SLURM never saw a failure.
      expect((await runRemote(conn, `squeue -h -j ${island.jobId} -o %T`)).stdout.trim()).toBe("RUNNING");
      const status = await fleetStatus(stack, "multi-replica", extra);
      expect(status.status).toBe("READY");
      const engine = status.islands[0].processes.find((p) => p.url === `${url}/v1`);
      expect(engine).toMatchObject({ status: "READY", restarts: 1, lastRestart: { code: 137 } });
      expect(status.islands[0].processes.filter((p) => p.restarts > 0)).toHaveLength(1);
    } finally {
      expectOk(await runRemote(c.connection, c.delete), "delete");
    }
  }, 300_000);

  it("weights: the REAL Python client's update_weights(v2) records the update beside endpoints.json; SIGKILL of the STAND-IN engine on node 2: it replays the record and the REAL vllm-router lists it again only serving v2; an update to v3 while it restarts updates the other engine and leaves it to the record, and it is listed again only serving v3; the job scancelled and brought back (delete, then the create of its revival) serves v3 before its create returns; delete sets the record aside", async () => {
    const stack = "restart-weights";
    // A back-off long enough that the second update below finds the engine down (the second restart waits 6 s).
    const extra = { "inference.restart": { backoff: 3 }, "inference.env_vars": { VLLM_SERVER_DEV_MODE: "1" } };
    const [c] = (await capture("multi-replica", extra, stack)).commands;
    const folder = `/tmp/fleet-e2e/${stack}/island-0`;
    const checkpoint = `/tmp/fleet-e2e/${stack}/ckpt-v2`;
    try {
      const island = await createIsland(c);
      fs.mkdirSync(checkpoint, { recursive: true });
      // The trainer beside the job: the island's endpoints.json on the cluster's shared storage.
      expect(clientUpdateWeights(`${folder}/endpoints.json`, checkpoint, "v2")).toEqual({
        recorded: [`${folder}/weights`],
        catching_up: [],
      });
      const url = `http://${island.nodes[1].addr}:8100`;
      const state = async () =>
        (await (await fetch(`${url}/standin/state`)).json()) as {
          engine_id: string;
          weight_updates: number;
          weight_dir: string;
        };
      const version = async () =>
        ((await (await fetch(`${url}/weight_info`)).json()) as { weight_version: string }).weight_version;
      const before = await state();
      expect(before).toMatchObject({ weight_updates: 1, weight_dir: checkpoint });
      const ms = await killAndListedServing(
        island.routerUrl!,
        url,
        engineOf(island.jobId, 1, 8100),
        version,
        "v2",
        60_000,
      );
      report["SLURM, stand-in engine of node 2: killed to listed again serving v2 after replaying the record (ms)"] =
        ms;
      // A new process, which loaded the recorded checkpoint once (the replay), not the old one's count.
      const after = await state();
      expect(after.engine_id).not.toBe(before.engine_id);
      expect(after).toMatchObject({ weight_updates: 1, weight_dir: checkpoint });
      const log = (await runRemote(conn, `cat ${folder}/logs/job_${island.jobId}_0/node_0/router.log`)).stdout;
      expect(log).toContain(
        `${url} serves weight version default after its restart: replaying the fleet's update to v2`,
      );
      expect(log).toContain(`replay POST ${url}/update_weight_version: {"status":"ok"} (HTTP 200)`);

      // An update while the engine restarts: the client updates the serving one and leaves this one
      // to the record, which it replays before the router is told it again.
      const victim = engineOf(island.jobId, 1, 8100)();
      process.kill(victim!, "SIGKILL");
      await until(
        "the engine is down",
        async () =>
          !(await fetch(`${url}/health`).then(
            () => true,
            () => false,
          )),
        10_000,
      );
      const v3 = `/tmp/fleet-e2e/${stack}/ckpt-v3`;
      fs.mkdirSync(v3, { recursive: true });
      const update = clientUpdateWeights(`${folder}/endpoints.json`, v3, "v3");
      expect(update.recorded).toEqual([`${folder}/weights`]);
      expect(update.catching_up).toEqual([expect.stringContaining(`(replica, ${url}/v1)`)]);
      await listedServing(island.routerUrl!, url, version, "v3", 60_000);
      expect(await state()).toMatchObject({ weight_updates: 1, weight_dir: v3 });

      // The job lost (scancel) and brought back, as `pulumi up` does it: the old job's delete, then
      // the create of its revival (the program saw the job gone). The create takes the record back,
      // each engine loads it on its node before the router is told it, and the create returns only
      // once both serve v3.
      expectOk(await runRemote(conn, `scancel ${island.jobId}`), "scancel");
      expectOk(await runRemote(c.connection, c.delete), "delete");
      expect(fs.existsSync(`${folder}/weights.previous`)).toBe(true);
      // The program sees the job gone (host/presence.ts), with the generation the folder records
      // (an earlier run of this drill on the same cluster may have left one): its create is the next.
      const file = `${folder}/generation`;
      const recorded = fs.existsSync(file) ? Number(fs.readFileSync(file, "utf8").trim() || "0") : 0;
      const gone = { generation: recorded, gone: true, why: "scancel in the drill" };
      const [back] = (await capture("multi-replica", extra, stack, {}, () => gone)).commands;
      expect(back.stdin).toContain(`# Revival ${recorded + 1}:`);
      const t0 = Date.now();
      const revival = await runRemote(back.connection, back.create, back.stdin);
      expectOk(revival, "revival");
      report["SLURM, stand-in engines: revival create to serving v3 from the record (ms)"] = Date.now() - t0;
      expect(revival.stderr).toContain("brought back with the fleet's weights record (version v3)");
      const revived = parseIslandResult(revival.stdout) as RunningIsland;
      expect(revived.jobId).not.toBe(island.jobId);
      for (const node of [0, 1]) {
        const root = `http://${revived.nodes[node].addr}:8100`;
        expect(((await (await fetch(`${root}/weight_info`)).json()) as { weight_version: string }).weight_version).toBe(
          "v3",
        );
        expect(await (await fetch(`${root}/standin/state`)).json()).toMatchObject({
          weight_updates: 1,
          weight_dir: v3,
        });
      }
    } finally {
      expectOk(await runRemote(c.connection, c.delete), "delete");
      for (const d of [checkpoint, `/tmp/fleet-e2e/${stack}/ckpt-v3`]) fs.rmSync(d, { recursive: true, force: true });
    }
    // The fleet is gone: its weights are set aside, for a revival of this island only.
    expect(fs.existsSync(`${folder}/weights`)).toBe(false);
    expect(fs.existsSync(`${folder}/weights.previous`)).toBe(true);
  }, 420_000);

  it("wide-EP, two islands of one engine across 2 nodes each (STAND-INs): SIGKILL of island 0's rank on node 2 restarts both its ranks as one group, in the same job; island 1 is untouched", async () => {
    const stack = "restart-group";
    const extra = {
      deployment: { type: "multi_node", num_infer_nodes: 2, num_infer_replicas: 2 },
      "inference.restart": { backoff: 0.5 },
    };
    const commands = (await capture("wide-ep", extra, stack)).commands;
    expect(commands).toHaveLength(2);
    try {
      const islands = [];
      for (const c of commands) {
        islands.push(await createIsland(c));
      }
      const [i0, i1] = islands;
      const ranks = (island: RunningIsland) =>
        [0, 1].map((n) => processesWith({ SLURM_JOB_ID: island.jobId, SLURM_PROCID: String(n) }, ["serve"])[0]);
      const before0 = ranks(i0);
      const before1 = ranks(i1);
      expect([...before0, ...before1].every(Boolean)).toBe(true);
      const killed = Date.now();
      process.kill(before0[1], "SIGKILL");
      // Both ranks of island 0 run again: new processes on both nodes.
      let after0: number[] = [];
      for (const t0 = Date.now(); Date.now() - t0 < 60_000; await new Promise((r) => setTimeout(r, 100))) {
        after0 = ranks(i0);
        if (after0.every((pid, n) => pid && pid !== before0[n])) break;
      }
      expect(
        after0.every((pid, n) => pid && pid !== before0[n]),
        `island 0's ranks: ${before0} -> ${after0}`,
      ).toBe(true);
      const head = `http://${i0.nodes[0].addr}:${new URL(i0.engines[0].url).port}`;
      for (const t0 = Date.now(); Date.now() - t0 < 60_000; await new Promise((r) => setTimeout(r, 100))) {
        if ((await fetch(`${head}/health`).catch(() => undefined))?.status === 200) break;
      }
      report["SLURM, wide-EP group of 2 nodes: both ranks serve again (ms)"] = Date.now() - killed;
      expect(ranks(i1)).toEqual(before1);
      for (const i of islands)
        expect((await runRemote(conn, `squeue -h -j ${i.jobId} -o %T`)).stdout.trim()).toBe("RUNNING");
      const status = await fleetStatus(stack, "wide-ep", extra);
      const counts = status.islands.map((i) => i.processes.filter((p) => p.role !== "router").map((p) => p.restarts));
      // Both ranks of island 0 count the restart; island 1 none.
      expect(counts).toEqual([
        [1, 1],
        [0, 0],
      ]);
    } finally {
      for (const c of commands) expectOk(await runRemote(c.connection, c.delete), "delete");
    }
  }, 300_000);

  it("P/D behind the REAL vllm-router in P/D mode (STAND-INs): after the REAL Python client's update_weights(v2), SIGKILL of a prefill engine on node 2: it restarts behind its restart gate (its module and gate file on the cluster's shared storage) while it reloads v2, the router's health checks keep it out, and it is routed again serving v2, having served nothing else", async () => {
    const stack = "restart-gate";
    // A reload that takes seconds, as a real checkpoint's does (the stand-in's STANDIN_RELOAD_DELAY_MS).
    const extra = {
      "inference.env_vars": { VLLM_SERVER_DEV_MODE: "1", STANDIN_RELOAD_DELAY_MS: "5000" },
      "inference.restart": { backoff: 0.5 },
    };
    const [c] = (await capture("disaggregated-small", extra, stack)).commands;
    const folder = `/tmp/fleet-e2e/${stack}/island-0`;
    const checkpoint = `/tmp/fleet-e2e/${stack}/ckpt-v2`;
    try {
      const island = await createIsland(c);
      fs.mkdirSync(checkpoint, { recursive: true });
      expect(clientUpdateWeights(`${folder}/endpoints.json`, checkpoint, "v2").recorded).toEqual([`${folder}/weights`]);
      // A prefill engine on node 2 (SLURM_PROCID 1).
      const engine = island.engines.find(
        (e) => e.role === "prefill" && new URL(e.url).hostname === island.nodes[1].addr,
      );
      expect(engine, JSON.stringify(island.engines)).toBeDefined();
      const url = new URL(engine!.url).origin;
      const port = Number(new URL(url).port);
      const routed = async () => {
        const { workers } = (await (await fetch(`${new URL(island.routerUrl!).origin}/workers`)).json()) as {
          workers: { url: string; is_healthy: boolean }[];
        };
        return workers.some((w) => w.url === url && w.is_healthy);
      };
      expect(await routed()).toBe(true);
      const victim = engineOf(island.jobId, 1, port)();
      expect(victim).toBeDefined();
      const killed = Date.now();
      process.kill(victim!, "SIGKILL");
      await until("the router marks it down", async () => !(await routed()), 10_000);
      await until(
        "it answers behind its closed restart gate",
        async () => {
          const pid = engineOf(island.jobId, 1, port)();
          if (pid === undefined || pid === victim) return false;
          const r = await fetch(`${url}/health`).catch(() => undefined);
          return r?.status === 503 && (await r.text()).includes("restart gate closed");
        },
        60_000,
      );
      report["SLURM, P/D prefill on node 2: killed to answering behind its restart gate (ms)"] = Date.now() - killed;
      expect(await routed()).toBe(false);
      await until("routed again", routed, 60_000);
      report["SLURM, P/D prefill on node 2: killed to routed again serving v2 (ms)"] = Date.now() - killed;
      expect(((await (await fetch(`${url}/weight_info`)).json()) as { weight_version: string }).weight_version).toBe(
        "v2",
      );
      // Requests through the router now (sessions spread over the prefills): none served with other weights.
      for (let i = 0; i < 12; i++)
        await fetch(`${island.routerUrl}/completions`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-session-id": `after-${i}` },
          body: JSON.stringify({ model: island.model, prompt: `after ${i}`, max_tokens: 2 }),
        }).then((r) => r.text());
      const state = (await (await fetch(`${url}/standin/state`)).json()) as {
        by_weight_version: Record<string, number>;
      };
      report["SLURM, P/D prefill on node 2: requests it served after its restart, by weight version"] =
        state.by_weight_version;
      expect(Object.keys(state.by_weight_version).filter((v) => v !== "v2")).toEqual([]);
      const log = (await runRemote(conn, `cat ${folder}/slurm-${island.jobId}.out`)).stdout;
      expect(log).toContain(`${url}: restart gate open`);
    } finally {
      expectOk(await runRemote(c.connection, c.delete), "delete");
      fs.rmSync(checkpoint, { recursive: true, force: true });
    }
  }, 300_000);

  it("past its budget (restart.max_restarts = 1): a STAND-IN engine that keeps crashing after it served fails the island: status names the process, its status and its one restart; SLURM ends the job", async () => {
    const stack = "restart-budget";
    // Long enough for create to see every endpoint serve first (the real router listens once its workers are healthy).
    const extra = {
      "inference.env_vars": { STANDIN_CRASH_AFTER_MS: "15000" },
      "inference.restart": { max_restarts: 1, backoff: 0.1 },
    };
    const [c] = (await capture("multi-replica", extra, stack)).commands;
    try {
      const island = await createIsland(c);
      let s = await fleetStatus(stack, "multi-replica", extra);
      for (
        const t0 = Date.now();
        s.status !== "FAILED" && Date.now() - t0 < 90_000;
        await new Promise((r) => setTimeout(r, 1000))
      )
        s = await fleetStatus(stack, "multi-replica", extra);
      expect(s.status).toBe("FAILED");
      const failed = s.islands[0].processes.find((p) => p.status === "FAILED")!;
      expect(failed).toMatchObject({ restarts: 1, detail: "exited with status 1" });
      expect(s.islands[0].detail).toMatch(/i0-replica\d-n0 exited with status 1/);
      for (const t0 = Date.now(); Date.now() - t0 < 30_000; await new Promise((r) => setTimeout(r, 500)))
        if ((await runRemote(conn, `squeue -h -j ${island.jobId} -o %T`)).stdout.trim() === "") break;
      expect((await runRemote(conn, `squeue -h -j ${island.jobId} -o %T`)).stdout.trim()).toBe("");
    } finally {
      expectOk(await runRemote(c.connection, c.delete), "delete");
    }
  }, 300_000);
});
