/**
 * Pulumi.yaml as the real engine reads it (the mocks never do). Found under the real CLI v3.274.1
 * (issue 25): a project config key declared without a default is required, and the engine refused
 * every stack that had not set it ("validating stack config: Stack 'multi-replica' is missing
 * configuration value 'stackFile'") before the program ran.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { assertBuildFresh, newerSource } from "../components/build-freshness";
import { ROOT } from "./helpers";
import { drainRpcs } from "./program-harness";

afterEach(drainRpcs);

const project = parseYaml(fs.readFileSync(path.join(ROOT, "Pulumi.yaml"), "utf8")) as {
  main?: string;
  runtime: { name: string; options?: { typescript?: boolean } };
  config?: Record<string, { type: string; default?: unknown; description?: string }>;
};

describe("Pulumi.yaml", () => {
  it("declares no required config key: each has a default, so a stack without it still runs", () => {
    for (const [key, decl] of Object.entries(project.config ?? {})) {
      expect(decl, `config.${key}`).toHaveProperty("default");
      expect(decl.description, `config.${key}`).toBeTruthy();
    }
    expect(project.config?.stackFile?.default).toBe("");
  });

  it("runs the compiled program that npm's build writes, not TypeScript compiled on every preview", () => {
    expect(project.runtime.options?.typescript).toBe(false);
    expect(project.main).toBe("dist/index.js");
    // tsconfig.build.json (JSON with comments) compiles index.ts into dist/.
    const build = fs.readFileSync(path.join(ROOT, "tsconfig.build.json"), "utf8");
    expect(build).toMatch(/"outDir": "dist"/);
    expect(build).toMatch(/"include": \[[^\]]*"index\.ts"/);
  });
});

describe("the compiled program refuses to run older than its sources", () => {
  const tmp: string[] = [];
  afterEach(() => tmp.splice(0).forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

  function tree(): { root: string; compiled: string; source: string } {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-build-"));
    tmp.push(root);
    fs.mkdirSync(path.join(root, "components", "slurm"), { recursive: true });
    fs.mkdirSync(path.join(root, "dist"));
    const source = path.join(root, "components", "slurm", "x.ts");
    fs.writeFileSync(path.join(root, "index.ts"), "");
    fs.writeFileSync(source, "");
    const compiled = path.join(root, "dist", "index.js");
    fs.writeFileSync(compiled, "");
    const past = new Date(Date.now() - 60_000);
    for (const f of [path.join(root, "index.ts"), source]) fs.utimesSync(f, past, past);
    return { root, compiled, source };
  }

  it("passes a fresh build and names the first newer source of a stale one", () => {
    const { root, compiled, source } = tree();
    expect(newerSource(root, compiled)).toBeUndefined();
    expect(() => assertBuildFresh(root, compiled)).not.toThrow();
    fs.utimesSync(source, new Date(), new Date(Date.now() + 5_000));
    expect(newerSource(root, compiled)).toBe(source);
    expect(() => assertBuildFresh(root, compiled)).toThrow(
      "components/slurm/x.ts is newer than the compiled program dist/index.js: run `npm run build` first",
    );
  });

  it("does not apply when the program runs from source (vitest, tsx)", () => {
    const { root, source } = tree();
    fs.utimesSync(source, new Date(), new Date(Date.now() + 5_000));
    expect(() => assertBuildFresh(root, path.join(root, "index.ts"))).not.toThrow();
  });
});
