/**
 * The GPU-memory planner for SGLang (engines/sglang/reserve.ts): its reserve, the
 * `--mem-fraction-static` it derives from `gpu_memory_utilization`, the refusals, and the plan
 * against SGLang's own published startup logs. The SGLang engine is not selectable from a stack
 * file yet, so these plan with `gpuMemoryPlan(..., sglangReserve, ...)` as the planner will.
 */
import { describe, expect, it } from "vitest";
import { loadCatalog, lookupModel } from "../../components/config/catalog";
import { GPU_TYPES } from "../../components/config/gpu-types";
import type { FleetConfig } from "../../components/config/types";
import {
  gpuMemoryPlan,
  kvBytesPerToken,
  memoryProblems,
  reserveTotal,
  weightBytesPerGpu,
} from "../../components/plan/gpu-memory";
import { freeBeforeLoad, staticPoolKvBytes } from "../../components/plan/memory-reserve";
import {
  sglangDefaultReserveBytes,
  sglangMemFractionStatic,
  sglangReserve,
} from "../../components/plan/engines/sglang/reserve";
import { replicaLayouts } from "../../components/plan/plan";
import type { PlanHints } from "../../components/plan/target-hints";
import { load, plan, SLURM } from "../helpers";

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;
const gpuBytes = (name: string) => GPU_TYPES.find((g) => g.name === name)!.bytes;
const arch = (model: string) => lookupModel(loadCatalog(), model)!.arch;
const same = (p: string) => p;

/** A target that names no GPU type: the config's deployment does. */
const HINTS: PlanHints = {
  poolRef: () => {
    throw new Error("not used");
  },
  wholeNodes: () => undefined,
  gpuTypeHint: () => undefined,
};

const stack = (model: string, opts: { tp?: number; gpu?: string; util?: number; len?: number; extra?: string } = {}) =>
  [
    opts.util !== undefined ? `gpu_memory_utilization = ${opts.util}` : "",
    `[model]\nname = "${model}"${opts.len ? `\nmax_model_len = ${opts.len}` : ""}`,
    opts.extra ?? "",
    `[parallel]\ntp = ${opts.tp ?? 1}`,
    `[deployment]\ntype = "single_node"\ngpu_type = "${opts.gpu ?? "H100"}"\ngpus_per_node = ${opts.tp ?? 1}`,
    SLURM,
  ].join("\n");

/** The config with an `sglang_extra` table, as the config will carry one for `engine = "sglang"`. */
const withExtra = (cfg: FleetConfig, extra: Record<string, unknown>): FleetConfig =>
  ({ ...cfg, sglang_extra: extra }) as FleetConfig;

function sglangPlan(cfg: FleetConfig) {
  const memory = gpuMemoryPlan(cfg, replicaLayouts(cfg), HINTS, sglangReserve, same)!;
  return { memory, ...memoryProblems(cfg, memory, same) };
}

describe("SGLang's reserve outside its static pool", () => {
  it("Llama-3.1-8B on one H100: non-torch 0.5 GiB, the sampler over 2048 requests, SGLang's CUDA-graph budget", () => {
    const r = sglangReserve(
      arch("meta-llama/Llama-3.1-8B-Instruct"),
      load(stack("meta-llama/Llama-3.1-8B-Instruct")),
      1,
      gpuBytes("H100"),
    );
    expect(r.outsideStaticPool).toBe(true);
    expect(r.nonTorchBytes).toBe(0.5 * GIB);
    // float32 logits and probabilities over 2048 running requests x 128,256 tokens outweigh an 8192-token chunk.
    expect(r.activationBytes).toBe(512 * MIB + 2048 * 128256 * 4 * 2);
    // decode graphs up to bs 256 (2 MiB each) + 58 prefill token counts up to 8192 (8 MiB each).
    expect(r.cudaGraphBytes).toBe((256 * 2 + 58 * 8) * MIB);
  });

  it("a prefill chunk's working set wins when max_running_requests is small; it follows chunked_prefill_size", () => {
    const a = arch("meta-llama/Llama-3.1-8B-Instruct");
    const cfg = load(stack("meta-llama/Llama-3.1-8B-Instruct"));
    const small = sglangReserve(a, withExtra(cfg, { max_running_requests: 64 }), 1, gpuBytes("H100"));
    // 8192 tokens x (3 x 4096 hidden + 3 x 14336 MLP width) x 2 bytes; the width follows from the parameter count.
    expect(small.activationBytes - 512 * MIB).toBeCloseTo(8192 * (3 * 4096 + 3 * 14336) * 2, -6);
    // Its decode graphs stop at max_running_requests.
    expect(small.cudaGraphBytes).toBe((64 * 2 + 58 * 8) * MIB);
    const half = sglangReserve(
      a,
      withExtra(cfg, { max_running_requests: 64, chunked_prefill_size: 4096 }),
      1,
      gpuBytes("H100"),
    );
    expect(half.activationBytes - 512 * MIB).toBeCloseTo((small.activationBytes - 512 * MIB) / 2, -3);
  });

  it("CUDA graphs cost nothing when disabled (model.enforce_eager or sglang_extra.disable_cuda_graph), and only the other phase's without one", () => {
    const a = arch("Qwen/Qwen3-8B");
    const cfg = load(stack("Qwen/Qwen3-8B"));
    expect(
      sglangReserve(a, load(stack("Qwen/Qwen3-8B", { extra: "enforce_eager = true" })), 1, gpuBytes("H100"))
        .cudaGraphBytes,
    ).toBe(0);
    expect(sglangReserve(a, withExtra(cfg, { disable_cuda_graph: true }), 1, gpuBytes("H100")).cudaGraphBytes).toBe(0);
    expect(
      sglangReserve(a, withExtra(cfg, { disable_prefill_cuda_graph: true }), 1, gpuBytes("H100")).cudaGraphBytes,
    ).toBe(512 * MIB);
    expect(
      sglangReserve(a, withExtra(cfg, { disable_decode_cuda_graph: true }), 1, gpuBytes("H100")).cudaGraphBytes,
    ).toBe(58 * 8 * MIB);
    expect(
      sglangReserve(a, withExtra(cfg, { cuda_graph_backend_prefill: "disabled" }), 1, gpuBytes("H100")).cudaGraphBytes,
    ).toBe(512 * MIB);
  });

  it("by GPU class and TP, as SGLang picks its defaults: TP adds NCCL buffers and (tp >= 4) larger decode graphs; a 40 GB GPU prefills 4096 tokens", () => {
    const a = arch("meta-llama/Llama-3.1-70B-Instruct");
    const cfg = load(stack("meta-llama/Llama-3.1-70B-Instruct", { tp: 4 }));
    const h100 = sglangReserve(a, cfg, 4, gpuBytes("H100"));
    expect(h100.nonTorchBytes).toBe(2.5 * GIB);
    expect(h100.cudaGraphBytes).toBe((512 * 2 + 58 * 8) * MIB);
    // 50 prefill token counts up to 4096, decode graphs up to 160 at tp 4.
    expect(sglangReserve(a, cfg, 4, gpuBytes("A100-40GB")).cudaGraphBytes).toBe((160 * 2 + 50 * 8) * MIB);
  });

  it("MLA: SGLang's 1.5 GiB for prefill graphs", () => {
    const a = arch("deepseek-ai/DeepSeek-V3");
    const cfg = load(stack("Qwen/Qwen3-8B", { tp: 8, gpu: "H200" }));
    expect(sglangReserve(a, cfg, 8, gpuBytes("H200")).cudaGraphBytes).toBe((512 * 2 + 1536) * MIB);
  });
});

describe("--mem-fraction-static from gpu_memory_utilization", () => {
  const model = "meta-llama/Llama-3.1-8B-Instruct";

  it("the whole engine stays within utilization x GPU: static pool + reserve <= budget, short of it by the 3-decimal rounding only", () => {
    const cfg = load(stack(model, { util: 0.9 }));
    const g = gpuBytes("H100");
    const r = sglangReserve(arch(model), cfg, 1, g);
    const fraction = sglangMemFractionStatic(cfg, { tp: 1 });
    expect(fraction).toBe(Math.floor(((0.9 * g - reserveTotal(r)) / (g - 0.5 * GIB)) * 1000) / 1000);
    const used = fraction * freeBeforeLoad(g, r) + reserveTotal(r);
    expect(used).toBeLessThanOrEqual(0.9 * g);
    expect(0.9 * g - used).toBeLessThan(0.001 * g);
    expect(fraction).toBe(0.856);
  });

  it("the planner plans with the same fraction the argv builder gets, and KV = fraction x free-before-load - weights", () => {
    const cfg = load(stack(model, { util: 0.9 }));
    const { memory, issues } = sglangPlan(cfg);
    expect(issues).toEqual([]);
    expect(memory.memFractionStatic).toBe(sglangMemFractionStatic(cfg, { tp: 1 }));
    const [r] = memory.roles;
    expect(r.kvCacheBytes).toBeCloseTo(memory.memFractionStatic! * (gpuBytes("H100") - 0.5 * GIB) - r.weightBytes, 0);
    // The same accounting as vLLM's: utilization x GPU - weights - reserve, but for the rounding.
    const vllmStyle = memory.budgetBytes - r.weightBytes - reserveTotal(r.reserve);
    expect(vllmStyle - r.kvCacheBytes).toBeGreaterThanOrEqual(0);
    expect(vllmStyle - r.kvCacheBytes).toBeLessThan(0.001 * gpuBytes("H100"));
  });

  it("the GPU the plan found (e.g. from slurm.gres) is passed in; without it, the config's gpu_type", () => {
    const cfg = load(stack(model, { util: 0.9 }));
    const h200 = sglangMemFractionStatic(cfg, { tp: 1 }, gpuBytes("H200"));
    expect(h200).toBeGreaterThan(sglangMemFractionStatic(cfg, { tp: 1 }));
    const cfgH200 = load(stack(model, { util: 0.9, gpu: "H200" }));
    expect(sglangMemFractionStatic(cfgH200, { tp: 1 })).toBe(h200);
  });

  it("a model without arch facts: utilization - SGLang's own default reserve / GPU, so utilization 1 is SGLang's default", () => {
    const one = load(stack("my-org/private-model", { util: 1 }));
    // SGLang on an H100 at tp 1: max(512 + 1.5 x 8192 + 1024/8 + 976 MiB of graphs, 10 GiB) = 13,904 MiB.
    expect(sglangDefaultReserveBytes(one, 1, gpuBytes("H100"))).toBe(13904 * MIB);
    expect(sglangMemFractionStatic(one, { tp: 1 })).toBe(
      Math.floor((1 - (13904 * MIB) / gpuBytes("H100")) * 1000) / 1000,
    );
    expect(sglangMemFractionStatic(one, { tp: 1 })).toBe(0.828);
    const usual = load(stack("my-org/private-model", { util: 0.9 }));
    expect(sglangMemFractionStatic(usual, { tp: 1 })).toBe(0.728);
    // Small GPUs have no 10 GiB floor: A10, tp 1: 512 + 6144 + 128 + (48 x 2 + 50 x 8) MiB.
    expect(sglangDefaultReserveBytes(one, 1, gpuBytes("A10"))).toBe((512 + 6144 + 128 + 96 + 400) * MIB);
  });

  it("a budget that cannot hold the reserve still gives a fraction SGLang parses (the plan is refused)", () => {
    const cfg = load(stack(model, { util: 0.05 }));
    expect(sglangMemFractionStatic(cfg, { tp: 1 })).toBe(0.001);
  });
});

describe("SGLang plans that cannot load are refused, naming the stack keys", () => {
  it("a budget below the reserve: refused at gpu_memory_utilization (mem_fraction_static is the planner's)", () => {
    const { memory, issues } = sglangPlan(load(stack("meta-llama/Llama-3.1-8B-Instruct", { util: 0.05 })));
    expect(memory.memFractionStatic).toBeLessThanOrEqual(0);
    expect(issues).toHaveLength(1);
    expect(issues[0].path).toBe("gpu_memory_utilization");
    expect(issues[0].message).toMatch(
      /cannot hold an estimated \d+\.\d GiB of activations, CUDA graphs and non-torch memory outside SGLang's static pool/,
    );
    expect(issues[0].message).toContain("sglang_extra.mem_fraction_static is set by the planner");
  });

  it("weights that fit the budget but not the static pool it leaves after the reserve: refused at parallel.tp", () => {
    // Llama-3.1-70B at tp 2: 65.7 GiB of weights per GPU under the 71.3 GiB budget of an H100 at
    // 0.9, but the reserve leaves a static pool smaller than that.
    const { memory, issues } = sglangPlan(load(stack("meta-llama/Llama-3.1-70B-Instruct", { tp: 2, util: 0.9 })));
    const [r] = memory.roles;
    expect(r.weightBytes).toBeLessThan(memory.budgetBytes);
    expect(r.kvCacheBytes).toBe(0);
    expect(issues.map((i) => i.path)).toEqual(["parallel.tp"]);
    expect(issues[0].message).toMatch(
      /^meta-llama\/Llama-3\.1-70B-Instruct's weights need 65\.7 GiB per GPU \(bfloat16, tp=2\), but gpu_memory_utilization 0\.9 x H100 .* leaves a static pool of \d+\.\d GiB \(--mem-fraction-static 0\.\d+, sglang_extra\.mem_fraction_static is set by the planner\); raise parallel\.tp or gpu_memory_utilization/,
    );
    // At 0.95 the pool holds them and an 8192-token sequence.
    const roomier = sglangPlan(load(stack("meta-llama/Llama-3.1-70B-Instruct", { tp: 2, util: 0.95, len: 8192 })));
    expect(roomier.issues).toEqual([]);
    expect(roomier.memory.roles[0].kvTokens).toBeGreaterThan(8192);
  });

  it("a KV cache short of one max_model_len sequence: refused at model.max_model_len with the length that fits", () => {
    const { memory, issues } = sglangPlan(load(stack("meta-llama/Llama-3.1-8B-Instruct", { gpu: "A10", len: 131072 })));
    const [r] = memory.roles;
    expect(r.kvTokens).toBeLessThan(131072);
    expect(issues.map((i) => i.path)).toEqual(["model.max_model_len"]);
    expect(issues[0].message).toContain(`lower model.max_model_len (${r.kvTokens} would fit)`);
    expect(sglangPlan(load(stack("meta-llama/Llama-3.1-8B-Instruct", { gpu: "A10", len: r.kvTokens }))).issues).toEqual(
      [],
    );
  });
});

describe("vLLM's plans are unchanged by the static-pool path", () => {
  // Figures from the planner before SGLang's path existed (commit 4278965), to the byte.
  const cases: [string, string, [number, number, number][]][] = [
    ["Qwen3-8B, H100, tp 1", stack("Qwen/Qwen3-8B"), [[16381470720, 56449294254.08, 382816]]],
    [
      "Llama-3.1-70B, A100-80GB, tp 4",
      stack("meta-llama/Llama-3.1-70B-Instruct", { tp: 4, gpu: "A100-80GB" }),
      [[35276853248, 35075352788.99199, 428160]],
    ],
    [
      "Qwen3-30B-A3B P/D, H200, tp 2",
      `[model]\nname = "Qwen/Qwen3-30B-A3B"\n[parallel]\ntp = 2\n[deployment]\ntype = "disaggregated"\ngpu_type = "H200"\nnum_prefill_nodes = 1\nnum_decode_nodes = 2\n${SLURM}`,
      [
        [8788850688, 120111772811.264, 2443680],
        [5164972032, 123735651467.264, 2517408],
      ],
    ],
    [
      "DeepSeek-V3, H200, tp 8, fp8 KV",
      `gpu_memory_utilization = 0.92\n[model]\nname = "deepseek-ai/DeepSeek-V3"\nmax_model_len = 32768\n[parallel]\ntp = 8\ndp = 1\n[deployment]\ntype = "single_node"\ngpu_type = "H200"\n[vllm_extra]\nkv_cache_dtype = "fp8"\n${SLURM}`,
      [[84109972160, 47027041766.04245, 1338416]],
    ],
  ];
  for (const [name, text, roles] of cases)
    it(name, () => {
      const m = plan(text).memory!;
      expect(m.memFractionStatic).toBeUndefined();
      expect(m.roles.map((r) => [r.weightBytes, r.kvCacheBytes, r.kvTokens])).toEqual(roles);
      expect(m.roles[0].reserve.outsideStaticPool).toBeUndefined();
    });
});

/**
 * Against SGLang's own startup logs. Each log gives the free memory before loading ("Load weight
 * begin. avail mem", or after-load avail + "mem usage"), the KV pool ("KV Cache is allocated.
 * #tokens: N, K size: X GB, V size: X GB"; SGLang's GB are GiB), and the fraction it ran with.
 * The planner is given that fraction and plans the KV cache as fraction x (GPU - its non-torch
 * estimate) - its weights; tokens are compared within 2%.
 *
 * [docs] Llama-3.1-8B-Instruct, tp 1, mem_fraction_static=0.88 (its server_args line), 78.81 GB
 *   free before loading (an 80 GB GPU: taken as the H100, 79.19 GiB), 63.72 after; K and V 27.13 GB
 *   each, 444,500 tokens. SGLang's docs, https://docs.sglang.ai/start/send_request.html as built on
 *   2025-01-23 (the page is rebuilt with each release; this run is kept in public copies of it).
 * [pr4760] Llama-3.1-8B-Instruct, tp 1, FlashAttention 3 (so Hopper: H100), "avail mem=63.48 GB,
 *   mem usage=15.11 GB" after loading (78.59 before), K and V 27.02 GB each, 442,750 tokens, at the
 *   default fraction of that release for tp 1, 0.88: https://github.com/sgl-project/sglang/pull/4760
 * [vllm21348] Qwen3-235B-A22B-FP8, 4 x H100, tp 4, --mem-fraction-static 0.93: K and V 8.23 GB
 *   each, 367,404 tokens (the log shows no free-memory lines):
 *   https://github.com/vllm-project/vllm/issues/21348
 * [pr11716] non-torch memory with TP: an H200 (139.81 GiB) at tp 8 has 137.29 GB free before
 *   loading: https://github.com/sgl-project/sglang/pull/11716
 */
describe("against SGLang's published startup logs", () => {
  const rel = (ours: number, theirs: number) => (ours - theirs) / theirs;

  interface Logged {
    name: string;
    model: string;
    tp: number;
    fraction: number;
    quantized?: boolean;
    freeBeforeGiB?: number;
    weightsGiB?: number;
    kvGiB: number;
    tokens: number;
  }
  const LOGS: Logged[] = [
    {
      name: "[docs] Llama-3.1-8B-Instruct, H100, tp 1, 0.88",
      model: "meta-llama/Llama-3.1-8B-Instruct",
      tp: 1,
      fraction: 0.88,
      freeBeforeGiB: 78.81,
      weightsGiB: 78.81 - 63.72,
      kvGiB: 2 * 27.13,
      tokens: 444_500,
    },
    {
      name: "[pr4760] Llama-3.1-8B-Instruct, H100, tp 1, 0.88",
      model: "meta-llama/Llama-3.1-8B-Instruct",
      tp: 1,
      fraction: 0.88,
      freeBeforeGiB: 63.48 + 15.11,
      weightsGiB: 15.11,
      kvGiB: 2 * 27.02,
      tokens: 442_750,
    },
    {
      name: "[vllm21348] Qwen3-235B-A22B-FP8, 4 x H100, tp 4, 0.93",
      model: "Qwen/Qwen3-235B-A22B",
      tp: 4,
      fraction: 0.93,
      quantized: true,
      kvGiB: 2 * 8.23,
      tokens: 367_404,
    },
  ];

  for (const l of LOGS) {
    const a = arch(l.model);
    const cfg = load(stack(l.model, { tp: l.tp }));
    const g = gpuBytes("H100");
    const r = sglangReserve(a, cfg, l.tp, g);
    const weights = weightBytesPerGpu(a, l.quantized ? 1 : 2, l.quantized === true, l.tp, l.tp);
    const perToken = kvBytesPerToken(a, 2, l.tp);
    const kv = staticPoolKvBytes(l.fraction, g, r, weights);

    it(`${l.name}: bytes per token turn the logged KV size into its tokens (within 0.1%)`, () => {
      expect(Math.abs(rel((l.kvGiB * GIB) / perToken, l.tokens))).toBeLessThan(0.001);
    });

    if (l.freeBeforeGiB !== undefined)
      it(`${l.name}: non-torch memory within 0.25 GiB of GPU - the logged free memory before loading, weights within 1.5%`, () => {
        expect(Math.abs(r.nonTorchBytes / GIB - (79.19 - l.freeBeforeGiB!))).toBeLessThan(0.25);
        expect(Math.abs(rel(weights / GIB, l.weightsGiB!))).toBeLessThan(0.015);
      });

    it(`${l.name}: planned KV cache and tokens within 2% of the logged ones`, () => {
      expect(Math.abs(rel(kv / GIB, l.kvGiB))).toBeLessThan(0.02);
      expect(Math.abs(rel(Math.floor(kv / perToken), l.tokens))).toBeLessThan(0.02);
    });
  }

  it("[pr11716] non-torch memory at tp 8 within 0.1 GiB of an H200's 139.81 GiB less the logged 137.29 GB", () => {
    const r = sglangReserve(
      arch("deepseek-ai/DeepSeek-V3"),
      load(stack("Qwen/Qwen3-8B", { tp: 8, gpu: "H200" })),
      8,
      gpuBytes("H200"),
    );
    expect(Math.abs(r.nonTorchBytes / GIB - (139.81 - 137.29))).toBeLessThan(0.1);
  });
});
