import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./helpers";
import { sourceFiles } from "./product-sources";

/*
 * One concept per file (docs/development.md): no product file over MAX_LINES lines (issue 42). A file
 * that grows past it holds more than one thing; split it by what it holds.
 */
const MAX_LINES = 450;

const lines = (f: string) => fs.readFileSync(path.join(ROOT, f), "utf8").split("\n").length - 1;

describe("product files stay small", () => {
  const product = ["index.ts", ...sourceFiles("components"), ...sourceFiles("bin")];

  it("the walk sees the program, and its largest files are near the bound (sanity check of the check)", () => {
    expect(product.length).toBeGreaterThan(150);
    expect(Math.max(...product.map(lines))).toBeGreaterThan(MAX_LINES / 2);
  });

  it(`no product file is over ${MAX_LINES} lines`, () => {
    expect(product.filter((f) => lines(f) > MAX_LINES).map((f) => `${f}: ${lines(f)} lines`)).toEqual([]);
  });
});
