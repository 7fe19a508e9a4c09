/**
 * The README and docs/ against the code: the quickstart's stack file plans, the stack table in
 * docs/shapes.md matches what `npm run plan` says of every stack, the fleet CLI page names every
 * flag bin/fleet.ts accepts, relative links resolve, and no page points at documents outside the
 * repository.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfigText } from "../components/config";
import { buildPlan } from "../components/plan/plan";
import { ROOT, STACK_NAMES, stackText } from "./helpers";

const read = (rel: string) => fs.readFileSync(path.join(ROOT, rel), "utf8");
const PAGES = ["README.md", ...fs.readdirSync(path.join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];

/** The body of the first fenced block of `lang` after `marker`. */
function blockAfter(text: string, marker: string, lang: string): string {
  const at = text.indexOf(marker);
  expect(at, `no "${marker}"`).toBeGreaterThanOrEqual(0);
  const m = new RegExp("```" + lang + "\\n([\\s\\S]*?)```").exec(text.slice(at));
  expect(m, `no ${lang} block after "${marker}"`).not.toBeNull();
  return m![1];
}

describe("README quickstart", () => {
  it("its stack file plans without warnings", () => {
    const toml = blockAfter(read("README.md"), "## Quickstart", "toml");
    const plan = buildPlan(loadConfigText(toml, "my-fleet.toml"), "dev");
    expect(plan.warnings).toEqual([]);
    expect(plan.target).toBe("slurm");
    expect(plan.totals.engines).toBe(1);
  });

  it("keeps the Test section and its command", () => {
    const readme = read("README.md");
    expect(readme).toMatch(/^## Test$/m);
    expect(readme).toContain("`npm test`");
  });
});

describe("docs/shapes.md", () => {
  const text = read("docs/shapes.md");
  const start = text.indexOf("## The stacks in `stacks/`");
  const table = text.slice(start, text.indexOf("\n## ", start + 1));
  const rows = new Map(
    table
      .split("\n")
      .filter((l) => /^\| [a-z0-9-]+ \|/.test(l) && !/^\| (stack|-+) \|/.test(l))
      .map((l) => l.split("|").slice(1, -1).map((c) => c.trim()))
      .map((c) => [c[0], c] as const),
  );

  it("lists every stack in stacks/", () => {
    expect([...rows.keys()].sort()).toEqual(STACK_NAMES);
  });

  it.each(STACK_NAMES)("%s: target, shape, nodes, engines and routers are what the plan says", (name) => {
    const plan = buildPlan(loadConfigText(stackText(name), `${name}.toml`), name);
    const [, target, shape, , nodes, engines, routers] = rows.get(name)!;
    expect({ target, shape, nodes: Number(nodes), engines: Number(engines), routers: Number(routers) }).toEqual({
      target: plan.target === "slurm" ? "SLURM" : "Kubernetes",
      shape: plan.shape,
      nodes: plan.totals.nodes,
      engines: plan.totals.engines,
      routers: plan.totals.routers,
    });
  });
});

describe("docs/fleet-cli.md", () => {
  it("names every flag bin/fleet.ts accepts", () => {
    const source = read("bin/fleet.ts");
    // Every option of the OPTIONS table (`flags: "-i, --identity <key file>"`), each spelling.
    const flags = [...source.matchAll(/\{ flags: "([^"]+)"/g)].flatMap((m) => [...m[1].matchAll(/(--?[a-z][a-z-]*)/g)].map((f) => f[1]));
    expect(flags.length).toBeGreaterThan(10);
    const page = read("docs/fleet-cli.md");
    expect(flags.filter((f) => !page.includes("`" + f))).toEqual([]);
  });
});

describe("links and references", () => {
  it.each(PAGES)("%s: relative links resolve", (page) => {
    const text = read(page);
    const broken: string[] = [];
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target) || target.startsWith("#")) continue;
      const file = path.resolve(path.dirname(path.join(ROOT, page)), target.split("#")[0]);
      if (!fs.existsSync(file)) broken.push(target);
    }
    expect(broken).toEqual([]);
  });

  it.each(PAGES)("%s: cites no documents outside the repository", (page) => {
    const text = read(page);
    expect(text).not.toMatch(/\.\.\/shared|seed 00\d|reference\.md|prime-rl\.md/i);
  });
});
