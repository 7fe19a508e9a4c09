import { describe, expect, it } from "vitest";
import { bytesQuantity, cpuQuantity, quantityValue, sumBytes } from "../../components/kubernetes/quantity";

describe("Kubernetes quantities as the API server writes them back (issue 31, fault 2)", () => {
  // apimachinery's canonical form: the largest binary suffix that keeps the number whole. A
  // LeaderWorkerSet's webhook rewrote 163840Mi to 160Gi, which the next `pulumi up` showed as a change.
  it.each([
    [160 * 2 ** 30, "160Gi"],
    [163840 * 2 ** 20, "160Gi"],
    [1536 * 2 ** 20, "1536Mi"],
    [2 ** 40, "1Ti"],
    [3 * 2 ** 50, "3Pi"],
    [1, "1Mi"],
    [0, "0"],
  ])("%d bytes is %s", (bytes, q) => {
    expect(bytesQuantity(bytes)).toBe(q);
    // Never less than asked: MiB are rounded up, and the suffix only renames the same amount.
    expect(quantityValue(q)).toBeGreaterThanOrEqual(bytes);
  });

  it("sums mixed suffixes in bytes and writes the canonical sum", () => {
    expect(sumBytes("128Gi", "16Gi")).toBe("144Gi");
    expect(sumBytes("1Gi", "512Mi")).toBe("1536Mi");
    expect(sumBytes("100G")).toBe(`${Math.ceil(100e9 / 2 ** 20)}Mi`);
  });

  it("CPUs: whole cores bare, else millicores", () => {
    expect(cpuQuantity(32)).toBe("32");
    expect(cpuQuantity(2.5)).toBe("2500m");
  });
});
