import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { TARGETS } from "../components/config/target-registry";
import { ROOT } from "./helpers";
import { productFiles, stringLiterals } from "./product-sources";

/*
 * Targets are looked up by kind in the registries, never chosen by comparing names: a new target is
 * one folder plus a registry line, and no `=== "slurm" ... : kubernetes` branch can silently send it
 * down another target's path. Only a target's own folder (components/<kind>/, derived from the
 * registry: no list kept by hand) may name it; the config layer asks the target's part
 * (components/<kind>/config/) or its capabilities instead (issue 42).
 */

const name = `(?:${TARGETS.join("|")})`;
/** `x === "slurm"`, `"kubernetes" !== x`, `target.kind === ...`, `.target === ...`, `switch (...target...)`. */
const COMPARISONS = [
  new RegExp(`[!=]==\\s*["'\`]${name}["'\`]`),
  new RegExp(`["'\`]${name}["'\`]\\s*[!=]==`),
  /\btarget(?:\.kind)?\s*[!=]==(?!\s*(?:undefined|null)\b)/,
  /[!=]==\s*[\w.]*\btarget(?:\.kind)?\b/,
  /switch\s*\([^)]*\btarget\b/,
];

/** A comparison of a table name that is not a target (prime-rl's own [slurm]) says so on the line before. */
const NOT_A_TARGET = /\/\/ not a target: \S/;

function comparisons(file: string, text: string): string[] {
  const lines = text.split("\n");
  return lines.flatMap((line, k) =>
    COMPARISONS.some((re) => re.test(line)) && !NOT_A_TARGET.test(lines[k - 1] ?? "")
      ? [`${file}:${k + 1}: ${line.trim()}`]
      : [],
  );
}

/** Every string literal whose text is a target's name (product-sources.ts stringLiterals). */
const targetNameStrings = (file: string, text: string) =>
  stringLiterals(file, text, (s) => (TARGETS as readonly string[]).includes(s));

/** `settingsFor(cfg, "slurm")`: a lookup by a literal name is a comparison in disguise. */
const SETTINGS_FOR_LITERAL = /settingsFor\s*\([^)]*["'`]/;

const ownFolders = TARGETS.map((kind) => `components/${kind}/`);
const everywhere = productFiles();
/** The program outside the target folders. */
const program = everywhere.filter((f) => !ownFolders.some((own) => f.startsWith(own)));
const read = (f: string) => fs.readFileSync(path.join(ROOT, f), "utf8");

describe("targets are looked up, not compared", () => {
  it("the checks find what they look for (sanity check of the checks)", () => {
    const probe = [
      'if (plan.target === "slurm") x();',
      "if (cfg.target.kind !== k) y();",
      'const other = "kubernetes" === t ? 1 : 2;',
      "const t = targetOf(plan.target);",
      "// not a target: prime-rl's own [slurm] table",
      'if (path === "slurm") z();',
    ].join("\n");
    expect(comparisons("probe.ts", probe)).toHaveLength(3);
    const strings = [
      'const kind = "local";',
      "const t = { slurm: 1 }; // a comment naming slurm and `kubernetes`",
      "const u = `kubernetes`;",
      'import { x } from "slurm";',
    ].join("\n");
    expect(targetNameStrings("probe.ts", strings)).toEqual(['probe.ts:1: "local"', "probe.ts:3: `kubernetes`"]);
    expect(SETTINGS_FOR_LITERAL.test('const kube = settingsFor(cfg, "kubernetes");')).toBe(true);
    expect(SETTINGS_FOR_LITERAL.test("const s = settingsFor(cfg, part.kind);")).toBe(false);
  });

  it("the program outside the target folders is most of it (the folders come from the registry)", () => {
    expect(ownFolders).toEqual(expect.arrayContaining(["components/slurm/", "components/kubernetes/"]));
    expect(program.length).toBeGreaterThan(everywhere.length / 2);
    expect(program).toContain("components/config/target-registry.ts");
  });

  it("nothing reads a config through the plan: the plan carries what the targets read", () => {
    const reads = everywhere.flatMap((f) =>
      read(f)
        .split("\n")
        .flatMap((line, k) => (/\bplan\.config\b/.test(line) ? [`${f}:${k + 1}`] : [])),
    );
    expect(reads).toEqual([]);
  });

  it("no file outside a target's folder compares a target's name", () => {
    expect(program.flatMap((f) => comparisons(f, read(f)))).toEqual([]);
  });

  it("no file outside a target's folder spells a target's name as a string", () => {
    expect(program.flatMap((f) => targetNameStrings(f, read(f)))).toEqual([]);
  });

  it("no lookup of a target's settings by a literal name", () => {
    expect(everywhere.filter((f) => SETTINGS_FOR_LITERAL.test(read(f)))).toEqual([]);
  });
});
