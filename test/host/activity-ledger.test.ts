/**
 * The activity ledger's format (host/activity-ledger.ts): what the monitors write and what the idle
 * release, `fleet status` and `fleet cost` read. Shares never credit a dead monitor's last state.
 */
import { describe, expect, it } from "vitest";
import {
  ACTIVITY_HEARTBEAT_S,
  activityShares,
  parseActivity,
  parseIdleReleased,
} from "../../components/host/activity-ledger";

describe("parseActivity", () => {
  it("reads `<epoch> <state>` lines, CRLF too, and skips torn or unknown lines", () => {
    const text = "100 busy\r\n110 idle\n115 asleep\n120 paused\n12";
    expect(parseActivity(text)).toEqual([
      { at: 100, state: "busy" },
      { at: 110, state: "idle" },
      { at: 120, state: "paused" },
    ]);
  });
  it("drops a line whose time steps back, keeping the order the shares need", () => {
    expect(parseActivity("100 busy\n90 idle\n130 idle").map((e) => e.at)).toEqual([100, 130]);
  });
});

describe("parseIdleReleased", () => {
  it("reads the marker, and nothing from a torn one", () => {
    expect(parseIdleReleased("1700000100 1700000080\n")).toEqual({ at: 1700000100, idleSince: 1700000080 });
    expect(parseIdleReleased("1700000100")).toBeUndefined();
  });
});

describe("activityShares", () => {
  const e = parseActivity("100 busy\n130 idle\n150 paused\n160 busy");
  it("splits a window between the states, clipped to the window", () => {
    expect(activityShares(e, 120, 170)).toEqual({ busy: 20, idle: 20, paused: 10, unseen: 0, unrecorded: 0 });
  });
  it("counts time before the first line as unrecorded", () => {
    expect(activityShares(e, 0, 110)).toMatchObject({ busy: 10, unrecorded: 100 });
  });
  it("never credits a dead monitor's last state beyond twice the heartbeat", () => {
    const s = activityShares(e, 100, 160 + 10 * ACTIVITY_HEARTBEAT_S);
    expect(s.busy).toBe(30 + 2 * ACTIVITY_HEARTBEAT_S);
    expect(s.unrecorded).toBe(8 * ACTIVITY_HEARTBEAT_S);
  });
  it("is all zero for an empty window", () => {
    expect(activityShares(e, 200, 200)).toEqual({ busy: 0, idle: 0, paused: 0, unseen: 0, unrecorded: 0 });
  });
});
