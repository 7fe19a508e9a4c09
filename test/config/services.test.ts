/**
 * `[services.<name>]` (issue 28): a stack of several models. Each service reads as a single-model
 * file of its own (either layout) beside the shared target, output_dir, catalog and dry_run; its
 * issues come back under `services.<name>.`; names are DNS labels; service k's unset ports are the
 * usual ones + 1000k and a port two services are given is refused naming both keys; a file without
 * [services] reads exactly as before.
 */
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfigText, loadStackText, type ConfigIssue } from "../../components/config";
import { buildStackPlan } from "../../components/planner";
import { planDeployment } from "../../components/plan/plan";
import { targetOf } from "../../components/targets";
import { stackText } from "../helpers";

const SLURM = `[slurm]\njob_name = "pj"\npartition = "cluster"\n`;

function stackIssues(text: string, overrides: Parameters<typeof loadStackText>[2] = []): ConfigIssue[] {
  try {
    loadStackText(text, "t.toml", overrides);
  } catch (err) {
    if (err instanceof ConfigError) return err.issues;
    throw err;
  }
  throw new Error("expected the file to be refused, but it loaded");
}

const TWO = `${SLURM}
[services.policy]
model = "Qwen/Qwen3-32B"
[services.policy.parallel]
tp = 8
[services.policy.deployment]
type = "multi_node"
num_nodes = 2

[services.judge.vllm]
model = "Qwen/Qwen3-8B"
tensor-parallel-size = 4
`;

describe("a file with [services]", () => {
  it("reads each service in its own layout, in the file's order, named", () => {
    const [policy, judge] = loadStackText(TWO, "t.toml");
    expect([policy.service, judge.service]).toEqual(["policy", "judge"]);
    expect(policy.layout).toBe("standalone");
    expect(policy.prime_rl).toBeUndefined();
    expect(judge.prime_rl).toBe(true); // [vllm]: prime-rl's current layout
    expect([policy.model.name, judge.model.name]).toEqual(["Qwen/Qwen3-32B", "Qwen/Qwen3-8B"]);
    expect([policy.parallel.tp, judge.parallel.tp]).toEqual([8, 4]);
    expect(policy.target).toEqual(expect.objectContaining({ kind: "slurm", partition: "cluster", co_schedule: true }));
  });

  it("gives service k's unset ports + 1000k, and plans every name under the service", () => {
    const stack = buildStackPlan(loadStackText(TWO, "t.toml"), "dev");
    const [policy, judge] = stack.services;
    expect(policy.islands[0].endpoints.router?.port).toBe(8000);
    expect(judge.islands[0].endpoints.router?.port).toBe(9000);
    expect(judge.islands[0].endpoints.engines[0].url.port).toBe(9100);
    expect(policy.islands.map((i) => i.name)).toEqual(["policy/island-0"]);
    expect(judge.islands.map((i) => i.name)).toEqual(["judge/island-0"]);
    expect(judge.service).toBe("judge");
  });

  it("adds the services' totals up", () => {
    const stack = buildStackPlan(loadStackText(TWO, "t.toml"), "dev");
    const [p, j] = stack.services;
    expect(stack.totals).toEqual({
      nodes: p.totals.nodes + j.totals.nodes,
      gpus: p.totals.gpus + j.totals.gpus,
      gpusAllocated: p.totals.gpusAllocated + j.totals.gpusAllocated,
      routers: p.totals.routers + j.totals.routers,
      engines: p.totals.engines + j.totals.engines,
    });
    expect(stack.totals).toEqual({ nodes: 3, gpus: 20, gpusAllocated: 20, routers: 2, engines: 3 });
  });

  it("co_schedule = false and an explicit value are kept; a single-model file's is left unset", () => {
    const off = loadStackText(TWO.replace('partition = "cluster"', 'partition = "cluster"\nco_schedule = false'), "t");
    expect(off.map((c) => (c.target.kind === "slurm" ? c.target.co_schedule : "?"))).toEqual([false, false]);
    const single = loadConfigText(stackText("single-node"), "single-node.toml");
    expect(single.target.kind === "slurm" && single.target.co_schedule).toBeUndefined();
    expect(single.service).toBeUndefined();
  });

  it("reports a service's problems under services.<name>, a shared key's at the top", () => {
    const issues = stackIssues(
      TWO.replace("tp = 8", 'tp = "eight"').replace('partition = "cluster"', 'partition = "cluster"\nbogus = 1'),
    );
    const paths = issues.map((i) => i.path);
    expect(paths).toContain("services.policy.parallel.tp");
    expect(paths).toContain("slurm.bogus");
    // the shared key's problem is one issue, not one per service
    expect(paths.filter((p) => p === "slurm.bogus")).toHaveLength(1);
  });

  it("refuses inference keys at the top level, a shared key inside a service, and a bad name", () => {
    const issues = stackIssues(`model = "Qwen/Qwen3-8B"
${SLURM}
[services.Policy_1]
model = "Qwen/Qwen3-8B"
[services.judge]
model = "Qwen/Qwen3-8B"
output_dir = "x"
`);
    const by = Object.fromEntries(issues.map((i) => [i.path, i.message]));
    expect(by.model).toMatch(/move "model" into \[services.<name>\]/);
    expect(by["services.Policy_1"]).toMatch(/DNS label/);
    expect(by["services.judge.output_dir"]).toMatch(/shared by every service/);
  });

  it("takes a service's own [slurm] job keys over the file's, and refuses the stack's keys there", () => {
    const [, judge] = loadStackText(
      TWO + `[services.judge.slurm]\ntime = "04:00:00"\nmem = "128G"\ncpus_per_task = 16\npartition = "small"\n`,
      "t",
    );
    expect(judge.target).toEqual(
      expect.objectContaining({ partition: "small", time: "04:00:00", mem: "128G", cpus_per_task: 16, job_name: "pj" }),
    );
    const issues = stackIssues(TWO + `[services.judge.slurm]\njob_name = "x"\nmem = "lots"\n`);
    const by = Object.fromEntries(issues.map((i) => [i.path, i.message]));
    expect(by["services.judge.slurm.job_name"]).toMatch(/is the stack's: set it in the top-level \[slurm\]/);
    expect(by["services.judge.slurm.mem"]).toMatch(/SLURM memory size/);
  });

  it("refuses one port given to two services, naming both keys", () => {
    const issues = stackIssues(
      TWO.replace("[services.policy.parallel]", "[services.policy.server]\nport = 8500\n[services.policy.parallel]") +
        "[services.judge.server]\nport = 8500\n",
    );
    expect(issues).toEqual([
      expect.objectContaining({
        path: "services.judge.server.port",
        message: expect.stringMatching(/port 8500, as services\.policy\.server\.port does/),
      }),
    ]);
  });

  it("routes overrides: services.<name>.<key> to that service, a shared key to all, another key is refused", () => {
    const [policy, judge] = loadStackText(TWO, "t", [
      { path: ["services", "judge", "vllm", "max-num-seqs"], value: 64 },
      { path: ["slurm", "partition"], value: "other" },
    ]);
    expect(judge.vllm_extra.max_num_seqs ?? (judge as unknown as Record<string, unknown>).max_num_seqs).toBe(64);
    expect([policy.target, judge.target].map((t) => (t.kind === "slurm" ? t.partition : ""))).toEqual([
      "other",
      "other",
    ]);
    const issues = stackIssues(TWO, [{ path: ["parallel", "tp"], value: 2 }]);
    expect(issues[0]).toEqual(
      expect.objectContaining({
        path: "parallel.tp",
        message: expect.stringMatching(/services\.<name>\.parallel\.tp/),
      }),
    );
  });

  it("the local target refuses a stack of several services before anything starts, naming the targets that run it", () => {
    const text = `[local]\ndevice = "cpu"\n[services.a]\nmodel = "Qwen/Qwen3-8B"\n[services.b]\nmodel = "Qwen/Qwen3-8B"\n`;
    expect(() => buildStackPlan(loadStackText(text, "t"), "t")).toThrow(
      /services: holds 2 services \(a, b\), and the local target runs one service per stack.*\[slurm\] or \[kubernetes\]/,
    );
    // One named service is fine.
    expect(buildStackPlan(loadStackText(text.replace(/\[services\.b\][^]*$/, ""), "t"), "t").services).toHaveLength(1);
  });

  it("loadConfigText refuses a stack of several services (it reads one model)", () => {
    expect(() => loadConfigText(TWO, "t")).toThrow(/holds 2 services/);
  });

  it("stacks/policy-and-judge.toml plans two services, the judge's node shared (not exclusive, 4 GPUs asked)", () => {
    const stack = buildStackPlan(loadStackText(stackText("policy-and-judge"), "policy-and-judge.toml"), "dev");
    expect(stack.services.map((p) => [p.service, p.model, p.totals.nodes])).toEqual([
      ["policy", "Qwen/Qwen3-32B", 2],
      ["judge", "Qwen/Qwen3-8B", 1],
    ]);
    expect(stack.services.flatMap((p) => p.warnings)).toEqual([]);
  });
});

describe("exclusive defaults to whole nodes only when the engines fill them (issue 28 item 5)", () => {
  const half = `[model]\nname = "Qwen/Qwen3-8B"\n[parallel]\ntp = 4\n${SLURM}`;

  it("a node with free GPUs is not held idle by default, and nothing warns", () => {
    const cfg = loadConfigText(half, "t");
    const plan = planDeployment(cfg, "t", targetOf("slurm").plan);
    expect(plan.warnings).toEqual([]);
    expect(plan.totals.gpusAllocated).toBe(4);
  });

  it("slurm.exclusive = true holds the node: the warning names deployment.gpus_per_node and slurm.exclusive", () => {
    const cfg = loadConfigText(half + "exclusive = true\n", "t");
    const plan = planDeployment(cfg, "t", targetOf("slurm").plan);
    expect(plan.totals.gpusAllocated).toBe(8);
    expect(plan.warnings).toEqual([expect.stringMatching(/deployment\.gpus_per_node = 8.*slurm\.exclusive = true/)]);
  });
});
