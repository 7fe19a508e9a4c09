import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfigFile } from "../../components/config";
import { engineNamed, engineOf, metricNameSets, sharedRoutes } from "../../components/plan/engines";
import { buildPlan } from "../../components/planner";
import { renderK8sFleet, allK8sObjects } from "../../components/kubernetes";
import { load, plan, ROOT, SLURM, stackText } from "../helpers";

/*
 * The engine seam: the planner builds every engine process with the config's engine, and the
 * targets read the routes of the engine each process runs.
 */

const rl = () => loadConfigFile(path.join(ROOT, "test/fixtures/prime-rl/rl-multi-node.toml"), []);

describe("engines", () => {
  it("a config runs vLLM unless prime-rl's server is asked for; each process names its engine", () => {
    const standalone = load(`model = "Qwen/Qwen3-8B"\n${SLURM}`);
    expect(engineOf(standalone).name).toBe("vllm");
    expect(engineOf(rl()).name).toBe("prime-rl");
    for (const [cfg, program] of [
      [standalone, "vllm"],
      [rl(), "inference"],
    ] as const) {
      const engines = buildPlan(cfg, "t").islands.flatMap((i) => i.engines);
      expect(engines.every((e) => e.engine === engineOf(cfg).name && e.argv[0] === program)).toBe(true);
    }
  });

  it("prime-rl's server is vLLM's command line in its own spelling, checked as the vLLM one", () => {
    const cfg = rl();
    const e = buildPlan(cfg, "t").islands[0].engines[0];
    const layout = { ...e };
    const vllmArgv = engineNamed("vllm").argv(cfg, layout);
    expect(engineNamed("prime-rl").argv(cfg, layout)).toEqual(e.argv);
    // The same vLLM arguments, plus the worker extension prime-rl's server sets.
    const vllmArgs = engineNamed("vllm").manifestArgs(vllmArgv);
    const primeArgs = engineNamed("prime-rl").manifestArgs(e.argv);
    expect(primeArgs.slice(0, vllmArgs.length)).toEqual(vllmArgs);
    expect(primeArgs.slice(vllmArgs.length)).toEqual([
      "--worker-extension-cls",
      "prime_rl.inference.vllm.worker.nccl.NCCLWeightUpdateWorker",
    ]);
  });

  it("the targets probe the routes of the engine a process runs", () => {
    const k = plan(stackText("k8s-single-node"));
    const pods = JSON.stringify(allK8sObjects(renderK8sFleet(k, [])));
    expect(pods).toContain(`"path":"${engineNamed(k.islands[0].engines[0].engine).routes.health}"`);
  });

  it("the fleet CLI probes the routes every engine shares, and reads every engine's metric names", () => {
    // The admin base and the weight-version route are each engine's own (the follower reads the latter from the plan).
    const { admin: _admin, weightVersion: _version, ...probe } = engineNamed("vllm").routes;
    expect(sharedRoutes()).toEqual(probe);
    const { admin: _sglangAdmin, weightVersion: _sglangVersion, ...sglangProbe } = engineNamed("sglang").routes;
    expect(sglangProbe).toEqual(probe);
    expect(metricNameSets().map((n) => n.running)).toEqual(["vllm:num_requests_running", "sglang:num_running_reqs"]);
  });
});
