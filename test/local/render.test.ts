/**
 * The local target's scripts (issue 27), rendered for every stacks/local-*.toml with and without
 * credentials and as a dry run: the supervisor, the create script (local.Command's stdin), the
 * delete command, the run query and the logs script are complete shell (bash -n) and shellcheck
 * finds nothing; `plan --out` writes what `pulumi up` runs; the scripts never hold a credential
 * and name processes only by the run record. (They run for real in test/e2e/local.e2e.test.ts.)
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { localPlanOut, renderLocalRun, renderSupervisor } from "../../components/local";
import { targetOf } from "../../components/targets";
import type { LogsIsland } from "../../components/target";
import { expectShellcheckClean } from "../shellcheck";
import { LOCAL_STACKS, plan as planOf, runPlanCli, stackText } from "../helpers";

const VARIANTS = LOCAL_STACKS.flatMap((name) => [
  { name, text: stackText(name), secrets: [] as ("apiKey" | "hfToken")[] },
  { name: `${name} (credentials)`, text: stackText(name), secrets: ["apiKey", "hfToken"] as ("apiKey" | "hfToken")[] },
  { name: `${name} (dry run)`, text: `dry_run = true\n${stackText(name)}`, secrets: [] as ("apiKey" | "hfToken")[] },
]);

function expectShell(text: string, what: string): void {
  const n = spawnSync("bash", ["-n"], { input: text, encoding: "utf8" });
  expect(n.stderr, what).toBe("");
  expect(n.status, what).toBe(0);
  expectShellcheckClean(text);
}

/** The script inside `timeout -k K S bash -c <word>`: the word as /bin/sh reads it. */
function deleteScript(command: string): string {
  const m = /^timeout -k \d+ \d+ bash -c (.*)$/s.exec(command);
  expect(m, command.slice(0, 80)).not.toBeNull();
  const r = spawnSync("/bin/sh", ["-c", `printf '%s' ${m![1]}`], { encoding: "utf8" });
  expect(r.status).toBe(0);
  return r.stdout;
}

describe("the local target's scripts", () => {
  it("there are local stacks to check", () => expect(LOCAL_STACKS.length).toBeGreaterThanOrEqual(5));

  it.each(VARIANTS.map((v) => [v.name, v] as const))(
    "%s: supervisor, create, delete, run query and logs script pass bash -n and shellcheck",
    (_, v) => {
      const plan = planOf(v.text, v.name.split(" ")[0]);
      expect(plan.target).toBe("local");
      const fleet = targetOf("local").fleet;
      for (const island of plan.islands) {
        const run = renderLocalRun(plan, island, v.secrets);
        expect(run.create).toMatch(/^timeout -k \d+ \d+ bash -s$/);
        expectShell(renderSupervisor(plan, island, v.secrets), "supervisor");
        expectShell(run.stdin, "create");
        expectShell(deleteScript(run.delete), "delete");
      }
      const refs = plan.islands.map((i) => ({
        island: i.index,
        jobName: `j${i.index}`,
        islandDir: `vllm-fleet/x/${i.name}`,
        nodeCount: i.nodes.length,
      }));
      expectShell(fleet.scheduler!.query(refs), "run query");
      const logs: LogsIsland[] = refs.map((r) => ({
        island: r.island,
        jobName: r.jobName,
        islandDir: r.islandDir,
        jobDir: r.islandDir,
        logs: [{ banner: "'==> x <=='", file: `${r.islandDir}/logs/latest/node_0/x.log` }],
      }));
      expectShell(fleet.logsScript!(logs, 5, true), "logs");
    },
  );

  it("credentials reach create only by name: the scripts hold environment variable names, never a value", () => {
    const plan = planOf(stackText("local-multi-replica"), "local-multi-replica");
    const run = renderLocalRun(plan, plan.islands[0], ["apiKey", "hfToken"]);
    expect(run.stdin).toContain('"${FLEET_SECRET_API_KEY:?');
    expect(run.stdin).toContain("umask 077");
    // The engines get the key as VLLM_API_KEY from their 0600 file, not as --api-key on their command line.
    const supervisor = renderSupervisor(plan, plan.islands[0], ["apiKey"]);
    expect(supervisor).toContain('export VLLM_API_KEY="$FLEET_API_KEY"');
    expect(supervisor).not.toContain("--api-key");
  });

  it("an SGLang engine (no key variable) reads the API key from a 0600 --config YAML file, not --api-key; the router holds it as a flag", () => {
    const plan = planOf(stackText("local-sglang"), "local-sglang");
    const supervisor = renderSupervisor(plan, plan.islands[0], ["apiKey"]);
    const engine = supervisor.split("\n").find((l) => l.includes("sglang.launch_server"))!;
    expect(engine).toContain('--config "$FLEET_SECRETS_DIR"/i0-replica0-n0.yaml');
    expect(engine).toContain("umask 077");
    expect(engine).not.toContain("--api-key");
    const router = supervisor.split("\n").find((l) => l.includes("sglang_router.launch_router"))!;
    expect(router).toContain('--api-key "$FLEET_API_KEY"');
    expectShell(supervisor, "supervisor");
  });

  it("delete stops the run the record names (pid, start time, log folder), never a process found by name", () => {
    const plan = planOf(stackText("local-single-node"), "local-single-node");
    const script = deleteScript(renderLocalRun(plan, plan.islands[0]).delete);
    expect(script).toContain('stop_run "$pid" "$start" "$attempt"');
    expect(script).not.toMatch(/\b(pkill|killall|pgrep)\b/);
  });

  it("plan --out writes the supervisor, its generated files, create.sh and delete.sh, which run as written", () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-local-out-"));
    const r = runPlanCli([path.join("stacks", "local-llm-d.toml"), "--out", out]);
    expect(r.code, r.stderr).toBe(0);
    const plan = planOf(stackText("local-llm-d"), "local-llm-d");
    const files = localPlanOut(plan).map((f) => f.path);
    for (const f of files) expect(fs.existsSync(path.join(out, f)), f).toBe(true);
    expect(files).toEqual(expect.arrayContaining(["island-0/create.sh", "island-0/delete.sh", "island-0/epp.yaml"]));
    expect(fs.statSync(path.join(out, "island-0/create.sh")).mode & 0o111).not.toBe(0);
    expectShell(fs.readFileSync(path.join(out, "island-0/delete.sh"), "utf8"), "delete.sh");
  });
});
