import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { loadStackText } from "../../components/config/load";
import { runBuiltCli, runPlanCli, STACK_NAMES, stackText } from "../helpers";

const run = runPlanCli;

afterEach(() => vi.restoreAllMocks());

const SHAPE_TOTALS: Record<string, { nodes: number; routers: number; engines: number }> = {
  "single-node": { nodes: 1, routers: 1, engines: 1 },
  "multi-replica": { nodes: 2, routers: 1, engines: 2 },
  "wide-ep": { nodes: 2, routers: 1, engines: 2 },
  disaggregated: { nodes: 6, routers: 1, engines: 6 },
  "disaggregated-x3": { nodes: 18, routers: 3, engines: 18 },
  "k8s-disaggregated-x3": { nodes: 18, routers: 3, engines: 18 },
};

describe("npm run plan", () => {
  it.each(STACK_NAMES)("%s: readable plan, exit 0", (name) => {
    const { code, stdout, stderr } = run([name]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toMatch(new RegExp(`^stack ${name} `));
    expect(stdout).toContain("endpoints:");
    // Each engine's own program: prime-rl's `inference`, SGLang's server module, else `vllm serve`.
    for (const c of loadStackText(stackText(name), `${name}.toml`)) {
      const program =
        c.prime_engine?.engine === "prime-rl"
          ? "$ inference --vllm.model "
          : c.engine === "sglang"
            ? "$ python3 -m sglang.launch_server --model-path "
            : "$ vllm serve ";
      expect(stdout).toContain(program);
    }
  });

  it("a Kubernetes stack shows its workloads, pods and in-cluster URLs", () => {
    const { code, stdout } = run(["k8s-wide-ep"]);
    expect(code).toBe(0);
    expect(stdout).toContain(
      "LeaderWorkerSet k8s-wide-ep-i0-replica0: k8s-wide-ep-i0-replica0-0 k8s-wide-ep-i0-replica0-0-1",
    );
    expect(stdout).toContain("router  http://k8s-wide-ep-i0-router.vllm-fleet-k8s-wide-ep.svc.cluster.local:8000/v1");
    expect(stdout).toContain(
      "admin   http://k8s-wide-ep-i0-replica0-0-1.k8s-wide-ep-i0-replica0.vllm-fleet-k8s-wide-ep.svc.cluster.local:8100/v1  (replica, i0-replica0-n1)",
    );
  });

  // Issue 31: the namespace, and the Pod Security level the pods need with the keys behind it.
  it("a Kubernetes stack states its namespace and Pod Security level, and why, in text and --json", () => {
    const text = run(["k8s-kv-offload-native"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(
      "namespace vllm-fleet-k8s-kv-offload-native: created by the fleet, deleted by pulumi destroy with everything in it",
    );
    expect(text.stdout).toContain(
      "pod security: privileged, enforced on the namespace (pod-security.kubernetes.io/enforce: privileged)",
    );
    expect(text.stdout).toContain(
      "capability IPC_LOCK, beyond baseline: inference.kv_cache_offload.type (StatefulSet/k8s-kv-offload-native-i0-replica0)",
    );
    const json = JSON.parse(run(["k8s-multi-replica", "--json"]).stdout);
    expect(json.namespace).toEqual({ name: "vllm-fleet-k8s-multi-replica", created: true });
    expect(json.pod_security).toMatchObject({
      level: "privileged",
      labelled: true,
      violations: [{ what: "hostPath volume model-cache", keys: ["kubernetes.model_cache.host_path"] }],
    });
    const services = JSON.parse(run(["k8s-policy-and-judge", "--json"]).stdout);
    expect(services.pod_security.level).toBe("privileged");
    expect(services.namespace.name).toBe("vllm-fleet-k8s-policy-and-judge");
  });

  it("a namespace the fleet does not create must admit the level: the plan says so", () => {
    const { code, stdout } = run(["k8s-single-node"]);
    expect(code).toBe(0);
    expect(stdout).toContain(
      "namespace inference: not created by the fleet (it must exist; pulumi destroy leaves it; if an earlier pulumi up of this stack created it, set create_namespace = true to keep it",
    );
    expect(stdout).toContain("pod security: baseline: namespace inference must admit it");
    expect(JSON.parse(run(["k8s-llm-d", "--json"]).stdout).pod_security).toEqual({
      level: "baseline",
      labelled: true,
      violations: [],
    });
  });

  it("a SLURM stack says nothing of namespaces or Pod Security", () => {
    const { stdout } = run(["single-node"]);
    expect(stdout).not.toContain("pod security");
    expect(JSON.parse(run(["single-node", "--json"]).stdout).pod_security).toBeUndefined();
  });

  it.each(Object.entries(SHAPE_TOTALS))("%s --json totals are the shape's numbers", (name, totals) => {
    const { code, stdout } = run([name, "--json"]);
    expect(code).toBe(0);
    const plan = JSON.parse(stdout);
    expect(plan.totals).toMatchObject(totals);
    expect(Object.keys(plan.totals).sort()).toEqual(["engines", "gpus", "gpusAllocated", "nodes", "routers"]);
  });

  it("a stack of services --json: each service's plan with its own totals under services.<name>, and the stack's totals their sum", () => {
    const { code, stdout } = run(["policy-and-judge", "--json"]);
    expect(code).toBe(0);
    const plan = JSON.parse(stdout);
    expect(Object.keys(plan.services)).toEqual(["policy", "judge"]);
    expect(plan.services.policy).toMatchObject({ model: "Qwen/Qwen3-32B", shape: "multi_replica" });
    expect(plan.services.judge).toMatchObject({ model: "Qwen/Qwen3-8B", shape: "single_node" });
    for (const k of ["nodes", "gpus", "gpusAllocated", "routers", "engines"])
      expect(plan.totals[k], k).toBe(plan.services.policy.totals[k] + plan.services.judge.totals[k]);
    expect(plan.totals).toEqual({ nodes: 3, gpus: 20, gpusAllocated: 20, routers: 2, engines: 3 });
    // Each service's config says its service, and the judge's own job keys.
    expect(plan.services.judge.config).toMatchObject({ service: "judge", target: { time: "04:00:00", mem: "128G" } });
  });

  it("applies dotted overrides (--server.port 8001)", () => {
    const { code, stdout } = run(["single-node", "--json", "--server.port", "8001", "--model.max_model_len", "2048"]);
    expect(code).toBe(0);
    const plan = JSON.parse(stdout);
    expect(plan.islands[0].endpoints.router).toBe("http://<i0-n0>:8001/v1");
    expect(plan.islands[0].engines[0].argv).toEqual(
      expect.arrayContaining(["--port", "8101", "--max-model-len", "2048"]),
    );
  });

  it("takes options, overrides and the stack in any order", () => {
    const { code, stdout, stderr } = run([
      "--server.port",
      "8001",
      "single-node",
      "--model.enforce_eager",
      "--out=" + fs.mkdtempSync(path.join(os.tmpdir(), "plan-")),
      "--json",
    ]);
    expect(code, stderr).toBe(0);
    const plan = JSON.parse(stdout);
    expect(plan.islands[0].endpoints.router).toBe("http://<i0-n0>:8001/v1");
    expect(plan.islands[0].engines[0].argv).toContain("--enforce-eager");
  });

  it("exits 2 without a stack, with two, and when --out has no directory", () => {
    for (const args of [[], ["--json"], ["single-node", "multi-replica"], ["single-node", "--out"]]) {
      const { code, stdout, stderr } = run(args);
      expect(code, args.join(" ")).toBe(2);
      expect(stdout).toBe("");
      expect(stderr).toContain("(plan --help shows the usage)");
    }
    expect(run([]).stderr).toContain("stacks: disaggregated, ");
  });

  it("--help and -h print the usage on stdout and exit 0", () => {
    for (const flag of ["--help", "-h"]) {
      const { code, stdout, stderr } = run([flag]);
      expect(code).toBe(0);
      expect(stderr).toBe("");
      expect(stdout).toMatch(/^Usage: plan \[options\] <stack>/);
    }
  });

  it("accepts a file path", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "plan-"));
    const file = path.join(dir, "mine.toml");
    fs.writeFileSync(file, `[model]\nname = "m/x"\n[slurm]\njob_name = "mine"\n`);
    const { code, stdout } = run([file, "--json"]);
    expect(code).toBe(0);
    expect(JSON.parse(stdout).stack).toBe("mine");
  });

  it("exits 2 listing every problem, and prints nothing on stdout", () => {
    const { code, stdout, stderr } = run(["single-node", "--parallel.tp", "16", "--model.bogus", "1"]);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toContain("parallel.tp");
    expect(stderr).toContain("model.bogus");
  });

  it("exits 2 for an unknown stack and lists the known ones", () => {
    const { code, stderr } = run(["no-such-stack"]);
    expect(code).toBe(2);
    expect(stderr).toContain("single-node");
  });

  it("works as a real process: the compiled CLI that npm run plan runs", () => {
    const ok = runBuiltCli("plan", ["disaggregated-x3", "--json"]);
    expect(ok.status).toBe(0);
    expect(JSON.parse(ok.stdout).totals).toMatchObject({ nodes: 18, routers: 3 });
    const bad = runBuiltCli("plan", ["single-node", "--deployment.type", "nope"]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("deployment.type");
  }, 60_000);
});

describe("npm run plan -- <stack> --out <dir>", () => {
  it("a co-scheduled stack: the heterogeneous job's script and commands under cosched/, and no job of an island's own", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "plan-out-pj-"));
    expect(run(["policy-and-judge", "--out", dir]).code).toBe(0);
    expect(fs.readdirSync(path.join(dir, "cosched")).sort()).toEqual([
      "create.sh",
      "delete.sh",
      "policy-and-judge-cosched.sbatch",
    ]);
    const sbatch = fs.readFileSync(path.join(dir, "cosched", "policy-and-judge-cosched.sbatch"), "utf8");
    expect(sbatch.match(/^#SBATCH hetjob$/gm)).toHaveLength(1);
    expect(fs.readFileSync(path.join(dir, "cosched", "create.sh"), "utf8")).toContain(sbatch.trimEnd());
    // No island job of its own: the islands are components of the one job (and these generate no files).
    for (const island of ["policy/island-0", "judge/island-0"])
      expect(fs.existsSync(path.join(dir, island))).toBe(false);
    expect(Object.keys(JSON.parse(fs.readFileSync(path.join(dir, "plan.json"), "utf8")).services)).toEqual([
      "policy",
      "judge",
    ]);
  });

  it("writes plan.json and, per island, the sbatch script, the generated files and the create/delete commands", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "plan-out-"));
    const { code } = run(["llm-d", "--out", dir]);
    expect(code).toBe(0);
    const island = path.join(dir, "island-0");
    expect(fs.readdirSync(island).sort()).toEqual([
      "create.sh",
      "delete.sh",
      "endpoints.yaml",
      "envoy.yaml",
      "epp.yaml",
      "llm-d-i0.sbatch",
    ]);
    expect(JSON.parse(fs.readFileSync(path.join(dir, "plan.json"), "utf8")).stack).toBe("llm-d");
    const sbatch = fs.readFileSync(path.join(island, "llm-d-i0.sbatch"), "utf8");
    expect(sbatch).toMatch(/^#!\/bin\/bash\n/);
    // The create script embeds exactly the sbatch script written beside it.
    expect(fs.readFileSync(path.join(island, "create.sh"), "utf8")).toContain(sbatch.trimEnd());
    expect(fs.readFileSync(path.join(island, "delete.sh"), "utf8")).toMatch(
      /^timeout -k 30 300 bash -c '.*scancel --name="\$name".*'\n$/,
    );
    expect(fs.statSync(path.join(island, "llm-d-i0.sbatch")).mode & 0o111).not.toBe(0);
  });
});
