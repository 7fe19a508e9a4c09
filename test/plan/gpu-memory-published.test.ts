/**
 * The GPU-memory planner against vLLM's own published startup logs. Every figure below is copied
 * from a vLLM log line ("Model loading took", "Available KV cache memory", "GPU KV cache size", and
 * the profiler's "Actual usage is ... for weight, ... peak activation, ... non-torch memory, ...
 * CUDAGraph memory"); sources:
 *
 * [v019] vLLM 0.19.0 on H100 80GB (torch total 79.19 GiB), gpu_memory_utilization 0.95, max_model_len
 *   8192, defaults otherwise (8192 batched tokens, 1024 sequences): raw logs published with
 *   llm-d-planner's accuracy study, https://github.com/jgchn/llm-d-planner/blob/d3121e059da88662db39a926a3ead964be97359b/accuracy/results/v0.19.0/logs/
 *   (files qwen-qwen3-8b--h100-80gb--tp1pp1dp1--8192.log, meta-llama-llama-3-1-8b---h100-80gb--tp{1,2,4}pp1dp1--8192.log,
 *   qwen-qwen3-30b-a3b--h100-80gb--tp1pp1dp1--8192.log, meta-llama---h100-80gb--tp1pp1dp1--8192-dtbf16-kvfp8.log);
 *   context: https://github.com/llm-d-incubation/llm-d-planner/pull/205.
 * [kimi] Kimi-K2-Thinking (DeepSeek-V3's architecture) on 8 x H200, TP 8: vLLM recipes,
 *   https://github.com/vllm-project/recipes/blob/main/moonshotai/Kimi-K2-Think.md
 *
 * vLLM 0.19 did not yet charge CUDA graphs to the budget (0.21 does), so its "Available KV cache
 * memory" is compared with budget - weights - non-torch - activation of our estimate.
 */
import { describe, expect, it } from "vitest";
import { loadCatalog, lookupModel } from "../../components/config/catalog";
import type { RoleMemory } from "../../components/plan/gpu-memory";
import { kvBytesPerToken, weightBytesPerGpu } from "../../components/plan/gpu-memory";
import { vllmReserve as reserveFor } from "../../components/plan/engines/vllm/reserve";
import { load, plan, SLURM } from "../helpers";

const GIB = 1024 ** 3;

interface Published {
  model: string;
  tp: number;
  kvDtype?: string;
  weightsGiB: number;
  activationGiB: number;
  nonTorchGiB: number;
  cudaGraphGiB: number;
  kvGiB: number;
  kvTokens: number;
}

const V019: Published[] = [
  {
    model: "Qwen/Qwen3-8B",
    tp: 1,
    weightsGiB: 15.27,
    activationGiB: 2.21,
    nonTorchGiB: 0.25,
    cudaGraphGiB: 0.96,
    kvGiB: 57.5,
    kvTokens: 418_688,
  },
  {
    model: "meta-llama/Llama-3.1-8B-Instruct",
    tp: 1,
    weightsGiB: 14.99,
    activationGiB: 1.89,
    nonTorchGiB: 0.25,
    cudaGraphGiB: 0.91,
    kvGiB: 58.11,
    kvTokens: 476_016,
  },
  {
    model: "meta-llama/Llama-3.1-8B-Instruct",
    tp: 1,
    kvDtype: "fp8",
    weightsGiB: 14.99,
    activationGiB: 1.89,
    nonTorchGiB: 0.25,
    cudaGraphGiB: 0.91,
    kvGiB: 58.11,
    kvTokens: 952_032,
  },
  {
    model: "meta-llama/Llama-3.1-8B-Instruct",
    tp: 2,
    weightsGiB: 7.51,
    activationGiB: 1.89,
    nonTorchGiB: 2.07,
    cudaGraphGiB: 0.76,
    kvGiB: 63.76,
    kvTokens: 1_044_688,
  },
  {
    model: "meta-llama/Llama-3.1-8B-Instruct",
    tp: 4,
    weightsGiB: 3.77,
    activationGiB: 1.89,
    nonTorchGiB: 2.13,
    cudaGraphGiB: 0.67,
    kvGiB: 67.44,
    kvTokens: 2_209_792,
  },
  {
    model: "Qwen/Qwen3-30B-A3B",
    tp: 1,
    weightsGiB: 56.88,
    activationGiB: 2.68,
    nonTorchGiB: 0.27,
    cudaGraphGiB: 1.41,
    kvGiB: 15.41,
    kvTokens: 168_288,
  },
];

function estimate(p: Published): { role: RoleMemory; budgetBytes: number } {
  const text = [
    "gpu_memory_utilization = 0.95",
    `[model]\nname = "${p.model}"\nmax_model_len = 8192`,
    `[parallel]\ntp = ${p.tp}`,
    `[deployment]\ntype = "single_node"\ngpu_type = "H100"\ngpus_per_node = ${p.tp}`,
    p.kvDtype ? `[vllm_extra]\nkv_cache_dtype = "${p.kvDtype}"` : "",
    SLURM,
  ].join("\n");
  const m = plan(text).memory!;
  return { role: m.roles[0], budgetBytes: m.budgetBytes };
}

const rel = (ours: number, theirs: number) => Math.abs(ours - theirs) / theirs;

describe("against vLLM 0.19's logs on H100 [v019]", () => {
  for (const p of V019) {
    const name = `${p.model} tp=${p.tp}${p.kvDtype ? ` kv ${p.kvDtype}` : ""}`;

    it(`${name}: the budget is vLLM's "requested memory" (0.95 x 79.19 GiB = 75.23 GiB)`, () => {
      expect(estimate(p).budgetBytes / GIB).toBeCloseTo(75.23, 2);
    });

    it(`${name}: weights per GPU within 1% of "Model loading took ${p.weightsGiB} GiB"`, () => {
      expect(rel(estimate(p).role.weightBytes / GIB, p.weightsGiB)).toBeLessThan(0.01);
    });

    it(`${name}: KV bytes per token turn vLLM's ${p.kvGiB} GiB into its ${p.kvTokens} tokens (within 0.1%)`, () => {
      const { role } = estimate(p);
      expect(rel((p.kvGiB * GIB) / role.kvBytesPerToken, p.kvTokens)).toBeLessThan(0.001);
    });

    it(`${name}: KV cache memory and tokens within 4% of vLLM's (same accounting: no CUDA graphs in 0.19)`, () => {
      const { role, budgetBytes } = estimate(p);
      const kv = budgetBytes - role.weightBytes - role.reserve.nonTorchBytes - role.reserve.activationBytes;
      expect(rel(kv / GIB, p.kvGiB)).toBeLessThan(0.04);
      expect(rel(Math.floor(kv / role.kvBytesPerToken), p.kvTokens)).toBeLessThan(0.04);
    });

    it(`${name}: the reserve the planner charges (with CUDA graphs, as vLLM >= 0.21 does) within 0.6 GiB of the measured one`, () => {
      const { role } = estimate(p);
      const ours = (role.reserve.nonTorchBytes + role.reserve.activationBytes + role.reserve.cudaGraphBytes) / GIB;
      expect(Math.abs(ours - (p.activationGiB + p.nonTorchGiB + p.cudaGraphGiB))).toBeLessThan(0.6);
      // Refusals use the smallest reserve: it must stay below every measured one.
      expect(role.reserve.lowBytes / GIB).toBeLessThan(p.nonTorchGiB + p.activationGiB);
    });
  }
});

describe("MLA against vLLM's published DeepSeek-V3-architecture log [kimi]", () => {
  it("61 layers x (512 + 64) x 2 bytes, on every one of 8 TP ranks: 46.80 GiB hold 715,072 tokens", () => {
    const arch = lookupModel(loadCatalog(), "deepseek-ai/DeepSeek-V3")!.arch;
    expect(rel((46.8 * GIB) / kvBytesPerToken(arch, 2, 8), 715_072)).toBeLessThan(0.001);
  });
});

describe("a model outside the catalog, not used to fit the reserve [v019]", () => {
  // qwen-qwen2-5-72b-instruct--h100-80gb--tp2pp1dp1--8192.log: 67.8 GiB weights, 2.29 + 2.09 GiB
  // activation and non-torch, 3.04 GiB KV cache, 19,920 tokens. Shapes from its config.json.
  const arch = {
    params: 72_706_203_648,
    layers: 80,
    hidden_size: 8192,
    attention: "gqa" as const,
    kv_heads: 8,
    head_dim: 128,
    vocab_size: 152_064,
    max_position_embeddings: 32768,
    torch_dtype: "bfloat16" as const,
  };

  it("Qwen2.5-72B-Instruct at tp=2 on H100: weights, KV cache and tokens within 2%", () => {
    const cfg = load(`gpu_memory_utilization = 0.95\n[model]\nname = "Qwen/Qwen3-8B"\n${SLURM}`);
    const weights = weightBytesPerGpu(arch, 2, false, 2, 2);
    const r = reserveFor(arch, cfg, 2, 79.19 * GIB);
    const kv = 0.95 * 79.19 * GIB - weights - r.nonTorchBytes - r.activationBytes;
    expect(rel(weights / GIB, 67.8)).toBeLessThan(0.02);
    expect(rel(kv / GIB, 3.04)).toBeLessThan(0.02);
    expect(rel(kv / kvBytesPerToken(arch, 2, 2), 19_920)).toBeLessThan(0.02);
  });
});
