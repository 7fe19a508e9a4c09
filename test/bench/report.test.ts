import { describe, expect, it } from "vitest";
import { median, meets, sectionsTable } from "../../bench/report";

describe("bench report", () => {
  it("median of odd and even samples, unsorted", () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it("a figure meets its target, misses it, or has none", () => {
    expect(meets({ name: "t", value: 1000, unit: "ms", target: { op: "<=", value: 1000 } })).toBe(true);
    expect(meets({ name: "t", value: 1000.1, unit: "ms", target: { op: "<=", value: 1000 } })).toBe(false);
    expect(meets({ name: "n", value: 3, unit: "x", target: { op: ">=", value: 4 } })).toBe(false);
    expect(meets({ name: "n", value: 3, unit: "x" })).toBeUndefined();
  });

  it("the table shows each figure with its baseline, its target and a NO where it is missed, and skipped sections say why", () => {
    const text = sectionsTable([
      { id: "a", title: "A", figures: [{ name: "slow", value: 2.5, unit: "x", target: { op: "<=", value: 1.5 } }] },
      {
        id: "c",
        title: "C",
        figures: [{ name: "fast", value: 0.05, unit: "s", baseline: { value: 0.74, from: "issue 19" } }],
      },
      { id: "b", title: "B", figures: [], skipped: "no cluster" },
    ]);
    expect(text).toMatch(/│ a +│ slow +│ 2\.5 x +│ +│ <= 1\.5 x +│ NO +│/);
    expect(text).toMatch(/│ c +│ fast +│ 0\.05 s +│ 0\.74 s \(issue 19\) +│/);
    expect(text).toMatch(/│ b +│ skipped: no cluster/);
  });
});
