import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { TARGETS } from "../../components/config/target-registry";
import { builtCli, ROOT } from "../helpers";

/*
 * What `plan` loads at start, compiled (docs/benchmarks.md, cli-start): only the stack's own target
 * (components/targets.ts loads each backend on lookup), no yaml package (the built-in catalog is
 * read from the JSON `npm run build` writes), no mustache or cli-table3 until used, and no upstream
 * flag manifest a stack does not check against.
 */

/** The files and packages a compiled `plan <args>` loaded, relative to dist/ or as node_modules/<package>. */
function loaded(args: string[]): string[] {
  const probe = `const code = require(${JSON.stringify(builtCli("plan"))}).main(${JSON.stringify(args)});
process.stderr.write("\\nLOADED " + JSON.stringify({ code, files: Object.keys(require.cache) }) + "\\n");`;
  const r = spawnSync(process.execPath, ["-e", probe], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
  const line = r.stderr.split("\n").find((l) => l.startsWith("LOADED "));
  if (!line) throw new Error(`plan ${args.join(" ")}: ${r.stderr}`);
  const { code, files } = JSON.parse(line.slice("LOADED ".length)) as { code: number; files: string[] };
  expect(code, r.stderr).toBe(0);
  return files.map((f) =>
    f.includes("/node_modules/")
      ? `node_modules/${f.split("/node_modules/").pop()!.split("/")[0]}`
      : f.slice(f.indexOf("/dist/") + 6),
  );
}

const STACKS = { slurm: "single-node", kubernetes: "k8s-single-node", local: "local-single-node" } as const;

describe("plan loads what the stack needs, at start", () => {
  it.each(TARGETS)("a %s stack loads no other target's backend, no yaml and no mustache", (kind) => {
    const files = loaded([STACKS[kind]]);
    expect(files.filter((f) => f.startsWith(`components/${kind}/`)).length).toBeGreaterThan(0);
    const others = TARGETS.filter((k) => k !== kind).map((k) => `components/${k}/`);
    // Every target's config part loads (the schema takes every target's table); nothing else of theirs does.
    for (const o of others) expect(files).toContain(`${o}config/index.js`);
    expect(files.filter((f) => others.some((o) => f.startsWith(o) && !f.startsWith(`${o}config/`)))).toEqual([]);
    expect(files.filter((f) => f === "node_modules/yaml" || f === "node_modules/mustache")).toEqual([]);
  });

  it("a vLLM stack reads no SGLang or EPP manifest; --json draws no table", () => {
    const files = loaded([STACKS.slurm, "--json"]);
    expect(files).toContain("components/upstream/vllm-serve.json");
    expect(files.filter((f) => /upstream\/(sglang|llm-d-epp)/.test(f) || f === "node_modules/cli-table3")).toEqual([]);
  });

  it("what loads on use still shows (the probe's check): an SGLang stack's manifest", () => {
    expect(loaded(["sglang-single-node"])).toContain("components/upstream/sglang-server.json");
  });
});
