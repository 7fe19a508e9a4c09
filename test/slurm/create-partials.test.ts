import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import Mustache from "mustache";
import { describe, expect, it } from "vitest";
import { expectShellcheckClean } from "../shellcheck";
import { CREATE_TEMPLATE, createScriptView, renderIslandJob } from "../../components/slurm/island-job";
import { readTemplate, renderTemplate } from "../../components/templates";
import { NODE_TOKENS, parseIslandResult, TOKENS } from "../../components/host/island-result";
import { plan as planOf, ROOT, SLURM_STACKS, stackText } from "../helpers";

/** The partials create.sh includes, in order, by their names under templates/. */
const PARTIALS = [...readTemplate(CREATE_TEMPLATE).matchAll(/\{\{>\s*(\S+?)\s*\}\}/g)].map((m) => m[1]);

const variants = SLURM_STACKS.flatMap((name) => [
  { name, text: stackText(name), secrets: [] as const },
  { name: `${name} (dry run)`, text: `dry_run = true\n${stackText(name)}`, secrets: [] as const },
  { name: `${name} (credentials)`, text: stackText(name), secrets: ["apiKey", "hfToken"] as const },
]);
const views = variants.flatMap((v) => {
  const p = planOf(v.text, v.name.split(" ")[0]);
  return p.islands.map((island) => ({ variant: v.name, view: createScriptView(p, island, v.secrets).view }));
});
// A create that brings a gone job back (host/presence.ts) records its generation.
views.push({ variant: "revival", view: { ...views[0].view, generation: 2 } });

/** Rendered once per distinct text: most partials read the same whatever the stack. */
function distinct(render: (view: object) => string): string[] {
  return [...new Set(views.map((v) => render(v.view)))];
}

/**
 * Checked alone, a partial refers to the variables the other partials set (SC2154) and sets ones
 * only later partials read (SC2034); the whole script is checked with no exclusion (island-job.test.ts).
 */
const ALONE = ["-e", "SC2154,SC2034"];

function expectCompleteShell(text: string, shellcheckArgs: string[]): void {
  const n = spawnSync("bash", ["-n"], { input: text, encoding: "utf8" });
  expect(n.stderr).toBe("");
  expect(n.status).toBe(0);
  expectShellcheckClean(text, shellcheckArgs);
}

// shellcheck over every stack's rendering: 10 s alone on 2 cores, 38 s with a second unit suite
// beside it (a CI run and npm test on one machine), so the issue-40 bound of 120 s, not vitest's 30.
describe("the create script's partials", { timeout: 120_000 }, () => {
  it("are the files under templates/slurm/create/ and templates/host/readiness/ (shared with the local target) and the revival record, each included once", () => {
    expect(PARTIALS.length).toBeGreaterThan(5);
    expect(new Set(PARTIALS).size).toBe(PARTIALS.length);
    const files = ["slurm/create", "host/readiness"].flatMap((dir) =>
      fs.readdirSync(path.join(ROOT, "templates", dir)).map((f) => `${dir}/${f}`),
    );
    files.push("host/revival.sh.mustache");
    expect([...PARTIALS].sort()).toEqual(files.sort());
  });

  it.each(PARTIALS)(
    "%s, rendered alone with every stack's values, is complete shell: bash -n and shellcheck pass",
    (partial) => {
      for (const text of distinct((view) => renderTemplate(partial, view))) expectCompleteShell(text, ALONE);
    },
  );

  it("the script around them is complete shell on its own (every partial left out)", () => {
    const skeleton = (view: object) =>
      Mustache.render(readTemplate(CREATE_TEMPLATE), view, () => "", { escape: (v: string) => v });
    for (const text of distinct(skeleton)) expectCompleteShell(text, ALONE);
  });

  it("spell no result token: the renderer hands them in from TOKENS", () => {
    for (const name of [CREATE_TEMPLATE, ...PARTIALS]) expect(readTemplate(name)).not.toMatch(/__FLEET_/);
    const p = planOf(stackText("single-node"), "single-node");
    const { stdin } = renderIslandJob(p, p.islands[0]);
    for (const token of [TOKENS.jobId, TOKENS.adopted, TOKENS.submittedAt, TOKENS.runningAt, TOKENS.readyAt])
      expect(stdin).toContain(`result=\${result//${token}/`);
    for (const prefix of [NODE_TOKENS.host, NODE_TOKENS.addr])
      expect(stdin).toContain(`result=\${result//${prefix}\${k}${NODE_TOKENS.end}/`);
  });

  it("the result partial, run by bash with the job's facts, prints a result line that parses", () => {
    const p = planOf(stackText("disaggregated-x3"), "disaggregated-x3");
    const island = p.islands[2];
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-result-"));
    const hosts = island.nodes.map((n) => `node${n.index + 1}`);
    const addrs = island.nodes.map((n) => `10.2.0.${n.index + 1}`);
    const facts = [
      `FLEET_ISLAND_DIR=${dir}`,
      "say() { :; }",
      "job_id=4242 adopted=true t_submitted=1795000000.25 t_running=1795000001.5 t_ready=1795000002.75",
      `hosts=(${hosts.join(" ")})`,
      `addrs=(${addrs.join(" ")})`,
    ].join("\n");
    const partial = renderTemplate("host/readiness/result.sh.mustache", createScriptView(p, island).view);
    const run = spawnSync("bash", ["-c", `${facts}\n${partial}`], { encoding: "utf8" });
    expect(run.status).toBe(0);
    const result = parseIslandResult(run.stdout);
    if (result.dryRun) throw new Error("expected a running island");
    expect(result).toMatchObject({
      jobId: "4242",
      adopted: true,
      timing: { submittedAt: 1795000000.25, runningAt: 1795000001.5, readyAt: 1795000002.75 },
    });
    expect(result.nodes.map((n) => [n.host, n.addr])).toEqual(hosts.map((h, k) => [h, addrs[k]]));
    expect(result.adminUrls).toEqual(
      island.endpoints.engines.map((e) => `http://10.2.0.${e.url.node + 1}:${e.url.port}${e.url.path}`),
    );
    expect(fs.readFileSync(path.join(dir, "endpoints.json"), "utf8")).toBe(run.stdout);
  });
});
