/**
 * `fleet keep`'s loop (components/ops/keep.ts) against a scripted fleet: what it checks, when it
 * runs `pulumi up`, its budget, and what it logs. The real loop against a real run and the real
 * Pulumi engine is in test/e2e/pulumi-local.e2e.test.ts.
 */
import { describe, expect, it } from "vitest";
import type { FleetStatusReport } from "../../components/ops/commands";
import { keep, KEEP_DEFAULTS, type KeepOptions } from "../../components/ops/keep";

const island = (k: number, status: string, jobId = `${50 + k}`) => ({
  island: k,
  status,
  jobName: `s-i${k}`,
  jobId,
  schedulerState: status === "SHUTDOWN" ? "CANCELLED" : "RUNNING",
  detail: "",
  nodes: [],
  processes: [],
});
const serving: FleetStatusReport = {
  status: "READY",
  model: "m",
  target: "slurm",
  islands: [island(0, "READY"), island(1, "READY")],
} as unknown as FleetStatusReport;
const oneGone: FleetStatusReport = {
  ...serving,
  status: "DEGRADED",
  islands: [island(0, "READY"), island(1, "SHUTDOWN")],
  replace: { islands: [1], command: "pulumi up --stack s" },
} as unknown as FleetStatusReport;

/** Runs keep over a script of check answers (an Error: the check fails); ups answer from `upCodes`. */
async function run(script: (FleetStatusReport | Error)[], o: Partial<KeepOptions> = {}, upCodes: number[] = []) {
  let t = 0;
  let round = 0;
  const lines: string[] = [];
  let ups = 0;
  const code = await keep(
    { ...KEEP_DEFAULTS, every: 60, ...o },
    {
      check: async () => {
        const a = script[Math.min(round++, script.length - 1)];
        if (a instanceof Error) throw a;
        return a;
      },
      up: async () => {
        t += 30_000;
        return { code: upCodes[ups++] ?? 0, tail: "error: the create failed" };
      },
      log: (l) => lines.push(l),
      sleep: async (s) => {
        t += s * 1000;
      },
      now: () => t,
      stopped: () => round >= script.length,
    },
  );
  return { code, lines, ups, rounds: round };
}

describe("fleet keep", () => {
  it("a serving fleet: no up, one line per change of state, not per round", async () => {
    const r = await run([serving, serving, serving]);
    expect(r).toMatchObject({ code: 0, ups: 0, rounds: 3 });
    expect(r.lines).toEqual(["READY: island 0 READY, island 1 READY"]);
  });

  it("an island gone: one pulumi up, named, timed and counted against the budget; then the fleet serves again", async () => {
    const r = await run([serving, oneGone, serving]);
    expect(r.ups).toBe(1);
    expect(r.lines).toEqual([
      "READY: island 0 READY, island 1 READY",
      "island 1 (job 51 CANCELLED) gone: pulumi up --stack s (up 1 of 3 in 3600 s)",
      "pulumi up done in 30.0 s",
      "READY: island 0 READY, island 1 READY",
    ]);
  });

  it("an island that released itself when idle is left released: no up", async () => {
    const idle = {
      ...oneGone,
      islands: [island(0, "READY"), island(1, "IDLE-RELEASED")],
    } as unknown as FleetStatusReport;
    const r = await run([idle, idle]);
    expect(r).toMatchObject({ code: 0, ups: 0 });
    expect(r.lines).toEqual(["DEGRADED: island 0 READY, island 1 IDLE-RELEASED"]);
  });

  it("past --max-ups within --window it gives up, exit 1, saying why; ups older than the window no longer count", async () => {
    const stuck = await run([oneGone, oneGone, oneGone], { maxUps: 2 });
    expect(stuck.code).toBe(1);
    expect(stuck.ups).toBe(2);
    expect(stuck.lines.at(-1)).toBe(
      "gave up: island 1 (job 51 CANCELLED) gone, and 2 pulumi up(s) already in the last 3600 s (--max-ups 2); see fleet logs",
    );
    // With checks an hour apart, every up falls out of the window before the next.
    const slow = await run([oneGone, oneGone, oneGone, serving], { maxUps: 1, every: 3600 });
    expect(slow).toMatchObject({ code: 0, ups: 3 });
  });

  it("a check that fails starts nothing and says so; the next round checks again", async () => {
    const r = await run([new Error("ssh: connection refused"), oneGone, serving]);
    expect(r.ups).toBe(1);
    expect(r.lines[0]).toBe("could not check the fleet, so nothing was done: ssh: connection refused");
  });

  it("a failed up is logged with its tail and counted; --once exits with the up's status", async () => {
    const failed = await run([oneGone], { once: true }, [255]);
    expect(failed).toMatchObject({ code: 1, ups: 1 });
    expect(failed.lines.at(-1)).toBe("pulumi up failed (exit 255) after 30.0 s:\nerror: the create failed");
    expect(await run([oneGone], { once: true })).toMatchObject({ code: 0, ups: 1 });
    expect(await run([serving], { once: true })).toMatchObject({ code: 0, ups: 0 });
    expect(await run([new Error("squeue failed")], { once: true })).toMatchObject({ code: 1, ups: 0 });
  });
});
