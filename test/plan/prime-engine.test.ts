/**
 * prime-rl's layout: the flags, environment and parsers prime-rl's own server gives every engine
 * (configs/inference.py to_namespace, inference/server.py setup_vllm_env, utils/process.py,
 * utils/parsers.py, entrypoints/inference.py's local router), against a seed-layout stack, which
 * keeps its own behaviour.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfigFile, loadConfigText, parseOverrides } from "../../components/config";
import { buildPlan } from "../../components/planner";
import {
  resolvePrimeParser,
  PRIME_REASONING_PARSERS,
  PRIME_TOOL_CALL_PARSERS,
} from "../../components/plan/prime-parsers";
import { resolveParser } from "../../components/plan/parser-detection";
import { showValue, type Value } from "../../components/plan/values";
import { renderIslandScript } from "../../components/slurm";
import { expectShellcheckClean } from "../shellcheck";
import { ROOT, load, SLURM, stackText } from "../helpers";

const show = (argv: Value[]) => argv.map((v) => showValue(v, 0));
const flag = (argv: Value[], name: string) => {
  const s = show(argv);
  const i = s.indexOf(name);
  return i < 0 ? undefined : s[i + 1];
};
const count = (argv: Value[], name: string) => show(argv).filter((a) => a === name).length;
const envOf = (env: [string, Value][]) => new Map(env.map(([k, v]) => [k, showValue(v, 0)]));

const prime = (text: string) => buildPlan(loadConfigText(text + SLURM, "t.toml"), "t");
const fixture = (name: string) =>
  buildPlan(loadConfigFile(path.join(ROOT, "test/fixtures/prime-rl", `${name}.toml`), []), name);
const seed = (name: string) => buildPlan(load(stackText(name)), name);
const engine = (p: ReturnType<typeof buildPlan>) => p.islands[0].engines[0];

describe("prime-rl's parser table (utils/parsers.py), one test per row", () => {
  // One model per pattern row, with the tool-call and reasoning parsers prime-rl's tests/unit/test_parsers.py expect.
  const rows: [string, string | undefined, string | undefined][] = [
    ["arcee-ai/Trinity-Large-Thinking", "qwen3_coder", "deepseek_r1"],
    ["arcee-ai/Trinity-Large-Preview", "hermes", undefined],
    ["arcee-ai/Trinity-Mini", "hermes", "deepseek_r1"],
    ["deepseek-ai/DeepSeek-V3.2", "deepseek_v32", "deepseek_r1"],
    ["deepseek-ai/DeepSeek-V3.1", "deepseek_v31", "deepseek_r1"],
    ["zai-org/GLM-4.5-Air", "glm45", "glm45"],
    ["zai-org/GLM-4.7", "glm47", "glm45"],
    ["zai-org/GLM-5", "glm47", "glm45"],
    ["MiniMaxAI/MiniMax-M2.1", "minimax_m2", "minimax_m2_append_think"],
    ["openai/gpt-oss-120b", "openai", undefined],
    ["poolside/Laguna-S-2.1", "poolside_v1", "poolside_v1"],
    ["PrimeIntellect/INTELLECT-3", "qwen3_coder", "deepseek_r1"],
    ["nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16", "qwen3_coder", "nemotron_v3"],
    ["nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "qwen3_coder", "nano_v3"],
    ["nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-BF16", "qwen3_coder", "nano_v3"],
    ["stepfun-ai/Step-3.5-Flash", "step3p5", "step3p5"],
    ["Qwen/Qwen3.5-35B-A3B", "qwen3_coder", "qwen3"],
    ["Qwen/Qwen3-Coder-30B-A3B-Instruct", "qwen3_coder", undefined],
    ["Qwen/Qwen3-8B", "hermes", undefined],
    ["Qwen/Qwen3-4B-Instruct-2507", "hermes", undefined],
    ["Qwen/Qwen3-30B-A3B-Thinking-2507", "hermes", "deepseek_r1"],
    // No row matches: no parser, as prime-rl.
    ["meta-llama/Llama-3.1-8B-Instruct", undefined, undefined],
    ["deepseek-ai/DeepSeek-V3", undefined, undefined],
    ["qwen/qwen3-8b", undefined, undefined], // prime-rl's patterns are case-sensitive
  ];

  it.each(rows)("%s: tool %s, reasoning %s", (model, tool, reasoning) => {
    expect(resolvePrimeParser("tool", "auto", model)).toBe(tool);
    expect(resolvePrimeParser("reasoning", "auto", model)).toBe(reasoning);
  });

  it("every pattern of both tables is exercised by a row", () => {
    for (const table of [PRIME_TOOL_CALL_PARSERS, PRIME_REASONING_PARSERS])
      for (const [re] of table)
        expect(
          rows.some(([m]) => re.test(m)),
          String(re),
        ).toBe(true);
  });

  it("a parser named in the file is used as written", () => {
    expect(resolvePrimeParser("tool", "pythonic", "Qwen/Qwen3-8B")).toBe("pythonic");
    expect(resolvePrimeParser("reasoning", undefined, "Qwen/Qwen3-8B")).toBeUndefined();
  });

  it('a prime-layout file resolves "auto" with this table; the older layout keeps its own', () => {
    const e = engine(prime(`[vllm]\nmodel = "PrimeIntellect/INTELLECT-3"\ntensor_parallel_size = 8\n`));
    expect(flag(e.argv, "--tool-call-parser")).toBe("qwen3_coder");
    expect(flag(e.argv, "--reasoning-parser")).toBe("deepseek_r1");
    expect(show(e.argv)).toContain("--enable-auto-tool-choice");
    const none = engine(prime(`[vllm]\nmodel = "meta-llama/Llama-3.1-8B-Instruct"\n`));
    expect(show(none.argv)).not.toContain("--tool-call-parser");
    expect(show(none.argv)).not.toContain("--enable-auto-tool-choice");
    expect(show(none.argv)).not.toContain("--reasoning-parser");
    // The older layout's table gives Qwen3's hybrid-thinking models the qwen3 reasoning parser; prime-rl's none.
    expect(resolveParser("reasoning", "auto", "Qwen/Qwen3-8B")).toBe("qwen3");
    expect(resolvePrimeParser("reasoning", "auto", "Qwen/Qwen3-8B")).toBeUndefined();
  });
});

describe("prime-rl's engine flags (configs/inference.py to_namespace)", () => {
  it("logprobs processed and fp32 LM head / router logits on by default; the seed layout has neither", () => {
    const e = engine(fixture("single-node"));
    expect(flag(e.argv, "--logprobs-mode")).toBe("processed_logprobs");
    expect(JSON.parse(flag(e.argv, "--additional-config")!)).toEqual({ fp32_lm_head: true, fp32_router_logits: true });
    const s = engine(seed("single-node"));
    expect(show(s.argv)).not.toContain("--logprobs-mode");
    expect(show(s.argv)).not.toContain("--additional-config");
  });

  it("enable_fp32_* = false drop their key; both false drop --additional-config", () => {
    const one = engine(prime(`enable_fp32_router_logits = false\n[vllm]\nmodel = "Qwen/Qwen3-8B"\n`));
    expect(flag(one.argv, "--additional-config")).toBe('{"fp32_lm_head":true}');
    const none = engine(
      prime(`enable_fp32_lm_head = false\nenable_fp32_router_logits = false\n[vllm]\nmodel = "Qwen/Qwen3-8B"\n`),
    );
    expect(show(none.argv)).not.toContain("--additional-config");
  });

  it("the user's logprobs_mode wins; the user's additional_config is kept and extended, once", () => {
    const e = engine(
      prime(
        `[vllm]\nmodel = "Qwen/Qwen3-8B"\nlogprobs_mode = "raw_logprobs"\nadditional_config = '{"foo":1,"fp32_lm_head":false}'\n`,
      ),
    );
    expect(flag(e.argv, "--logprobs-mode")).toBe("raw_logprobs");
    expect(count(e.argv, "--logprobs-mode")).toBe(1);
    expect(count(e.argv, "--additional-config")).toBe(1);
    expect(JSON.parse(flag(e.argv, "--additional-config")!)).toEqual({
      foo: 1,
      fp32_lm_head: true,
      fp32_router_logits: true,
    });
  });

  it("with LoRA: --max-cpu-loras 100 (VllmConfig's default) unless the file sets it; none without LoRA", () => {
    const lora = engine(prime(`[vllm]\nmodel = "Qwen/Qwen3-8B"\nenable_lora = true\n`));
    expect(flag(lora.argv, "--max-cpu-loras")).toBe("100");
    const set = engine(prime(`[vllm]\nmodel = "Qwen/Qwen3-8B"\nenable_lora = true\nmax_cpu_loras = 16\n`));
    expect(flag(set.argv, "--max-cpu-loras")).toBe("16");
    expect(count(set.argv, "--max-cpu-loras")).toBe(1);
    expect(show(engine(fixture("single-node")).argv)).not.toContain("--max-cpu-loras");
  });

  it("P/D engines get the flags on every role", () => {
    const p = fixture("disaggregated-overrides");
    for (const e of p.islands[0].engines) {
      expect(flag(e.argv, "--logprobs-mode")).toBe("processed_logprobs");
      expect(flag(e.argv, "--additional-config")).toBe('{"fp32_lm_head":true,"fp32_router_logits":true}');
    }
  });
});

describe("prime-rl's engine environment (utils/process.py, inference/server.py setup_vllm_env)", () => {
  it("launcher defaults for every shape: GIT_LFS_SKIP_SMUDGE=1, UCX_TLS=all; the seed layout sets UCX_TLS for P/D only", () => {
    const env = envOf(engine(fixture("single-node")).env);
    expect(env.get("GIT_LFS_SKIP_SMUDGE")).toBe("1");
    expect(env.get("UCX_TLS")).toBe("all");
    const s = envOf(engine(seed("single-node")).env);
    expect(s.has("GIT_LFS_SKIP_SMUDGE")).toBe(false);
    expect(s.has("UCX_TLS")).toBe(false);
  });

  it("server defaults: V1 model runner, non-strict tool calling, DeepGEMM off; env_vars can change the first two", () => {
    const env = envOf(engine(fixture("single-node")).env);
    expect(env.get("VLLM_USE_V2_MODEL_RUNNER")).toBe("0");
    expect(env.get("VLLM_ENFORCE_STRICT_TOOL_CALLING")).toBe("0");
    expect(env.get("VLLM_USE_DEEP_GEMM")).toBe("0");
    expect(env.get("VLLM_MOE_USE_DEEP_GEMM")).toBe("0");
    const s = envOf(engine(seed("single-node")).env);
    for (const k of ["VLLM_USE_V2_MODEL_RUNNER", "VLLM_ENFORCE_STRICT_TOOL_CALLING", "VLLM_USE_DEEP_GEMM"])
      expect(s.has(k), k).toBe(false);
    const user = envOf(
      engine(
        prime(
          `[vllm]\nmodel = "Qwen/Qwen3-8B"\n[env_vars]\nVLLM_USE_V2_MODEL_RUNNER = "1"\nVLLM_MOE_USE_DEEP_GEMM = "1"\n`,
        ),
      ).env,
    );
    expect(user.get("VLLM_USE_V2_MODEL_RUNNER")).toBe("1"); // setdefault
    expect(user.get("VLLM_MOE_USE_DEEP_GEMM")).toBe("0"); // forced from use_deep_gemm
  });

  it("use_deep_gemm = true sets both DeepGEMM variables to 1", () => {
    const env = envOf(engine(prime(`use_deep_gemm = true\n[vllm]\nmodel = "Qwen/Qwen3-8B"\n`)).env);
    expect(env.get("VLLM_USE_DEEP_GEMM")).toBe("1");
    expect(env.get("VLLM_MOE_USE_DEEP_GEMM")).toBe("1");
  });

  it("LoRA forces runtime LoRA updating over env_vars", () => {
    const env = envOf(
      engine(
        prime(
          `[vllm]\nmodel = "Qwen/Qwen3-8B"\nenable_lora = true\n[env_vars]\nVLLM_ALLOW_RUNTIME_LORA_UPDATING = "False"\n`,
        ),
      ).env,
    );
    expect(env.get("VLLM_ALLOW_RUNTIME_LORA_UPDATING")).toBe("True");
  });
});

describe("prime-rl's local router (entrypoints/inference.py)", () => {
  it("single node: --intra-node-data-parallel-size is the engine's DP size", () => {
    const p = fixture("single-node"); // tp=2 dp=2
    const r = p.islands[0].router;
    expect(r?.kind).toBe("vllm-router");
    if (r?.kind !== "vllm-router") return;
    expect(flag(r.argv, "--intra-node-data-parallel-size")).toBe("2");
    const one = prime(`[vllm]\nmodel = "Qwen/Qwen3-8B"\n`).islands[0].router;
    expect(one?.kind).toBe("vllm-router");
    if (one?.kind === "vllm-router") expect(flag(one.argv, "--intra-node-data-parallel-size")).toBe("1");
    // Started without workers on a host, it lists the one URL once per DP rank (url@rank) once told it.
    expect(r.lateWorkers?.count).toBe(2);
    expect(flag(r.lateWorkers!.argv, "--intra-node-data-parallel-size")).toBe("2");
  });

  it("not on multi-node (one URL per engine there) nor in the seed layout", () => {
    const multi = fixture("multi-node").islands[0].router;
    expect(multi?.kind).toBe("vllm-router");
    if (multi?.kind === "vllm-router") expect(show(multi.argv)).not.toContain("--intra-node-data-parallel-size");
    const s = seed("single-node").islands[0].router;
    expect(s?.kind).toBe("vllm-router");
    if (s?.kind === "vllm-router") expect(show(s.argv)).not.toContain("--intra-node-data-parallel-size");
  });
});

describe("prime-rl's per-rank engines on SLURM, dense multi-node (inference.sbatch.j2, _launch_rank.sh.j2)", () => {
  const p = fixture("multi-node"); // 2 nodes, tp=2, 8 GPUs: 4 ranks per node

  it("one single-rank engine per DP rank: port backend_port + k, GPUs k*tp.., no DP arguments", () => {
    const engines = p.islands[0].engines;
    expect(engines).toHaveLength(8);
    expect(p.totals).toMatchObject({ nodes: 2, engines: 8, gpus: 16, routers: 1 });
    for (const e of engines) {
      const k = e.port! - 8100;
      expect(k).toBeGreaterThanOrEqual(0);
      expect(k).toBeLessThan(4);
      expect(e.gpus).toEqual([2 * k, 2 * k + 1]);
      expect(envOf(e.env).get("CUDA_VISIBLE_DEVICES")).toBe(`${2 * k},${2 * k + 1}`);
      expect(e.dp).toBeUndefined();
      expect(flag(e.argv, "--api-server-count")).toBe("1");
      expect(show(e.argv)).not.toContain("--data-parallel-size");
      expect(e.id).toMatch(/-r[0-3]$/);
    }
  });

  it("the router and the admin URLs list every rank, node-major", () => {
    const r = p.islands[0].router;
    expect(r?.kind).toBe("vllm-router");
    if (r?.kind !== "vllm-router") return;
    const urls = show(r.argv).filter((a) => a.startsWith("http://"));
    expect(urls).toEqual(
      ["<i0-n0>", "<i0-n1>"].flatMap((n) => [8100, 8101, 8102, 8103].map((port) => `http://${n}:${port}`)),
    );
    expect(p.islands[0].endpoints.engines.map((e) => [e.url.node, e.url.port])).toEqual(
      [0, 1].flatMap((n) => [8100, 8101, 8102, 8103].map((port) => [n, port])),
    );
  });

  it.each(["multi-node", "llm-d"])(
    "%s: the island script starts every rank and passes bash -n and shellcheck",
    (name) => {
      const plan = fixture(name);
      expect(plan.islands[0].engines.length).toBeGreaterThan(plan.islands[0].nodes.length);
      const { script, launchBody } = renderIslandScript(plan, plan.islands[0]);
      for (const e of plan.islands[0].engines) expect(launchBody).toContain(e.id);
      for (const text of [script, launchBody]) {
        expect(spawnSync("bash", ["-n"], { input: text, encoding: "utf8" }).status).toBe(0);
        expectShellcheckClean(text);
      }
    },
  );

  it("single node, Kubernetes and the seed layout keep one engine per node", () => {
    expect(fixture("single-node").islands[0].engines).toHaveLength(1);
    expect(seed("multi-replica").islands[0].engines).toHaveLength(2);
    const text = fs.readFileSync(path.join(ROOT, "test/fixtures/prime-rl/multi-node.toml"), "utf8");
    const k8s = buildPlan(
      loadConfigText(
        text.slice(0, text.indexOf("[slurm]")),
        "k.toml",
        parseOverrides(["--kubernetes.router_image=r.example/vllm-router:1"]).overrides,
        ROOT,
        {
          target: "kubernetes",
        },
      ),
      "k",
    );
    expect(k8s.islands[0].engines).toHaveLength(2);
  });
});
