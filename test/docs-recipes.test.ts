import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { ENGINE_PARTS } from "../components/config/engine-registry";
import { TARGETS } from "../components/config/target-registry";
import { ROOT } from "./helpers";

/*
 * docs/development.md's recipes for a new target and a new engine say how many product files
 * outside its folder each needs. Checked here against the built-in ones: every file a recipe lists
 * exists and names each built-in target (or engine) on one of its lines, and the count the recipe
 * states is the number it lists. (That a target or an engine needs no product file at all when it
 * registers at run time is test/fixture-target/'s and test/fixture-engine/'s to show.)
 */

const WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];
const doc = fs.readFileSync(path.join(ROOT, "docs", "development.md"), "utf8");

/** A recipe's section: from its heading to the next one. */
function section(heading: string): string {
  const start = doc.indexOf(`### ${heading}\n`);
  expect(start, heading).toBeGreaterThan(0);
  const end = doc.indexOf("\n### ", start + 1);
  return doc.slice(start, end < 0 ? undefined : end);
}

/** The product files a recipe's numbered steps start with (the first code span of each step), but the folder's own. */
function listedFiles(text: string, folder: RegExp): string[] {
  return [...text.matchAll(/^\d+\. `([^`]+)`/gm)].map((m) => m[1]).filter((p) => p.endsWith(".ts") && !folder.test(p));
}

/** The count the recipe states: "<Word> files outside the folder". */
function statedCount(text: string): number {
  const m = /\b([A-Z][a-z]+) files outside the folder\b/.exec(text.replace(/\s+/g, " "));
  expect(m, "the recipe states its count").not.toBeNull();
  return WORDS.indexOf(m![1].toLowerCase());
}

describe("docs/development.md recipes state their real count", () => {
  it("the parsing finds the steps (sanity check of the check)", () => {
    const probe =
      "1. `components/<t>/config/`: x\n2. `components/a.ts`: y\n3. `components/b.ts`: z\nTwo files outside the folder.";
    expect(listedFiles(probe, /<t>/)).toEqual(["components/a.ts", "components/b.ts"]);
    expect(statedCount(probe)).toBe(2);
  });

  it("a target: every listed file names each built-in target, and the count is the list's", () => {
    const text = section("a target");
    const files = listedFiles(text, /^components\/<t>\//);
    expect(statedCount(text)).toBe(files.length);
    for (const file of files) {
      const source = fs.readFileSync(path.join(ROOT, file), "utf8");
      for (const kind of TARGETS)
        expect(source, `${file} names ${kind}`).toMatch(new RegExp(`["'][./]+([\\w-]+/)*${kind}(/[\\w-]+)*["']`));
    }
  });

  it("an engine: every listed file names each built-in engine, and the count is the list's", () => {
    const text = section("an engine");
    const files = listedFiles(text, /^components\/plan\/engines\/<e>\//);
    expect(statedCount(text)).toBe(files.length);
    for (const file of files) {
      const source = fs.readFileSync(path.join(ROOT, file), "utf8");
      for (const { name } of ENGINE_PARTS)
        expect(source, `${file} names ${name}`).toMatch(new RegExp(`["']${name}["']|engines/${name}/`));
    }
  });
});
