/**
 * Idle release on the local target (issue 44), with the stand-in vLLM (test/fixtures/standins): the
 * island's activity monitor (templates/host/activity.sh.mustache) keeps the ledger, survives a
 * kill -9 without failing the run, holds the island while a client sends requests and while the
 * engine is paused, and ends the run 20 s after the last request with idle_release_after = "20s";
 * `fleet status` then says IDLE-RELEASED, and the island counts as gone for the next `pulumi up`.
 * Its own server port (27300), used by no other e2e.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseActivity } from "../../components/host/activity-ledger";
import { presenceOf } from "../../components/host/presence";
import { localTarget } from "../../components/local";
import { drainRpcs } from "../program-harness";
import { ROOT, STANDINS } from "./program-capture";
import { captureLocal, create, destroy, freshHome, killLeftovers, leftUnder, runLocal, running } from "./local-target";

afterEach(drainRpcs);
afterEach(killLeftovers);

const PORT = 27300;
const STACK = `idle_release_after = "20s"
[model]
name = "Qwen/Qwen3-0.6B"
[parallel]
tp = 1
[deployment]
gpus_per_node = 1
[server]
port = ${PORT}
[env_vars]
VLLM_SERVER_DEV_MODE = "1"

[local]
gpus = [0, 1, 2, 3]
ready_timeout = 90

[local.launcher]
bin_dir = ${JSON.stringify(STANDINS)}
`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("idle release on the local target (stand-in engine)", () => {
  it('idle_release_after = "20s": not while requests flow, not while paused, a killed monitor restarts without failing the run; released ~20 s after the last request, IDLE-RELEASED, gone for presence', async () => {
    const home = freshHome("idle-release");
    const { commands } = await captureLocal(STACK);
    const c = commands[0];
    const island = running(await create(c, home), "create");
    const engine = new URL(island.adminUrls[0]).origin;
    const islandDir = path.join(home, "vllm-fleet", "local-dev", "island-0");
    const [pidText, , , attempt] = fs.readFileSync(path.join(islandDir, "run"), "utf8").trim().split(" ");
    const supervisor = Number(pidText);
    const out = () => fs.readFileSync(path.join(attempt, "supervisor.out"), "utf8");
    const ledger = () => parseActivity(fs.readFileSync(path.join(attempt, "activity"), "utf8"));
    const marker = path.join(attempt, "idle-released");
    try {
      // Requests every second for 30 s (beyond the bound): the island stays.
      const request = () =>
        fetch(`${engine}/v1/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: island.model, prompt: "hi", max_tokens: 4 }),
        }).then((r) => expect(r.status).toBe(200));
      let monitorKilled = false;
      for (const t0 = Date.now(); Date.now() - t0 < 30_000; await sleep(1000)) {
        await request();
        // Death story: the monitor killed outright is started again by the keeper; the run goes on.
        const m = /activity monitor started \(pid (\d+)\)/.exec(out());
        if (!monitorKilled && m && Date.now() - t0 > 5000) {
          process.kill(Number(m[1]), "SIGKILL");
          monitorKilled = true;
        }
      }
      expect(monitorKilled).toBe(true);
      expect(out()).toMatch(/the activity monitor exited \(status 137\); starting it again/);
      expect(out().match(/activity monitor started/g)?.length).toBeGreaterThanOrEqual(2);
      expect(alive(supervisor), "the run while requests flow").toBe(true);
      expect(fs.existsSync(marker)).toBe(false);
      expect(ledger().some((e) => e.state === "busy")).toBe(true);

      // Paused for 30 s (a trainer's weight update): the island stays.
      expect((await fetch(`${engine}/pause`, { method: "POST" })).status).toBe(200);
      await sleep(30_000);
      expect(alive(supervisor), "the run while paused").toBe(true);
      expect(fs.existsSync(marker)).toBe(false);
      expect(ledger().at(-1)?.state).toBe("paused");
      expect((await fetch(`${engine}/resume`, { method: "POST" })).status).toBe(200);

      // No request: released 20 s after the monitor first sees it idle (it scrapes every 5 s).
      const idleFrom = Date.now() / 1000;
      for (const t0 = Date.now(); alive(supervisor) && Date.now() - t0 < 60_000;) await sleep(500);
      expect(alive(supervisor), "the run after 60 s idle").toBe(false);
      const [released, idleSince] = fs.readFileSync(marker, "utf8").trim().split(" ").map(Number);
      expect(released - idleSince).toBeGreaterThanOrEqual(20);
      expect(released - idleSince).toBeLessThan(30);
      expect(idleSince).toBeGreaterThanOrEqual(Math.floor(idleFrom) - 1);
      expect(idleSince - idleFrom).toBeLessThan(10);
      expect(ledger().at(-1)?.state).toBe("idle");
      expect(await leftUnder(home)).toEqual([]);

      // fleet status says so, and when; the next `pulumi up` sees the island gone.
      const dir = fs.mkdtempSync(path.join(home, "project-"));
      fs.writeFileSync(path.join(dir, "stack.toml"), STACK);
      fs.writeFileSync(path.join(dir, "Pulumi.dev.yaml"), `config:\n  vllm-fleet:stackFile: ./stack.toml\n`);
      const fleet = path.join(ROOT, "dist", "bin", "fleet.js");
      const status = await runLocal(
        `node ${JSON.stringify(fleet)} status --json --pulumi-config ${JSON.stringify(path.join(dir, "Pulumi.dev.yaml"))} ${JSON.stringify(path.join(dir, "stack.toml"))}`,
        { home },
      );
      expect(status.code, status.stderr).toBe(0);
      const s = JSON.parse(status.stdout);
      expect(s.islands[0].status).toBe("IDLE-RELEASED");
      expect(s.islands[0].detail).toContain(new Date(released * 1000).toISOString());
      const query = await runLocal("bash -s", {
        home,
        stdin: localTarget.fleet!.scheduler!.query([{ island: 0, islandDir, nodeCount: 1 }]),
      });
      const presence = presenceOf(localTarget.fleet!.scheduler!.parse(query.stdout, [0]).get(0)!);
      expect(presence.gone).toBe(true);
      expect(presence.why).toContain("released itself");
    } finally {
      expect((await destroy(c, home)).code).toBe(0);
    }
  }, 240_000);
});
