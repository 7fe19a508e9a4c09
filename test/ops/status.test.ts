import { describe, expect, it } from "vitest";
import { loadConfigFile } from "../../components/config";
import { viewFromEndpoints, viewFromPlan } from "../../components/ops/fleet-view";
import type { JobReport } from "../../components/slurm";
import { fleetStatus, islandStatus, type Probe } from "../../components/ops/status";
import { buildPlan } from "../../components/planner";
import { resolveStackFile } from "../../components/stack-file";

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
  nodeStates: [
    { host: "n1", state: "allocated" },
    { host: "n2", state: "allocated" },
  ],
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
});
