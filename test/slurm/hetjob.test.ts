/**
 * Co-scheduling (slurm.co_schedule): a stack of several services as ONE heterogeneous job
 * (components/slurm/hetjob.ts). The real cluster runs it in test/e2e/hetjob.e2e.test.ts.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parse as shellParse } from "shell-quote";
import { describe, expect, it } from "vitest";
import { expectShellcheckClean } from "../shellcheck";
import { loadStackText } from "../../components/config";
import { buildStackPlan } from "../../components/planner";
import {
  coScheduledGroups,
  coScheduledPlacements,
  hetjobCreateView,
  HETJOB_FORMAT,
  parseHetjobResult,
  renderHetjob,
  renderHetjobScript,
} from "../../components/slurm/hetjob";
import { directives, islandBodies, islandDir } from "../../components/slurm/sbatch";
import { parseSchedulerReport, schedulerQueryScript } from "../../components/slurm/scheduler";
import { renderTemplate } from "../../components/templates";
import { checkArgv } from "../../components/upstream/check";
import { stackText } from "../helpers";

const TWO = stackText("policy-and-judge");
const stackOf = (text: string, stack = "dev") => buildStackPlan(loadStackText(text, "test.toml"), stack);
const group = (text = TWO) => {
  const groups = coScheduledGroups(stackOf(text));
  expect(groups).toHaveLength(1);
  return groups[0];
};

/** The #SBATCH lines of each hetjob component, split at the `#SBATCH hetjob` separators. */
function components(script: string): string[][] {
  const out: string[][] = [[]];
  for (const m of script.matchAll(/^#SBATCH (.+)$/gm)) {
    if (m[1] === "hetjob") out.push([]);
    else out[out.length - 1].push(m[1]);
  }
  return out;
}

function bashN(text: string) {
  const r = spawnSync("bash", ["-n"], { input: text, encoding: "utf8" });
  expect(r.stderr).toBe("");
  expect(r.status).toBe(0);
}

describe("which islands are co-scheduled", () => {
  it("every island of every service, as one group, by default with several services", () => {
    const members = group();
    expect(members.map((m) => `${m.plan.service} ${m.island.name}`)).toEqual([
      "policy policy/island-0",
      "judge judge/island-0",
    ]);
  });

  it("none with co_schedule = false, and none for a stack of one service", () => {
    const off = TWO.replace('partition = "cluster"', 'partition = "cluster"\nco_schedule = false');
    expect(off).not.toBe(TWO);
    expect(coScheduledGroups(stackOf(off))).toEqual([]);
    expect(coScheduledGroups(stackOf(stackText("multi-replica")))).toEqual([]);
    expect(coScheduledGroups(stackOf(stackText("disaggregated-x3")))).toEqual([]);
  });
});

describe("the heterogeneous sbatch script", () => {
  const members = group();
  const script = renderHetjobScript(members);

  it("has one component per island, separated by `#SBATCH hetjob`, each with its own service's directives", () => {
    expect(script.match(/^#SBATCH hetjob$/gm)).toHaveLength(members.length - 1);
    const comps = components(script);
    expect(comps).toHaveLength(2);
    const name = "policy-and-judge-dev-cosched";
    expect(comps[0]).toEqual(
      directives(members[0].plan, members[0].island, {
        jobName: name,
        output: "vllm-fleet/policy-and-judge/cosched/slurm-%j.out",
      }),
    );
    expect(comps[1]).toEqual(directives(members[1].plan, members[1].island, { jobName: name, output: null }));
    // The policy fills two whole nodes; the judge asks for half a node and its own time, memory and CPUs.
    expect(comps[0]).toEqual(
      expect.arrayContaining([`--job-name=${name}`, "--nodes=2", "--gres=gpu:8", "--exclusive", "--partition=cluster"]),
    );
    expect(comps[1]).toEqual(
      expect.arrayContaining([
        `--job-name=${name}`,
        "--nodes=1",
        "--gres=gpu:4",
        "--time=04:00:00",
        "--mem=128G",
        "--cpus-per-task=16",
        "--partition=cluster",
      ]),
    );
    expect(comps[1]).not.toContain("--exclusive");
    expect(comps[1].some((d) => d.startsWith("--output="))).toBe(false);
    expect(comps[0].some((d) => d.startsWith("--time="))).toBe(false);
    for (const c of comps) expect(checkArgv("sbatch", c)).toEqual([]);
    // sbatch reads #SBATCH lines only up to the first command.
    const firstCommand = script.split("\n").findIndex((l) => l && !l.startsWith("#"));
    expect(
      script
        .split("\n")
        .slice(firstCommand)
        .some((l) => l.startsWith("#SBATCH")),
    ).toBe(false);
  });

  it("starts each island's own launch body with srun --het-group=<k> in the background, then waits for the first to end", () => {
    members.forEach(({ plan, island }, k) => {
      const { launchBody } = islandBodies(plan, island, []);
      expect(script).toContain(`${launchBody}\n`);
      expect(script).toMatch(
        new RegExp(
          `^exec srun --het-group=${k} --nodes=${island.nodes.length} --ntasks=${island.nodes.length} --ntasks-per-node=1 --kill-on-bad-exit=1 bash -s <<`,
          "m",
        ),
      );
      expect(script).toContain(`fleet_component ${k} ${islandDir(plan, island)} ${island.nodes.length}\n`);
      expect(script).toContain(`FLEET_COMPONENTS+=(${island.name})`);
    });
    // Only the policy's nodes are whole, so only its component clears stale state first.
    expect(script.match(/^srun --het-group=0 .*--kill-on-bad-exit=0 bash -s/gm)).toHaveLength(1);
    expect(script).not.toMatch(/^srun --het-group=1 .*--kill-on-bad-exit=0/m);
    // Every cleanup ends before any component starts: a cleanup beside another component's start
    // stopped the judge's engine on the test cluster, whose nodes share one process table.
    expect(script.search(/^srun --het-group=\d+ .*--kill-on-bad-exit=0/m)).toBeLessThan(script.indexOf("\n("));
    expect(script.lastIndexOf("  wait -n\n")).toBeGreaterThan(script.lastIndexOf("FLEET_COMPONENTS+="));
    expect(script).toContain("SLURM_JOB_NODELIST_HET_GROUP_$1");
  });

  it.each([
    ["no credentials", []],
    ["credentials", ["apiKey", "hfToken"]],
  ] as const)("passes bash -n and shellcheck (%s)", (_, secrets) => {
    const text = renderHetjobScript(members, secrets);
    bashN(text);
    expectShellcheckClean(text);
    expect(text.includes("FLEET_SECRETS_DIR")).toBe(secrets.length > 0);
  });
});

describe("the co-scheduled create and delete", () => {
  const members = group();

  it.each([
    ["plain", TWO, []],
    ["credentials", TWO, ["apiKey", "hfToken"]],
    ["dry run", `dry_run = true\n${TWO}`, []],
  ] as const)("the create (%s) passes bash -n and shellcheck", (_, text, secrets) => {
    const job = renderHetjob(group(text), secrets);
    expect(job.create).toBe("timeout -k 120 7500 bash -s");
    bashN(job.stdin);
    expectShellcheckClean(job.stdin);
  });

  it("the delete is one line for any login shell: cancels by the job's name and waits until it is gone", () => {
    const job = renderHetjob(members);
    expect(job.delete).not.toContain("\n");
    const [timeout, k, kill, bound, bash, c, inner] = shellParse(job.delete) as string[];
    expect([timeout, k, kill, bound, bash, c]).toEqual(["timeout", "-k", "30", "300", "bash", "-c"]);
    bashN(inner);
    expectShellcheckClean(inner);
    expect(inner).toContain("name=policy-and-judge-dev-cosched;");
    expect(inner).toContain('scancel --name="$name" --user="$user"');
    for (const { plan, island } of members) expect(inner).toContain(islandDir(plan, island));
  });

  it("probes every island's engines and router, each /v1/models check looking for that service's model", () => {
    const { view } = hetjobCreateView(members);
    const probes = view.probes;
    const judge = probes.filter((p) => p.name.startsWith("judge/island-0:"));
    const policy = probes.filter((p) => p.name.startsWith("policy/island-0:"));
    expect(judge.length).toBeGreaterThan(1);
    expect(policy.length).toBeGreaterThan(judge.length);
    for (const p of judge.filter((x) => x.url.includes("/v1/models"))) expect(p.expect).toBe(`'"id":"Qwen/Qwen3-8B"'`);
    for (const p of policy.filter((x) => x.url.includes("/v1/models")))
      expect(p.expect).toBe(`'"id":"Qwen/Qwen3-32B"'`);
    // The judge's one node comes after the policy's two.
    for (const p of judge) expect(p.url).toMatch(/^"http:\/\/\$\{addrs\[2\]\}"/);
    expect(policy.some((p) => p.url.startsWith('"http://${addrs[1]}"'))).toBe(true);
    expect(probes.filter((p) => p.name.endsWith(":router")).length).toBeGreaterThanOrEqual(2);
  });

  it("prints one result line holding every island's result, and writes each island's endpoints.json", () => {
    const { view } = hetjobCreateView(members);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "hetjob-result-"));
    for (const { plan, island } of members) fs.mkdirSync(path.join(dir, islandDir(plan, island)), { recursive: true });
    const stub = [
      "say() { :; }",
      // The create's helper (slurm/create/helpers.sh.mustache): recorded, each island's folder once.
      'mark_served() { printf "%s\\n" "$1" >> "$PWD/served"; }',
      "job_id=777 adopted=true t_submitted=1.5 t_running=2.5 t_ready=3.5",
      "hosts=(n1 n2 n3) addrs=(10.1.0.1 10.1.0.2 10.1.0.3) first=(0 2)",
    ].join("\n");
    const text = `${stub}\n${renderTemplate("slurm/hetjob/result.sh.mustache", view)}`;
    const run = spawnSync("bash", ["-c", text], { cwd: dir, encoding: "utf8" });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    const r = parseHetjobResult(`noise\n${run.stdout}`);
    expect(r).toMatchObject({ format: HETJOB_FORMAT, dryRun: false, jobId: "777", stack: "dev" });
    if (r.dryRun) throw new Error("unreachable");
    expect(r.islands.map((i) => (i.dryRun ? null : [i.model, i.nodes.map((n) => n.host), i.jobId]))).toEqual([
      ["Qwen/Qwen3-32B", ["n1", "n2"], "777"],
      ["Qwen/Qwen3-8B", ["n3"], "777"],
    ]);
    // Every island's keeper learns that it served (restarts begin: templates/host/keeper.sh.mustache).
    expect(fs.readFileSync(path.join(dir, "served"), "utf8").trim().split("\n")).toEqual(
      members.map(({ plan, island }) => islandDir(plan, island)),
    );
    const judge = r.islands[1];
    if (judge.dryRun) throw new Error("unreachable");
    expect(judge.routerUrl).toMatch(/^http:\/\/10\.1\.0\.3:\d+\/v1$/);
    expect(judge.adopted).toBe(true);
    members.forEach(({ plan, island }, k) => {
      const written = fs.readFileSync(path.join(dir, islandDir(plan, island), "endpoints.json"), "utf8");
      expect(JSON.parse(written)).toEqual(r.islands[k]);
    });
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("the dry run's line parses, one dry-run result per island", () => {
    const { view } = hetjobCreateView(group(`dry_run = true\n${TWO}`));
    const line = shellParse(view.dryRunLine)[0] as string;
    const r = parseHetjobResult(line);
    expect(r.dryRun).toBe(true);
    expect(r.islands.map((i) => i.dryRun)).toEqual([true, true]);
  });

  it("refuses a line that is not a co-scheduled job's result", () => {
    expect(() => parseHetjobResult("")).toThrow(/printed no result line/);
    expect(() => parseHetjobResult(JSON.stringify({ format: "vllm-fleet/island/v1", dryRun: false }))).toThrow(
      /malformed/,
    );
    expect(() =>
      parseHetjobResult(
        JSON.stringify({ format: HETJOB_FORMAT, dryRun: false, stack: "s", jobName: "j", jobId: "1", islands: [] }),
      ),
    ).toThrow(/islands/);
  });
});

describe("fleet status of co-scheduled islands (the scheduler query)", () => {
  it("places each island at its component of the one job", () => {
    const placements = coScheduledPlacements(stackOf(TWO));
    expect([...placements.entries()]).toEqual([
      [
        "policy/0",
        {
          jobName: "policy-and-judge-dev-cosched",
          islandDir: "vllm-fleet/policy-and-judge/policy/island-0",
          jobDir: "vllm-fleet/policy-and-judge/cosched",
          component: 0,
          nodeCount: 2,
        },
      ],
      [
        "judge/0",
        {
          jobName: "policy-and-judge-dev-cosched",
          islandDir: "vllm-fleet/policy-and-judge/judge/island-0",
          jobDir: "vllm-fleet/policy-and-judge/cosched",
          component: 1,
          nodeCount: 1,
        },
      ],
    ]);
    expect(coScheduledPlacements(stackOf(stackText("multi-replica"))).size).toBe(0);
  });

  it("reports each component as <jobid>+<offset>, with its own nodes and its own exit markers; a single island's query is unchanged", () => {
    const refs = [
      { island: 0, jobName: "pj-cosched", islandDir: "out/policy/island-0", component: 0 },
      { island: 1, jobName: "pj-cosched", islandDir: "out/judge/island-0", component: 1 },
    ];
    const script = schedulerQueryScript(refs);
    bashN(script);
    expectShellcheckClean(script, ["-e", "SC2034"]);
    const single = schedulerQueryScript(refs.map(({ component: _, ...r }) => r));
    expect(single).not.toContain("comp");
    expect(single).toContain("fleet_island 1 pj-cosched out/judge/island-0 ''\n");

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-q-het-"));
    const bin = path.join(dir, "bin");
    fs.mkdirSync(bin);
    const tool = (name: string, body: string) =>
      fs.writeFileSync(path.join(bin, name), `#!/bin/bash\n${body}\n`, { mode: 0o755 });
    // squeue lists a hetjob once per component, as the real one does (test/e2e/hetjob.e2e.test.ts).
    tool("squeue", `printf '%s\\n' '543+0|RUNNING|None|n[1-2]' '543+1|RUNNING|None|n3'`);
    tool("scontrol", 'case "$3" in n\\[1-2\\]) printf "n1\\nn2\\n";; n3) echo n3;; esac');
    tool("sinfo", 'printf "n1|allocated\\nn2|allocated\\nn3|mixed\\n"');
    tool("getent", 'echo "10.9.0.${2#n} STREAM $2"');
    const home = path.join(dir, "home");
    const judge = path.join(home, "out/judge/island-0/logs");
    fs.mkdirSync(path.join(judge, "job_543_0/node_0"), { recursive: true });
    fs.symlinkSync("job_543_0", path.join(judge, "latest"));
    fs.writeFileSync(path.join(judge, "job_543_0/node_0/i0-replica0-n0.exit"), "3\n");
    const stdout = spawnSync("bash", ["-s"], {
      input: script,
      encoding: "utf8",
      env: { ...process.env, HOME: home, PATH: `${bin}:${process.env.PATH}` },
    }).stdout;
    const r = parseSchedulerReport(stdout, [0, 1]);
    expect(r.get(0)).toMatchObject({ jobId: "543+0", state: "RUNNING", hosts: ["n1", "n2"], exits: [] });
    expect(r.get(1)).toMatchObject({
      jobId: "543+1",
      state: "RUNNING",
      hosts: ["n3"],
      addrs: ["10.9.0.3"],
      exits: [{ node: 0, name: "i0-replica0-n0", code: 3 }],
    });
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("a component scontrol still knows reads <leader>+<offset> too", () => {
    const r = parseSchedulerReport(
      "scontrol\t1\tJobId=544 HetJobId=543 HetJobOffset=1 JobName=pj-cosched JobState=FAILED Reason=NonZeroExitCode ExitCode=1:0\n",
      [1],
    );
    expect(r.get(1)).toMatchObject({ jobId: "543+1", state: "FAILED", source: "scontrol" });
  });
});
