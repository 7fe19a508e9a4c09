import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { allTargets } from "../components/targets";
import { ROOT } from "./helpers";

/*
 * Targets are looked up by kind in the registries, never chosen by comparing names: a new target is
 * one folder plus a registry line, and no `=== "slurm" ... : kubernetes` branch can silently send it
 * down another target's path. Only the target folders and the registries may name a target.
 */

const ALLOWED = [
  "components/slurm/",
  "components/kubernetes/",
  "components/local/",
  "components/targets.ts",
  "components/fleet/deploy-targets.ts",
  // The config layer's list of kinds, and the one place it tells them apart (settingsFor).
  "components/config/target-kinds.ts",
];

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) return sourceFiles(rel);
    return e.name.endsWith(".ts") ? [rel] : [];
  });
}

const kinds = allTargets().map((t) => t.kind);
const name = `(?:${kinds.join("|")})`;
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

describe("targets are looked up, not compared", () => {
  const program = ["index.ts", ...sourceFiles("components"), ...sourceFiles("bin")].filter(
    (f) => !ALLOWED.some((a) => f.startsWith(a)),
  );

  it("the check finds a comparison (sanity check of the check)", () => {
    const probe = [
      'if (plan.target === "slurm") x();',
      "if (cfg.target.kind !== k) y();",
      'const other = "kubernetes" === t ? 1 : 2;',
      "const t = targetOf(plan.target);",
      "// not a target: prime-rl's own [slurm] table",
      'if (path === "slurm") z();',
    ];
    expect(comparisons("probe.ts", probe.join("\n"))).toHaveLength(3);
  });

  it("nothing reads a config through the plan: the plan carries what the targets read", () => {
    const everywhere = ["index.ts", ...sourceFiles("components"), ...sourceFiles("bin")];
    const reads = everywhere.flatMap((f) =>
      fs
        .readFileSync(path.join(ROOT, f), "utf8")
        .split("\n")
        .flatMap((line, k) => (/\bplan\.config\b/.test(line) ? [`${f}:${k + 1}`] : [])),
    );
    expect(reads).toEqual([]);
  });

  it("no file outside the target folders and the registries compares a target's name", () => {
    expect(program.flatMap((f) => comparisons(f, fs.readFileSync(path.join(ROOT, f), "utf8")))).toEqual([]);
  });
});
