import { describe, expect, it } from "vitest";
import { loadConfigFile } from "../../components/config";
import { viewFromEndpoints, viewFromPlan } from "../../components/ops/fleet-view";
import type { JobReport } from "../../components/slurm";
import { fleetStatus, islandStatus, type Probe } from "../../components/ops/status";
import { buildPlan } from "../../components/planner";
import { resolveStackFile } from "../../components/stack-file";
import { resultTemplate, runningIslandSchema } from "../../components/host/island-result";

const plan = (stack: string) => buildPlan(loadConfigFile(resolveStackFile(stack).file), stack);

const job = (over: Partial<JobReport>): JobReport => ({
  island: 0,
  jobId: "77",
  state: "RUNNING",
  reason: null,
  exitCode: null,
  source: "squeue",
  hosts: ["n1", "n2"],
  addrs: ["10.0.0.1", "10.0.0.2"],
  exits: [],
  restarts: [],
  nodeStates: [
    { host: "n1", state: "allocated" },
    { host: "n2", state: "allocated" },
  ],
  generation: 0,
  destroyed: false,
  ...over,
});
const ok: Probe = { health: 200, models: 200, listsModel: true };
const serving = (urls: string[]) => new Map(urls.map((u) => [u, ok]));

describe("island status: scheduler first, then the servers", () => {
  const view = viewFromPlan(plan("multi-replica")).islands[0];
  const urls = ["http://10.0.0.1:8100/v1", "http://10.0.0.2:8100/v1", "http://10.0.0.1:8000/v1"];

  it("PENDING while queued, whatever answers", () => {
    const s = islandStatus(view, job({ state: "PENDING", reason: "Resources", hosts: [], addrs: [] }), serving(urls));
    expect(s.status).toBe("PENDING");
    expect(s.detail).toBe("PENDING, reason Resources");
    expect(s.processes.every((p) => p.status === "PENDING" && p.detail === "waiting for Resources")).toBe(true);
  });

  it("LAUNCHING until every engine and the router serve; then READY", () => {
    const partial = new Map<string, Probe>([
      [urls[0], ok],
      [urls[1], { health: 200, models: 200, listsModel: false }],
      [urls[2], { health: null, models: null, listsModel: false, error: "ECONNREFUSED" }],
    ]);
    const launching = islandStatus(view, job({}), partial);
    expect(launching.status).toBe("LAUNCHING");
    expect(launching.detail).toBe("1 of 3 serving");
    expect(launching.processes.map((p) => [p.id, p.status, p.url, p.detail])).toEqual([
      [view.engines[0].id, "READY", urls[0], "serving"],
      [view.engines[1].id, "LAUNCHING", urls[1], "/v1/models does not list the model yet"],
      ["router", "LAUNCHING", urls[2], "not answering (ECONNREFUSED)"],
    ]);
    expect(islandStatus(view, job({}), serving(urls)).status).toBe("READY");
  });

  it("FAILED as soon as a node's slurmd stops answering, naming the engines lost with it", () => {
    const lost = job({
      nodeStates: [
        { host: "n1", state: "allocated" },
        { host: "n2", state: "allocated*" },
      ],
    });
    const s = islandStatus(view, lost, serving(urls));
    expect(s.status).toBe("FAILED");
    expect(s.processes.filter((p) => p.status === "FAILED").map((p) => [p.id, p.detail])).toEqual([
      [view.engines[1].id, "lost with node n2 (SLURM: allocated*)"],
    ]);
    expect(s.detail).toBe(`RUNNING; ${view.engines[1].id} lost with node n2 (SLURM: allocated*)`);
    // After SLURM gives up: NODE_FAIL, the node down.
    const ended = islandStatus(
      view,
      job({
        state: "NODE_FAIL",
        source: "scontrol",
        hosts: [],
        addrs: [],
        nodeStates: [
          { host: "n1", state: "idle" },
          { host: "n2", state: "down*" },
        ],
      }),
      new Map(),
    );
    expect(ended.status).toBe("FAILED");
    expect(ended.detail).toBe(`NODE_FAIL; ${view.engines[1].id} lost with node n2 (SLURM: down*)`);
    // A cancelled job on a node that later went down is simply over.
    expect(
      islandStatus(
        view,
        job({
          state: "CANCELLED",
          nodeStates: [
            { host: "n1", state: "idle" },
            { host: "n2", state: "down*" },
          ],
        }),
        new Map(),
      ).status,
    ).toBe("SHUTDOWN");
  });

  it("an engine the keeper restarted and not serving yet is RESTARTING, its island DEGRADED while the router and another engine serve; READY again with its restarts counted", () => {
    const restarted = job({
      restarts: [
        {
          node: 1,
          name: view.engines[1].id,
          count: 2,
          last: { at: 1_800_000_000, cause: view.engines[1].id, code: 137 },
        },
      ],
    });
    const down = new Map<string, Probe>([
      [urls[0], ok],
      [urls[1], { health: null, models: null, listsModel: false, error: "ECONNREFUSED" }],
      [urls[2], ok],
    ]);
    const s = islandStatus(view, restarted, down);
    expect(s.status).toBe("DEGRADED");
    expect(s.detail).toBe(`2 of 3 serving; restarting: ${view.engines[1].id}`);
    const engine = s.processes.find((p) => p.id === view.engines[1].id)!;
    expect(engine).toMatchObject({
      status: "RESTARTING",
      restarts: 2,
      lastRestart: { cause: view.engines[1].id, code: 137, at: "2027-01-15T08:00:00.000Z" },
    });
    expect(engine.detail).toBe(
      `restarted 2 time(s), last after ${view.engines[1].id} exited with status 137 at 2027-01-15T08:00:00.000Z; not answering (ECONNREFUSED)`,
    );
    expect(s.processes.find((p) => p.id === view.engines[0].id)).toMatchObject({ restarts: 0, lastRestart: null });
    // Served again: READY, the count kept.
    const back = islandStatus(view, restarted, serving(urls));
    expect(back.status).toBe("READY");
    expect(back.processes.find((p) => p.id === view.engines[1].id)).toMatchObject({ status: "READY", restarts: 2 });
    // The router restarting too: nobody is served, so the island is not DEGRADED but LAUNCHING.
    const routerDown = new Map(down).set(urls[2], {
      health: null,
      models: null,
      listsModel: false,
      error: "ECONNREFUSED",
    });
    expect(islandStatus(view, restarted, routerDown).status).toBe("LAUNCHING");
    expect(fleetStatus([back, s])).toBe("DEGRADED");
  });

  it("a restarted engine that serves other weights than the island's is RESTARTING, kept out of the router until an update reaches it; each engine's version is in the report", () => {
    const restarted = job({
      restarts: [
        {
          node: 1,
          name: view.engines[1].id,
          count: 1,
          last: { at: 1_800_000_000, cause: view.engines[1].id, code: 137 },
        },
      ],
    });
    const versions = (v0: string | null, v1: string | null) =>
      new Map<string, Probe>([
        [urls[0], { ...ok, weightVersion: v0 }],
        [urls[1], { ...ok, weightVersion: v1 }],
        [urls[2], ok],
      ]);
    const s = islandStatus(view, restarted, versions("v2", "default"));
    expect(s.status).toBe("DEGRADED");
    const engine = s.processes.find((p) => p.id === view.engines[1].id)!;
    expect(engine).toMatchObject({ status: "RESTARTING", weightVersion: "default" });
    expect(engine.detail).toContain(
      "serves weight version default, the island's other engines v2: kept out of the router until an update reaches it",
    );
    expect(s.processes.find((p) => p.id === view.engines[0].id)).toMatchObject({
      status: "READY",
      weightVersion: "v2",
    });
    expect(s.processes.find((p) => p.id === "router")).toMatchObject({ weightVersion: null });
    // The update reached it: READY.
    expect(islandStatus(view, restarted, versions("v3", "v3")).status).toBe("READY");
    // Engines that report no version (prime-rl's server) are not compared.
    expect(islandStatus(view, restarted, versions(null, null)).status).toBe("READY");
  });

  it("FAILED as soon as an engine's exit marker appears, naming it, even while the job still runs", () => {
    const s = islandStatus(view, job({ exits: [{ node: 1, name: view.engines[1].id, code: 1 }] }), serving(urls));
    expect(s.status).toBe("FAILED");
    expect(s.processes.find((p) => p.id === view.engines[1].id)).toMatchObject({
      status: "FAILED",
      detail: "exited with status 1",
    });
    expect(s.detail).toContain(`${view.engines[1].id} exited with status 1`);
  });

  it("a job SLURM failed is FAILED with its state and exit code; a cancelled one is SHUTDOWN", () => {
    const failed = islandStatus(
      view,
      job({
        state: "FAILED",
        exitCode: "1:0",
        source: "scontrol",
        hosts: [],
        addrs: [],
        exits: [{ node: 0, name: view.engines[0].id, code: 1 }],
      }),
      new Map(),
    );
    expect(failed.status).toBe("FAILED");
    expect(failed.detail).toBe(`FAILED, exit 1:0; ${view.engines[0].id} exited with status 1`);
    expect(failed.processes.map((p) => p.status)).toEqual(["FAILED", "SHUTDOWN", "SHUTDOWN"]);
    const cancelled = islandStatus(
      view,
      job({
        state: "CANCELLED",
        exitCode: "0:15",
        source: "sacct",
        exits: [{ node: 0, name: view.engines[0].id, code: 143 }],
      }),
      new Map(),
    );
    expect(cancelled.status).toBe("SHUTDOWN");
    expect(cancelled.processes.every((p) => p.status === "SHUTDOWN")).toBe(true);
    expect(islandStatus(view, job({ jobId: null, state: null, source: "none" }), new Map()).status).toBe("SHUTDOWN");
  });

  it("the fleet is as bad as its worst island", () => {
    const ready = islandStatus(view, job({}), serving(urls));
    const pending = islandStatus(view, job({ state: "PENDING" }), new Map());
    expect(fleetStatus([ready, pending])).toBe("PENDING");
    expect(fleetStatus([ready, ready])).toBe("READY");
  });

  it("from an endpoints file alone, an engine that does not answer is LAUNCHING", () => {
    const v = viewFromEndpoints(
      {
        islands: [{ island: 0, routerUrl: null, adminUrls: ["http://h:1/v1"], roles: ["replica"] }],
        planned: { model: "m", target: "kubernetes" },
      },
      "out.json",
    );
    const s = islandStatus(
      v.islands[0],
      undefined,
      new Map([["http://h:1/v1", { health: null, models: null, listsModel: false, error: "ENOTFOUND" }]]),
    );
    expect(s).toMatchObject({
      status: "LAUNCHING",
      processes: [{ id: "engine0", status: "LAUNCHING", detail: "not answering (ENOTFOUND)" }],
    });
  });

  it("an island's endpoints.json names the target that runs it: a local island's is observed as local, a file from before the field as SLURM's", () => {
    for (const [stack, target] of [
      ["local-multi-replica", "local"],
      ["multi-replica", "slurm"],
    ] as const) {
      const p = plan(stack);
      // The result as the create command fills it in (its tokens: host/island-result.ts TOKENS).
      const text = resultTemplate(p, p.islands[0], "job")
        .replace(/__FLEET_ADOPTED__/g, "false")
        .replace(/__FLEET_T_[A-Z]+__/g, "0")
        .replace(/__FLEET_JOB_ID__/g, "7")
        .replace(/__FLEET_NODE_HOST_\d+__/g, "n1")
        .replace(/__FLEET_NODE_ADDR_\d+__/g, "10.0.0.1");
      const doc = runningIslandSchema.parse(JSON.parse(text));
      expect(doc.target).toBe(target);
      expect(viewFromEndpoints(doc, "endpoints.json").target).toBe(target);
      const { target: _, ...before } = doc;
      expect(viewFromEndpoints(before, "endpoints.json").target).toBe("slurm");
    }
  });
});
