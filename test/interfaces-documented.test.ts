/**
 * Issue 42 item 5: every member of the interfaces a new target or engine implements says what it is,
 * and every optional member says what happens without it (`@default`), as cdk8s-plus documents
 * every option. Read from the source with the TypeScript compiler's own parser.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { ROOT } from "./helpers";

/** The interfaces of the target and engine contracts, by file. */
const CONTRACTS: [string, string[]][] = [
  ["components/target.ts", ["Target", "FleetSupport"]],
  ["components/plan/target-hints.ts", ["PlanHints"]],
  ["components/backend.ts", ["DeployTarget"]],
  ["components/plan/engine.ts", ["Engine", "EngineRoutes", "EngineMetricNames"]],
  // The config layer's parts of a target and an engine (components/<kind>/config/, components/plan/engines/<name>/config/).
  ["components/config/target-part.ts", ["TargetConfigPart", "TargetCapabilities", "SettingsContext", "SetupContext"]],
  ["components/config/engine-part.ts", ["EngineConfigPart"]],
];

/** Each member of the named interfaces in `source` that lacks a doc comment, or is optional without `@default`. */
function undocumented(file: string, source: string, names: string[]): string[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const missing: string[] = [];
  sf.forEachChild((n) => {
    if (!ts.isInterfaceDeclaration(n) || !names.includes(n.name.text)) return;
    found.push(n.name.text);
    for (const m of n.members) {
      const docs = ts.getJSDocCommentsAndTags(m).filter(ts.isJSDoc);
      const optional = (ts.isPropertySignature(m) || ts.isMethodSignature(m)) && m.questionToken !== undefined;
      const hasDefault = docs.some((d) => (d.tags ?? []).some((t) => t.tagName.text === "default"));
      const what = `${n.name.text}.${m.name?.getText(sf)}`;
      if (docs.length === 0) missing.push(`${what}: no doc comment`);
      else if (optional && !hasDefault) missing.push(`${what}: optional without @default`);
    }
  });
  for (const name of names) if (!found.includes(name)) missing.push(`${name}: no such interface in ${file}`);
  return missing;
}

describe("the target and engine contracts are documented member by member", () => {
  it.each(CONTRACTS)("%s: every member has a doc comment, every optional one its @default", (file, names) => {
    expect(undocumented(file, fs.readFileSync(path.join(ROOT, file), "utf8"), names)).toEqual([]);
  });

  it("the check can fail: a member without a comment, an optional one without @default, an interface gone", () => {
    const source = [
      "export interface Target {",
      "  /** Documented. */",
      "  kind: string;",
      "  bare: number;",
      "  /** Optional, but says nothing of its absence. */",
      "  extra?: string;",
      "  /**",
      "   * Optional and says it.",
      "   * @default undefined (none)",
      "   */",
      "  fine?(): void;",
      "}",
    ].join("\n");
    expect(undocumented("t.ts", source, ["Target", "Gone"])).toEqual([
      "Target.bare: no doc comment",
      "Target.extra: optional without @default",
      "Gone: no such interface in t.ts",
    ]);
  });
});
