/**
 * The README and docs/ against the code: the quickstart's stack file plans, the stack table in
 * docs/shapes.md matches what `npm run plan` says of every stack, the fleet CLI page names every
 * flag bin/fleet.ts accepts, relative links resolve, every repository path a page names in
 * backticks exists, and neither the pages nor the code cite notes kept outside the repository.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfigText } from "../components/config";
import { buildPlan } from "../components/planner";
import { ROOT, STACK_NAMES, stackPlanOf } from "./helpers";

const read = (rel: string) => fs.readFileSync(path.join(ROOT, rel), "utf8");
const PAGES = [
  "README.md",
  ...fs
    .readdirSync(path.join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

/** The body of the first fenced block of `lang` after `marker`. */
function blockAfter(text: string, marker: string, lang: string): string {
  const at = text.indexOf(marker);
  expect(at, `no "${marker}"`).toBeGreaterThanOrEqual(0);
  const m = new RegExp("```" + lang + "\\n([\\s\\S]*?)```").exec(text.slice(at));
  expect(m, `no ${lang} block after "${marker}"`).not.toBeNull();
  return m![1];
}

describe("README quickstart", () => {
  it.each([
    ["## Quickstart on this machine", "local"],
    ["## Quickstart on SLURM", "slurm"],
  ])("the stack file after %s plans on %s without warnings", (marker, target) => {
    const toml = blockAfter(read("README.md"), marker, "toml");
    const plan = buildPlan(loadConfigText(toml, "my-fleet.toml"), "dev");
    expect(plan.warnings).toEqual([]);
    expect(plan.target).toBe(target);
    expect(plan.totals.engines).toBe(1);
  });

  it("the local path is the first quickstart, then SLURM, then Kubernetes", () => {
    const headings = read("README.md")
      .split("\n")
      .filter((l) => l.startsWith("## Quickstart"));
    expect(headings).toEqual([
      "## Quickstart on this machine (a GPU box, or CPU with a small model)",
      "## Quickstart on SLURM (about 10 minutes)",
      "## Quickstart on Kubernetes",
    ]);
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
      .map((l) =>
        l
          .split("|")
          .slice(1, -1)
          .map((c) => c.trim()),
      )
      .map((c) => [c[0], c] as const),
  );

  it("lists every stack in stacks/", () => {
    expect([...rows.keys()].sort()).toEqual(STACK_NAMES);
  });

  // A stack of services: each service's shape in the file's order ("multi_replica + single_node"), the stack's totals.
  it.each(STACK_NAMES)("%s: target, shape, nodes, engines and routers are what the plan says", (name) => {
    const stack = stackPlanOf(name);
    const [, target, shape, , nodes, engines, routers] = rows.get(name)!;
    expect({ target, shape, nodes: Number(nodes), engines: Number(engines), routers: Number(routers) }).toEqual({
      target: { slurm: "SLURM", kubernetes: "Kubernetes", local: "local" }[stack.services[0].target],
      shape: stack.services.map((p) => p.shape).join(" + "),
      nodes: stack.totals.nodes,
      engines: stack.totals.engines,
      routers: stack.totals.routers,
    });
  });
});

describe("docs/fleet-cli.md", () => {
  it("names every flag bin/fleet.ts accepts (its OPTIONS table, bin/fleet-options.ts)", () => {
    const source = read("bin/fleet-options.ts");
    // Every option of the OPTIONS table (`flags: "-i, --identity <key file>"`), each spelling.
    const flags = [...source.matchAll(/\bflags: "([^"]+)"/g)].flatMap((m) =>
      [...m[1].matchAll(/(--?[a-z][a-z-]*)/g)].map((f) => f[1]),
    );
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
    // docs/prime-rl.md is a page of this repository; the notes of that name are not.
    expect(text).not.toMatch(/\.\.\/shared|\/shared\/reference|seed 00\d|reference\.md|reference\/prime-rl\.md/i);
  });

  it.each(PAGES)("%s: every repository path in backticks exists", (page) => {
    expect(repoPathClaims(read(page)).filter((claim) => !claimHolds(claim))).toEqual([]);
  });

  it("the path check sees stale paths, and leaves commands, URLs, packages and run-time paths alone", () => {
    const page = [
      "`components/render/shell.ts` `report/island-result.ts` `test/programme*.test.ts` `components/k8s/` `render/k8s/names.ts`",
      "`components/shell.ts` `test/**/*.test.ts` `stacks/<name>.toml` `plan/values.ts` `rules.ts` `templates/slurm/create/` `.ci/run`",
      "`@pulumi/command` `nvidia.com/gpu` `Qwen/Qwen3-8B` `<output_dir>/island-<k>/endpoints.json` `logs/latest` `/health`",
      "`npm run plan -- dir/x.ts` `http://<i0-n0>:8000/v1` `~/.kube/config` `create.sh`",
      "```bash\nnpx tsx test/nowhere.ts\n```",
    ].join("\n");
    expect(repoPathClaims(page).filter((claim) => !claimHolds(claim))).toEqual([
      "components/render/shell.ts",
      "report/island-result.ts",
      "test/programme*.test.ts",
      "components/k8s/",
      "render/k8s/names.ts",
    ]);
  });

  it("no code comment, stack file, test or page cites notes kept outside the repository", () => {
    // Upstream sources are cited by project and file (or docs page), or the fact is said in plain words.
    const cites = /reference §|k8s-anchors|\bseed 00\d|DESIGN\.md/i;
    const offenders = sourceFiles()
      .filter((file) => file !== "test/docs.test.ts") // this file spells the pattern out
      .flatMap((file) =>
        read(file)
          .split("\n")
          .flatMap((line, i) => (cites.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
      );
    expect(offenders).toEqual([]);
  });
});

/** Every file (`a/b.ts`) and folder (`a/b/`) of the repository, ROOT-relative, without node_modules and .git. */
function repoEntries(dir = ""): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    if (e.name === "node_modules" || e.name === ".git") return [];
    const rel = dir ? `${dir}/${e.name}` : e.name;
    return e.isDirectory() ? [`${rel}/`, ...repoEntries(rel)] : [rel];
  });
}

const ENTRIES = repoEntries();
const TOP_LEVEL = new Set(ENTRIES.filter((e) => !e.slice(0, -1).includes("/")).map((e) => e.replace(/\/$/, "")));

/** The sources whose comments, names and text must not cite outside notes (vendored upstream data aside). */
function sourceFiles(): string[] {
  const roots = ["components", "bin", "bench", "templates", "stacks", "test", "docs"];
  return ["README.md", "index.ts", ...ENTRIES.filter((e) => roots.some((r) => e.startsWith(`${r}/`)))].filter(
    (e) => /\.(ts|js|mjs|toml|md|mustache|sh)$/.test(e) && !e.startsWith("test/fixtures/upstream/"),
  );
}

/**
 * The backticked spans of a page (fenced blocks aside) that claim a file or folder of this
 * repository: a path whose first segment is a top-level entry (`components/...`, `test/...`), or a
 * `.ts` / `.mustache` file named by its tail (`plan/values.ts`, `rules.ts`). Commands, URLs, package
 * names, home, absolute and `./` paths are not claims, nor are other paths (run-time files on a
 * cluster such as `logs/latest`).
 */
function repoPathClaims(text: string): string[] {
  const prose = text.replace(/^```[\s\S]*?^```/gm, "");
  return [...prose.matchAll(/`([^`\n]+)`/g)]
    .map((m) => m[1].replace(/#.*$/, ""))
    .filter((span) => !/[\s"'$~@:]|^\.{0,2}\//.test(span))
    .filter((span) => (span.includes("/") && TOP_LEVEL.has(span.split("/")[0])) || /\.(ts|mustache)$/.test(span));
}

/** A claim as a pattern over ENTRIES: `<placeholder>` and `*` stand for one name, `**` for any folders. */
function claimHolds(claim: string): boolean {
  const body = claim
    .split(/(\*\*\/|\*|<[^>]*>)/)
    .map((part) =>
      part === "**/"
        ? "(?:.*/)?"
        : part === "*"
          ? "[^/]*"
          : part.startsWith("<")
            ? "[^/]+"
            : part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"),
    )
    .join("");
  const rooted = claim.includes("/") && TOP_LEVEL.has(claim.split("/")[0]);
  const pattern = new RegExp(rooted ? `^${body}${claim.endsWith("/") ? "" : "/?"}$` : `(^|/)${body}$`);
  return ENTRIES.some((e) => pattern.test(e));
}
