/**
 * [vllm_fleet] engine: an RL file's engines run prime-rl's own server (its `inference` console
 * script, src/prime_rl/entrypoints/inference.py) with the same vLLM arguments spelled as [vllm]
 * and [server] keys, and the weight-update worker extension weight_broadcast.type picks
 * (src/prime_rl/inference/vllm/server.py WORKER_EXTENSION_CLS); a standalone file keeps `vllm serve`.
 */
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfigFile, loadConfigText } from "../../components/config";
import { PRIME_WORKER_EXTENSION, vllmArgvOf } from "../../components/plan/engines/vllm/argv";
import { buildPlan } from "../../components/planner";
import { showValue, type Value } from "../../components/plan/values";
import { renderIslandScript } from "../../components/slurm";
import { ROOT, SLURM } from "../helpers";

const show = (argv: Value[]) => argv.map((v) => showValue(v, 0));
const flag = (argv: Value[], name: string) => {
  const s = show(argv);
  const i = s.indexOf(name);
  return i < 0 ? undefined : s[i + 1];
};
const fixtureCfg = (name: string) => loadConfigFile(path.join(ROOT, "test/fixtures/prime-rl", `${name}.toml`), []);
const fixture = (name: string) => buildPlan(fixtureCfg(name), name);
const text = (t: string) => buildPlan(loadConfigText(t + SLURM, "t.toml"), "t");

const RL = `
[model]
name = "Qwen/Qwen3-8B"
[deployment]
type = "single_node"
num_train_gpus = 1
num_infer_gpus = 2
[trainer]
[orchestrator]
[inference.vllm]
tensor_parallel_size = 1
max_model_len = 4096
enforce_eager = true
enable_prefix_caching = false
`;

describe("prime-rl's server for RL files", () => {
  it("an RL fixture's engines run `inference` with [server]/[vllm] flags, nccl by default", () => {
    const plan = fixture("rl-multi-node");
    const engines = plan.islands.flatMap((i) => i.engines);
    expect(engines.length).toBeGreaterThan(1);
    for (const e of engines) {
      const argv = show(e.argv);
      expect(argv[0]).toBe("inference");
      expect(flag(e.argv, "--vllm.model")).toBe("Qwen/Qwen3-8B");
      expect(flag(e.argv, "--server.port")).toBe(String(e.port));
      expect(flag(e.argv, "--vllm.tensor-parallel-size")).toBe("2");
      expect(flag(e.argv, "--weight-broadcast.type")).toBe("nccl");
      expect(flag(e.argv, "--vllm.worker-extension-cls")).toBe(
        "prime_rl.inference.vllm.worker.nccl.NCCLWeightUpdateWorker",
      );
      // No bare vLLM flag is left: every one is a [vllm] or [server] key.
      expect(argv.filter((a) => a.startsWith("--") && !/^--(vllm|server|weight-broadcast)\./.test(a))).toEqual([]);
    }
    expect(fixtureCfg("rl-multi-node").ignored).not.toContain("weight_broadcast");
  });

  it("is the same command line as `vllm serve` would get, plus the worker extension", () => {
    const prime = text(RL).islands[0].engines[0];
    const stock = text(RL + `\n[vllm_fleet]\nengine = "vllm"\n`).islands[0].engines[0];
    expect(show(stock.argv).slice(0, 2)).toEqual(["vllm", "serve"]);
    expect(show(vllmArgvOf(prime.argv))).toEqual([
      ...show(stock.argv),
      "--worker-extension-cls",
      PRIME_WORKER_EXTENSION.nccl,
    ]);
    // Switches stay bare; a `--no-` form becomes `false`.
    const argv = show(prime.argv);
    expect(argv).toContain("--vllm.enforce-eager");
    expect(flag(prime.argv, "--vllm.enforce-eager")).toMatch(/^--/);
    expect(flag(prime.argv, "--vllm.enable-prefix-caching")).toBe("false");
  });

  it("a standalone fixture keeps `vllm serve` unless [vllm_fleet] engine asks for prime-rl", () => {
    for (const e of fixture("single-node").islands[0].engines) {
      expect(show(e.argv).slice(0, 2)).toEqual(["vllm", "serve"]);
      expect(show(e.argv)).not.toContain("--worker-extension-cls");
    }
    const standalone = `[vllm]\nmodel = "Qwen/Qwen3-8B"\n`;
    const e = text(standalone + `[vllm_fleet]\nengine = "prime-rl"\n`).islands[0].engines[0];
    expect(show(e.argv)[0]).toBe("inference");
    // InferenceConfig's own default (configs/inference.py): filesystem.
    expect(flag(e.argv, "--weight-broadcast.type")).toBe("filesystem");
    expect(loadConfigText(standalone + `[weight_broadcast]\ntype = "nixl"\n` + SLURM, "t.toml").ignored).toContain(
      "weight_broadcast",
    );
  });

  it.each([
    ["nccl", "prime_rl.inference.vllm.worker.nccl.NCCLWeightUpdateWorker"],
    ["filesystem", "prime_rl.inference.vllm.worker.filesystem.FileSystemWeightUpdateWorker"],
    ["nixl", "prime_rl.inference.vllm.worker.nixl.NIXLWeightUpdateWorker"],
  ])("weight_broadcast.type = %s selects %s", (type, cls) => {
    expect(PRIME_WORKER_EXTENSION[type as keyof typeof PRIME_WORKER_EXTENSION]).toBe(cls);
    // RL: the top-level [weight_broadcast] is the one prime-rl applies to inference (configs/rl.py).
    const rl = text(RL + `\n[weight_broadcast]\ntype = "${type}"\n`).islands[0].engines[0];
    expect(flag(rl.argv, "--weight-broadcast.type")).toBe(type);
    expect(flag(rl.argv, "--vllm.worker-extension-cls")).toBe(cls);
    const sa = text(
      `[vllm]\nmodel = "Qwen/Qwen3-8B"\n[weight_broadcast]\ntype = "${type}"\n[vllm_fleet]\nengine = "prime-rl"\n`,
    ).islands[0].engines[0];
    expect(flag(sa.argv, "--vllm.worker-extension-cls")).toBe(cls);
  });

  it("RL with a LoRA trainer defaults to filesystem broadcast (configs/rl.py auto_setup_weight_broadcast)", () => {
    const e = text(RL + `\n[trainer.model.lora]\nrank = 8\n`).islands[0].engines[0];
    expect(flag(e.argv, "--weight-broadcast.type")).toBe("filesystem");
  });

  it("the sbatch cleans up leftover `inference` processes only when engines run it", () => {
    // The cleanup runs on whole nodes only (on a shared node it would stop other jobs' engines).
    const WHOLE = "[vllm_fleet.slurm]\nexclusive = true\n";
    const rl = loadConfigText(RL + SLURM + WHOLE, "t.toml");
    const rlPlan = buildPlan(rl, "t");
    const { script } = renderIslandScript(rlPlan, rlPlan.islands[0]);
    expect(script).toMatch(/programs='\^\([^']*\|inference\)\$'/);
    const sa = loadConfigText(`[vllm]\nmodel = "Qwen/Qwen3-8B"\n` + SLURM + WHOLE, "t.toml");
    const saPlan = buildPlan(sa, "t");
    expect(renderIslandScript(saPlan, saPlan.islands[0]).script).not.toContain("|inference)");
  });
});
