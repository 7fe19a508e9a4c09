import * as fs from "node:fs";
import * as path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { TARGETS } from "../components/config/target-registry";
import { ROOT } from "./helpers";

/*
 * The module structure, checked: no import cycles, between files or between folders of components/,
 * and each backend (components/slurm, components/kubernetes) used only through its index (the pure
 * side) or its deploy module (the Pulumi side). Imports
 * are read with the TypeScript compiler's own pre-processor, type-only ones included. The registry
 * (components/targets.ts) loads the backends lazily: no import statement of it names one.
 */

/** Every target's folder: components/<kind>. */
const BACKENDS = TARGETS.map((kind) => `components/${kind}`);

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) return e.name === "node_modules" ? [] : sourceFiles(rel);
    return /\.ts$/.test(e.name) && !e.name.endsWith(".d.ts") ? [rel] : [];
  });
}

/** A relative specifier as the file it names (ROOT-relative), or undefined for packages and non-TS files. */
function resolve(from: string, spec: string): string | undefined {
  if (!spec.startsWith(".")) return undefined;
  const base = path.posix.join(path.posix.dirname(from), spec);
  return [`${base}.ts`, `${base}/index.ts`].find((f) => fs.existsSync(path.join(ROOT, f)));
}

/** Every file's project imports: static, type-only, re-exports, import() and require(). */
function importGraph(files: string[]): Map<string, string[]> {
  return new Map(
    files.map((file) => {
      const info = ts.preProcessFile(fs.readFileSync(path.join(ROOT, file), "utf8"), true, true);
      const targets = info.importedFiles
        .map((f) => resolve(file, f.fileName))
        .filter((f): f is string => f !== undefined);
      return [file, [...new Set(targets)]];
    }),
  );
}

/** Strongly connected components with more than one member, or a member importing itself (Tarjan). */
function cycles(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/**
 * A target's or an engine's config part (components/<kind>/config/, components/plan/engines/<name>/config/):
 * its share of the config layer (issue 42).
 */
const configPart = (file: string) =>
  BACKENDS.some((b) => file.startsWith(`${b}/config/`)) || /^components\/plan\/engines\/[^/]+\/config\//.test(file);

/**
 * components/<folder>/... as its folder, a target's config part as components/config (the layer it
 * belongs to); top-level files of components/ and elsewhere as themselves.
 */
const unit = (file: string) =>
  configPart(file)
    ? "components/config"
    : /^components\/[^/]+\//.test(file)
      ? file.split("/").slice(0, 2).join("/")
      : file;

const program = ["index.ts", ...sourceFiles("components"), ...sourceFiles("bin")];
const everything = [...program, ...sourceFiles("bench"), ...sourceFiles("test")];

/** A file's `import` statements that load a module at run time (not `import type`), as the files they name. */
function valueImports(file: string): string[] {
  const source = ts.createSourceFile(file, fs.readFileSync(path.join(ROOT, file), "utf8"), ts.ScriptTarget.ES2022);
  return source.statements.flatMap((s) =>
    ts.isImportDeclaration(s) && !s.importClause?.isTypeOnly && ts.isStringLiteral(s.moduleSpecifier)
      ? [resolve(file, s.moduleSpecifier.text) ?? s.moduleSpecifier.text]
      : [],
  );
}

describe("import structure", () => {
  it("the walker sees the program's imports (sanity check of the check)", () => {
    const graph = importGraph(program);
    expect(graph.get("index.ts")).toContain("components/fleet/inference-deployment.ts");
    expect(graph.get("components/fleet/deploy-targets.ts")).toEqual(
      expect.arrayContaining(["components/slurm/deploy.ts", "components/kubernetes/deploy.ts"]),
    );
    expect(
      cycles(
        new Map([
          ["a", ["b"]],
          ["b", ["c"]],
          ["c", ["a"]],
          ["d", ["a"]],
        ]),
      ),
    ).toEqual([["a", "b", "c"]]);
  });

  it("no file import cycle in the program (components, index.ts, bin)", () => {
    expect(cycles(importGraph(program))).toEqual([]);
  });

  it("no folder of components/ imports one that imports it back", () => {
    const graph = new Map<string, Set<string>>();
    for (const [file, targets] of importGraph(program)) {
      const from = unit(file);
      if (!graph.has(from)) graph.set(from, new Set());
      for (const t of targets) if (unit(t) !== from) graph.get(from)!.add(unit(t));
    }
    expect(cycles(new Map([...graph].map(([k, v]) => [k, [...v]])))).toEqual([]);
  });

  it("a target folder imports nothing from components/config/ or any config part: it reads the plan (issue 26)", () => {
    const violations = [...importGraph(program)].flatMap(([file, targets]) =>
      BACKENDS.some((b) => file.startsWith(`${b}/`)) && !configPart(file)
        ? targets.filter((t) => t.startsWith("components/config/") || configPart(t)).map((t) => `${file} -> ${t}`)
        : [],
    );
    expect(violations).toEqual([]);
  });

  it("a target's or an engine's config part imports only the config layer: components/config/ and its own folder (issue 42)", () => {
    const parts = [...importGraph(program)].filter(([file]) => configPart(file));
    expect(parts.map(([file]) => file)).toEqual(
      expect.arrayContaining([
        "components/kubernetes/config/rules.ts",
        "components/plan/engines/sglang/config/rules.ts",
      ]),
    );
    const violations = parts.flatMap(([file, targets]) => {
      const own = file.slice(0, file.indexOf("/config/") + "/config/".length);
      return targets
        .filter(
          (t) => !t.startsWith("components/config/") && !t.startsWith(own) && !t.startsWith("components/upstream/"),
        )
        .map((t) => `${file} -> ${t}`);
    });
    expect(violations).toEqual([]);
  });

  it("the target registry names every backend but imports none: each loads on lookup (plan's start, docs/benchmarks.md)", () => {
    const registry = "components/targets.ts";
    expect(importGraph([registry]).get(registry)).toEqual(expect.arrayContaining(BACKENDS.map((b) => `${b}/index.ts`)));
    expect(valueImports(registry).filter((f) => BACKENDS.some((b) => f.startsWith(`${b}/`)))).toEqual([]);
  });

  it("a backend is imported only through its index (pure), its deploy module (Pulumi) or its config part's index (the config layer), except by itself and its own tests", () => {
    const violations: string[] = [];
    for (const [file, targets] of importGraph(everything)) {
      for (const backend of BACKENDS) {
        const ownTests = `test/${backend.split("/")[1]}/`;
        if (file.startsWith(`${backend}/`) || file.startsWith(ownTests)) continue;
        for (const t of targets)
          if (
            t.startsWith(`${backend}/`) &&
            ![`${backend}/index.ts`, `${backend}/deploy.ts`, `${backend}/config/index.ts`].includes(t)
          )
            violations.push(`${file} -> ${t}`);
      }
    }
    expect(violations).toEqual([]);
  });
});
