/**
 * Idle release (issue 44) on the real SLURM test cluster: the exact create and delete commands the
 * program hands remote.Command, a 2-node island (STAND-IN engines, the REAL vllm-router) with
 * idle_release_after = "20s". Node 0's activity monitor scrapes both nodes' engines; the job stays
 * while a client sends requests and while the engines are paused, and ends itself (scancel of its
 * own job: SLURM says CANCELLED) about 20 s after the last request; `fleet status` says
 * IDLE-RELEASED and when. Its own stack name and ports (27300, engines 27400), used by no other e2e.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { parseIslandResult, type RunningIsland } from "../../components/slurm";
import { parseActivity } from "../../components/host/activity-ledger";
import { capture, expectOk, fleetStatusIn, login, privateKey } from "./cluster";
import { runRemote, type Connection } from "./ssh";

const conn: Connection = { ...login, privateKey };
const work = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-idle-"));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("idle release on the real SLURM cluster", () => {
  it('multi-replica, 2 nodes, idle_release_after = "20s": not while requests flow, not while paused; then the job cancels itself ~20 s after the last request, and fleet status says IDLE-RELEASED', async () => {
    const stack = "idle-release-slurm";
    const extra = {
      "inference.idle_release_after": "20s",
      "inference.server.port": 27300,
      "inference.env_vars": { VLLM_SERVER_DEV_MODE: "1" },
    };
    const [c] = (await capture("multi-replica", extra, stack)).commands;
    try {
      const create = await runRemote(c.connection, c.create, c.stdin);
      expectOk(create, "create");
      const island = parseIslandResult(create.stdout) as RunningIsland;
      const engines = [0, 1].map((n) => `http://${island.nodes[n].addr}:27400`);
      const state = async () => (await runRemote(conn, `squeue -h -j ${island.jobId} -o %T`)).stdout.trim();

      // Requests through the router every second for 30 s (beyond the bound): the job stays.
      for (const t0 = Date.now(); Date.now() - t0 < 30_000; await sleep(1000)) {
        const r = await fetch(`${island.routerUrl}/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: island.model, prompt: "hi", max_tokens: 4 }),
        });
        expect(r.status).toBe(200);
      }
      expect(await state()).toBe("RUNNING");

      // Both engines paused for 30 s (a trainer's weight update): the job stays.
      for (const e of engines) expect((await fetch(`${e}/pause`, { method: "POST" })).status).toBe(200);
      await sleep(30_000);
      expect(await state()).toBe("RUNNING");
      for (const e of engines) expect((await fetch(`${e}/resume`, { method: "POST" })).status).toBe(200);

      // No request: the job ends itself.
      const idleFrom = Date.now() / 1000;
      for (const t0 = Date.now(); (await state()) !== "" && Date.now() - t0 < 90_000;) await sleep(1000);
      expect(await state(), "the job after 90 s idle").toBe("");
      const ended = Date.now() / 1000;
      // SLURM's own word: `scontrol show job` (kept for MinJobAge) and the accounting's record (slurmdbd).
      const info = (await runRemote(conn, `scontrol show job -o ${island.jobId}`)).stdout;
      expect(info).toMatch(/JobState=CANCELLED/);
      const sacct = await runRemote(conn, `sacct -n -P -X -j ${island.jobId} -o State`);
      expect(sacct.stdout.trim()).toMatch(/^CANCELLED/);
      expect(ended - idleFrom).toBeLessThan(45);

      // The cluster's shared storage is this machine's /tmp.
      const latest = `/tmp/fleet-e2e/${stack}/island-0/logs/latest`;
      const [released, idleSince] = fs.readFileSync(`${latest}/idle-released`, "utf8").trim().split(" ").map(Number);
      expect(released - idleSince).toBeGreaterThanOrEqual(20);
      expect(released - idleSince).toBeLessThan(30);
      const seen = new Set(parseActivity(fs.readFileSync(`${latest}/activity`, "utf8")).map((e) => e.state));
      for (const s of ["busy", "paused", "idle"] as const) expect(seen.has(s), s).toBe(true);

      const status = await fleetStatusIn(work, stack, "multi-replica", extra);
      expect(status.code, status.err).toBe(0);
      expect(status.report!.islands[0]).toMatchObject({ status: "IDLE-RELEASED", schedulerState: "CANCELLED" });
      expect(status.report!.islands[0].detail).toContain(new Date(released * 1000).toISOString());
    } finally {
      expectOk(await runRemote(c.connection, c.delete), "delete");
    }
  }, 420_000);
});
