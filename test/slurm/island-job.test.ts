import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { expectShellcheckClean } from "../shellcheck";
import { renderIslandJob } from "../../components/slurm/island-job";
import { readinessProbes } from "../../components/host/readiness";
import { boundedOnLogin } from "../../components/slurm/login-bound";
import { renderIslandScript } from "../../components/slurm/sbatch";
import { renderSecretFiles } from "../../components/slurm/secret-files";
import { parseIslandResult, resultTemplate } from "../../components/host/island-result";
import { checkArgv } from "../../components/upstream/check";
import { plan as planOf, SLURM_STACKS, stackText } from "../helpers";
import { fakeCreateStdout } from "../program-harness";

const variants = SLURM_STACKS.flatMap((name) => [
  [`${name}`, stackText(name)],
  [`${name} (dry run)`, `dry_run = true\n${stackText(name)}`],
  [`${name} (credentials)`, stackText(name)],
]);
/** The one-line script of a `timeout ... bash -c '<script>'` command, unquoted as the login shell would. */
const unquoted = (command: string) =>
  spawnSync("bash", ["-c", `printf '%s' ${command.slice(command.indexOf("bash -c ") + "bash -c ".length)}`], {
    encoding: "utf8",
  }).stdout;

describe("an island's create and delete commands", () => {
  it.each(variants)("%s: create and delete pass bash -n and shellcheck; delete is one line", (name, text) => {
    const p = planOf(text, name.split(" ")[0]);
    const secrets = name.endsWith("(credentials)") ? (["apiKey", "hfToken"] as const) : [];
    for (const island of p.islands) {
      const job = renderIslandJob(p, island, secrets);
      if (secrets.length) {
        // The job script and its launch body read the credential files; the writer is one line.
        const { script, launchBody } = renderIslandScript(p, island, secrets);
        for (const text of [
          script,
          launchBody,
          `#!/bin/bash\n${unquoted(renderSecretFiles(p, island, secrets).create)}\n`,
        ]) {
          expect(spawnSync("bash", ["-n"], { input: text }).status).toBe(0);
          expectShellcheckClean(text);
        }
        // The probes send the key from a file descriptor (fleet_curl), never on curl's command line.
        expect(job.stdin).toContain('body=$(fleet_curl -sf --max-time 5 "$1")');
        expect(job.stdin).toContain("curl -H @<(printf ");
      }
      expect(spawnSync("bash", ["-n"], { input: job.stdin }).status).toBe(0);
      expectShellcheckClean(job.stdin);
      expect(job.create).toBe(boundedOnLogin(job.bounds.create, "bash -s"));
      expect(job.delete).not.toContain("\n");
      const body = unquoted(job.delete);
      expect(spawnSync("bash", ["-n", "-c", body]).status).toBe(0);
      expectShellcheckClean(`#!/bin/bash\n${body}\n`);
    }
  });

  it.each(["multi-replica", "multi-replica (dry run)"])(
    "%s: every sbatch option the create script uses is in the upstream manifest",
    (name) => {
      const text = name.endsWith("(dry run)")
        ? `dry_run = true\n${stackText("multi-replica")}`
        : stackText("multi-replica");
      const p = planOf(text, "multi-replica");
      const { stdin } = renderIslandJob(p, p.islands[0]);
      const calls = stdin
        .split("\n")
        .flatMap((l) => [...l.matchAll(/\bsbatch((?: --[a-z-]+(?:="[^"]*")?)+)/g)].map((m) => m[1].trim().split(" ")));
      expect(calls.length).toBeGreaterThan(0);
      for (const flags of calls) expect(checkArgv("sbatch", flags)).toEqual([]);
    },
  );

  it("prints a result line that parses into the planned endpoints once the job's facts fill the tokens", () => {
    const p = planOf(stackText("disaggregated-x3"), "disaggregated-x3");
    const island = p.islands[2];
    const result = parseIslandResult(fakeCreateStdout(renderIslandJob(p, island).stdin));
    if (result.dryRun) throw new Error("expected a running island");
    expect(result.jobName).toBe("disaggregated-x3-i2");
    expect(result.nodes).toHaveLength(6);
    expect(result.roles).toEqual(["prefill", "prefill", "prefill", "prefill", "decode", "decode"]);
    expect(result.adminUrls).toEqual(
      island.endpoints.engines.map((e) => `http://10.0.0.${e.url.node + 11}:${e.url.port}${e.url.path}`),
    );
  });

  it("keeps JSON-significant characters of the model name intact", () => {
    const p = planOf(
      // A path: no Hugging Face id holds these characters.
      stackText("single-node").replace(/^name = "Qwen\/Qwen3-8B"$/m, 'name = "/models/we\\"ird \\\\ mo\'del"'),
    );
    const result = parseIslandResult(fakeCreateStdout(renderIslandJob(p, p.islands[0]).stdin));
    expect(result.dryRun === false && result.model).toBe(`/models/we"ird \\ mo'del`);
    expect(resultTemplate(p, p.islands[0], "x")).toContain("__FLEET_ADOPTED__,");
  });

  it("changes the script hash (a new job) when what runs changes, not when only the waiting does", () => {
    const base = stackText("multi-replica");
    const hash = (text: string) => {
      const p = planOf(text, "multi-replica");
      return renderIslandJob(p, p.islands[0]).scriptHash;
    };
    expect(hash(base)).toBe(hash(base));
    expect(hash(base.replace(/^dp = 4$/m, "dp = 2"))).not.toBe(hash(base));
    expect(
      hash(base.replace('partition = "cluster"', 'partition = "cluster"\nready_timeout = 60\npending_timeout = 60')),
    ).toBe(hash(base));
  });

  it("waits for every engine with an API and the router, and skips headless processes", () => {
    const ep = planOf(stackText("wide-ep"), "wide-ep");
    expect(
      readinessProbes(ep.islands[0], ep.model).map((p) => `${p.name} ${p.url.path}${p.expect ? ` ${p.expect}` : ""}`),
    ).toEqual([
      "i0-replica0-n0 /health",
      `i0-replica0-n0 /v1/models "id":"${ep.model}"`,
      "i0-replica0-n1 /health",
      `i0-replica0-n1 /v1/models "id":"${ep.model}"`,
      // Told its workers as they come up: it answers /readiness at once, so it must count both.
      'router /readiness "healthy_workers":2,',
      `router /v1/models "id":"${ep.model}"`,
    ]);
    const headless = planOf(
      stackText("wide-ep").replace("[slurm]", "[inference.vllm_extra]\nheadless = true\n[slurm]"),
      "wide-ep",
    );
    expect(readinessProbes(headless.islands[0], headless.model).map((p) => p.name)).toEqual([
      "i0-replica0-n0",
      "i0-replica0-n0",
      "router",
      "router",
    ]);
    const llmd = planOf(stackText("llm-d"), "llm-d");
    expect(
      readinessProbes(llmd.islands[0], llmd.model)
        .filter((p) => p.name === "router")
        .map((p) => p.url.path),
    ).toEqual(["/v1/models"]);
  });
});
