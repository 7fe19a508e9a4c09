import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { ENGINE_PARTS } from "../components/config/engine-registry";
import { ENGINE_NAMES as CONFIG_ENGINES } from "../components/config/schema/inference";
import { ENGINE_NAMES } from "../components/plan/engine-names";
import { ROOT } from "./helpers";
import { sourceFiles } from "./product-sources";

/*
 * Engines are looked up by name in their registries (components/plan/engines.ts for the planner,
 * components/config/engine-registry.ts for the config layer), never chosen by comparing names: what
 * one engine takes or refuses lives in its folder, components/plan/engines/<name>/ (its config part
 * in config/). Only that folder and the planner's registry beside it may compare an engine's name
 * (issue 42). A comparison of a word that is not an engine (prime-rl's [vllm] table, a launcher
 * type, a program name) says so on the line before.
 */

const ENGINE_FOLDER = "components/plan/engines/";
/** The planner's registry: components/plan/engines.ts, beside the folder it lists. */
const REGISTRY = `${ENGINE_FOLDER.replace(/\/$/, "")}.ts`;

const name = `(?:${ENGINE_NAMES.join("|")})`;
/** `x === "sglang"`, `"vllm" !== x`, `case "prime-rl":`. */
const COMPARISONS = [
  new RegExp(`[!=]==\\s*["'\`]${name}["'\`]`),
  new RegExp(`["'\`]${name}["'\`]\\s*[!=]==`),
  new RegExp(`\\bcase\\s*["'\`]${name}["'\`]\\s*:`),
];
const NOT_AN_ENGINE = /\/\/ not an engine: \S/;

function comparisons(file: string, text: string): string[] {
  const lines = text.split("\n");
  return lines.flatMap((line, k) =>
    COMPARISONS.some((re) => re.test(line)) && !NOT_AN_ENGINE.test(lines[k - 1] ?? "")
      ? [`${file}:${k + 1}: ${line.trim()}`]
      : [],
  );
}

const program = ["index.ts", ...sourceFiles("components"), ...sourceFiles("bin")].filter(
  (f) => !f.startsWith(ENGINE_FOLDER) && f !== REGISTRY,
);

describe("engines are looked up, not compared", () => {
  it("the check finds a comparison (sanity check of the check)", () => {
    const probe = [
      'if (cfg.engine === "sglang") x();',
      'const v = "vllm" !== e;',
      'switch (e) { case "prime-rl": break; }',
      "const part = enginePart(cfg.engine);",
      "// not an engine: prime-rl's [vllm] table",
      'if (path[0] === "vllm") y();',
    ].join("\n");
    expect(comparisons("probe.ts", probe)).toHaveLength(3);
  });

  it("no file outside the engines' folder and its registry compares an engine's name", () => {
    expect(program.length).toBeGreaterThan(100);
    expect(program.flatMap((f) => comparisons(f, fs.readFileSync(path.join(ROOT, f), "utf8")))).toEqual([]);
  });

  it("every value of `engine` has its config part, and every config part a value", () => {
    expect(ENGINE_PARTS.map((p) => p.name).sort()).toEqual([...CONFIG_ENGINES].sort());
    for (const part of ENGINE_PARTS) expect(ENGINE_NAMES as readonly string[]).toContain(part.name);
  });
});
