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
import { capture, expectOk, fleetStatusIn, login, privateKey } from "./cluster";
import { killUnderTraffic, processesWith } from "./restart-drill";
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

/** The job's `serve` process on node `node` (SLURM_PROCID) serving `port`. */
const engineOf = (jobId: string, node: number, port: number) => () =>
  processesWith({ SLURM_JOB_ID: jobId, SLURM_PROCID: String(node) }, ["serve", "--port", String(port)])[0];

describe("restart drills on the real SLURM cluster", () => {
  it("multi-replica, 2 nodes: SIGKILL of the STAND-IN engine on node 2 under steady traffic through the REAL vllm-router: the job keeps running, the engine restarts in place and the router takes it out and back; no request fails once the router saw it down; status counts the restart", async () => {
    const stack = "restart-node2";
    const extra = { "inference.restart": { backoff: 0.5 } };
    const [c] = (await capture("multi-replica", extra, stack)).commands;
    try {
      const create = await runRemote(c.connection, c.create, c.stdin);
      expectOk(create, "create");
      const island = parseIslandResult(create.stdout) as RunningIsland;
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
      // The goal: serving again within its own start + 1 s.
      expect(drill.overheadMs, JSON.stringify(drill)).toBeLessThan(1000);
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
});
