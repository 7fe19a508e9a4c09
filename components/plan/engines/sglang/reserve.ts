import type { ArchFacts } from "../../../config/catalog";
import { ASSUMED_GPU_TYPE, GIB, GPU_TYPES } from "../../../config/gpu-types";
import type { FleetConfig } from "../../../config/types";
import { extraNumber, type ExtraValue } from "../../../config/flag-values";
import type { EngineLayout } from "../../engine";
import { staticPoolFraction, type ReserveEstimate } from "../../memory-reserve";

/*
 * SGLang's memory (v0.5.23, python/sglang/srt): before loading, the scheduler measures the free
 * GPU memory B (distributed/bootstrap.py measure_pre_model_load_memory, after the CUDA context and
 * NCCL are up); after loading, the KV pool gets what is free less B x (1 - mem_fraction_static)
 * (mem_cache/kv_cache_configurator.py _profile_available_bytes). So weights + KV cache =
 * mem_fraction_static x B, and everything else (activations, CUDA graphs, attention-backend
 * workspaces, the sampler) lives in the (1 - mem_fraction_static) x B left over, which nothing
 * measures: too small a remainder is an out-of-memory error under load, not a smaller KV cache.
 *
 * What `gpu_memory_utilization` means for SGLang: what it means for vLLM, the share of each GPU's
 * memory the engine may hold in all (weights, KV cache, activations, CUDA graphs, non-torch). The
 * planner turns it into the static pool that leaves room for the reserve estimated below:
 *   mem_fraction_static = (utilization x GPU - reserve) / (GPU - non-torch)
 * so KV cache = utilization x GPU - weights - reserve, the same accounting as vLLM's, and one stack
 * key keeps one meaning across engines. `sglang_extra.mem_fraction_static` is the planner's.
 */

const MIB = 1024 ** 2;

/** `sglang_extra`, once the config has one (beside `vllm_extra`); without it SGLang's defaults apply. */
function sglangExtra(cfg: FleetConfig): Record<string, ExtraValue> {
  const extra = (cfg as { sglang_extra?: Record<string, ExtraValue> }).sglang_extra;
  return extra ?? {};
}

const flagOn = (extra: Record<string, ExtraValue>, key: string) => extra[key] === true;

/** SGLang's GPU classes by memory (arg_groups/memory_hook.py handle_gpu_memory_settings), in MiB. */
function gpuClass(gpuBytes: number, tp: number): { chunkedPrefill: number; decodeGraphMaxBs: number } {
  const mib = gpuBytes / MIB;
  if (mib < 20 * 1024) return { chunkedPrefill: 2048, decodeGraphMaxBs: 8 };
  if (mib < 35 * 1024) return { chunkedPrefill: 4096, decodeGraphMaxBs: tp < 4 ? 48 : 160 };
  if (mib < 60 * 1024) return { chunkedPrefill: 4096, decodeGraphMaxBs: tp < 4 ? 32 : 160 };
  if (mib < 160 * 1024) return { chunkedPrefill: 8192, decodeGraphMaxBs: tp < 4 ? 256 : 512 };
  return { chunkedPrefill: 16384, decodeGraphMaxBs: 512 };
}

/** The scheduler knobs the reserve follows: SGLang's defaults unless `sglang_extra` sets them. */
function knobs(arch: ArchFacts | undefined, cfg: FleetConfig, tp: number, gpuBytes: number) {
  const extra = sglangExtra(cfg);
  const cls = gpuClass(gpuBytes, tp);
  const chunkedPrefill = extraNumber(extra, "chunked_prefill_size") ?? cls.chunkedPrefill;
  const maxRunning = extraNumber(extra, "max_running_requests");
  let decodeMaxBs = extraNumber(extra, "cuda_graph_max_bs_decode");
  // SGLang caps its default decode graph size at max_running_requests.
  if (decodeMaxBs === undefined) decodeMaxBs = Math.min(cls.decodeGraphMaxBs, maxRunning ?? Infinity);
  // `--disable-cuda-graph` (deprecated, still accepted), the per-phase switches and backends (cuda_graph_hook.py).
  const noGraphs = cfg.model.enforce_eager || flagOn(extra, "disable_cuda_graph");
  const off = (phase: "decode" | "prefill") =>
    noGraphs || flagOn(extra, `disable_${phase}_cuda_graph`) || extra[`cuda_graph_backend_${phase}`] === "disabled";
  const decodeGraphs = !off("decode");
  const prefillGraphs = !off("prefill");
  const mla = arch?.attention === "mla";
  // Prefill graphs capture up to chunked_prefill_size tokens (8192 at most with MLA).
  const prefillMaxBs =
    extraNumber(extra, "cuda_graph_max_bs_prefill") ?? (mla ? Math.min(8192, chunkedPrefill) : chunkedPrefill);
  return { chunkedPrefill, maxRunning, decodeMaxBs, decodeGraphs, prefillGraphs, prefillMaxBs, mla };
}

/** How many token counts SGLang captures prefill graphs for (cuda_graph_hook.py generate_prefill_cuda_graph_batch_sizes). */
function prefillGraphSizes(maxBs: number): number {
  const steps: [number, number, number][] = [
    [4, 32, 4],
    [48, 256, 16],
    [288, 512, 32],
    [576, 1024, 64],
    [1280, 4096, 256],
    [4608, Infinity, 512],
  ];
  let n = 0;
  for (const [from, to, step] of steps) for (let s = from; s <= Math.min(to, maxBs); s += step) n++;
  return n;
}

/**
 * CUDA graphs as SGLang budgets them for its own default fraction (memory_hook.py
 * reserve_for_graph_mb): 2 MiB per decode batch size up to the largest captured; prefill graphs'
 * private memory is reused from torch's, so 8 MiB of non-torch memory per captured token count, but
 * 1.5 GiB with MLA.
 */
function graphBytes(k: ReturnType<typeof knobs>): number {
  let mib = k.decodeGraphs ? k.decodeMaxBs * 2 : 0;
  if (k.prefillGraphs) mib += k.mla ? 1.5 * 1024 : prefillGraphSizes(k.prefillMaxBs) * 8;
  return mib * MIB;
}

/**
 * The reserve outside SGLang's static pool, per GPU:
 * - non-torch: taken before SGLang measures its free memory, so outside the pool: 0.5 GiB on one
 *   GPU (79.19 GiB H100 less "Load weight begin. avail mem" of 78.59 to 78.81 GB in SGLang's logs
 *   for Llama-3.1-8B), 2.5 GiB with TP (NCCL and custom all-reduce: 139.81 GiB H200 less 137.29 GB
 *   at TP 8, https://github.com/sgl-project/sglang/pull/11716).
 * - activations: 512 MiB of attention-backend workspace and metadata (the constant of SGLang's own
 *   reserve, memory_hook.py), plus the larger of a prefill chunk's working set (chunked_prefill_size
 *   tokens through one layer: ~3 hidden-state copies and the MLP's gate/up and activation output,
 *   split by TP; fused MoE's caches for MoE models) and the decode sampler's float32 logits and
 *   probabilities over max_running_requests (SGLang's default is at least 2048, kv_cache_configurator.py
 *   resolve_max_num_reqs). Logits are not split by TP (they are gathered).
 * - CUDA graphs unless disabled (`model.enforce_eager`, `sglang_extra.disable_cuda_graph`), as
 *   SGLang budgets them (graphBytes).
 */
export const sglangReserve: ReserveEstimate = (arch, cfg, tp, gpuBytes) => {
  const k = knobs(arch, cfg, tp, gpuBytes);
  const nonTorchBytes = (tp > 1 ? 2.5 : 0.5) * GIB;
  const h = arch.hidden_size;
  const experts = arch.expert_params ?? 0;
  // The dense MLP's width from the parameter count: what is not embeddings (input and output) or
  // attention is 3 x hidden x intermediate per layer.
  const qDim = arch.attention_heads && arch.head_dim ? arch.attention_heads * arch.head_dim : h;
  const kvDim =
    arch.attention === "mla" ? arch.kv_lora_rank! + arch.qk_rope_head_dim! : 2 * arch.kv_heads! * arch.head_dim!;
  const perLayer = (arch.params - experts - 2 * arch.vocab_size * h) / arch.layers;
  const denseWidth = Math.max(0, (perLayer - h * (2 * qDim + kvDim)) / (3 * h));
  let prefill = k.chunkedPrefill * (3 * h + (3 * denseWidth) / tp) * 2;
  if (arch.experts !== undefined && arch.expert_params !== undefined && arch.experts_per_token !== undefined) {
    const moeWidth = arch.expert_params / (arch.layers * arch.experts * 3 * h);
    prefill = k.chunkedPrefill * (3 * h + arch.experts_per_token * ((3 * moeWidth) / tp + h)) * 2;
  }
  const sampler = (k.maxRunning ?? 2048) * arch.vocab_size * 4 * 2;
  const activationBytes = 512 * MIB + Math.max(prefill, sampler);
  return {
    nonTorchBytes,
    activationBytes,
    cudaGraphBytes: graphBytes(k),
    // Not used for refusals: with the fraction fixed by the planner, SGLang's KV cache follows from it.
    lowBytes: nonTorchBytes,
    outsideStaticPool: true,
  };
};

/**
 * SGLang's own reserve for its default fraction, in bytes (memory_hook.py handle_gpu_memory_settings,
 * without post-capture sizing, DP attention or DeepEP): 512 MiB + 1.5 MiB per chunked-prefill token
 * (at least 2048) + TP/8 GiB + CUDA graphs, at least 10 GiB on GPUs over 60 GiB. It needs no
 * architecture facts (only whether attention is MLA, taken as not when unknown).
 */
export function sglangDefaultReserveBytes(cfg: FleetConfig, tp: number, gpuBytes: number, arch?: ArchFacts): number {
  const k = knobs(arch, cfg, tp, gpuBytes);
  let mib = 512 + Math.max(k.chunkedPrefill, 2048) * 1.5 + (tp / 8) * 1024;
  mib = mib * MIB + graphBytes(k);
  return gpuBytes / MIB > 60 * 1024 ? Math.max(mib, 10 * GIB) : mib;
}

/** The GPU memory the argv is built for when the caller does not pass the plan's: the one the config names, else the assumed type. */
function configGpuBytes(cfg: FleetConfig): number {
  const d = cfg.deployment;
  if (d.gpu_memory_gib !== undefined) return Math.round(d.gpu_memory_gib * GIB);
  return (GPU_TYPES.find((g) => g.name === d.gpu_type) ?? ASSUMED_GPU_TYPE).bytes;
}

/**
 * The `--mem-fraction-static` the planner emits for one SGLang engine: `gpu_memory_utilization`
 * less the reserve above, as a fraction of the memory SGLang finds free before loading (see the
 * top of this file). It is what `gpuMemoryPlan` plans with (`GpuMemoryPlan.memFractionStatic`).
 *
 * `gpuBytes`: pass the plan's `memory.gpu.bytes`: it includes the GPU the target names
 * (`slurm.gres`, a node selector), which the config alone does not; without it the config's
 * `deployment.gpu_memory_gib` or `gpu_type` is used, else the assumed H100, as the planner does.
 * Without the catalog's arch facts the reserve is SGLang's own default one (no model facts needed),
 * taken from `gpu_memory_utilization` as a share of the whole GPU: utilization - reserve / GPU, so
 * `gpu_memory_utilization = 1` gives SGLang's own default fraction.
 *
 * A budget that cannot hold the reserve gives a fraction the planner refuses
 * (`memoryProblems`); what is returned is then kept within (0, 1) so the argv still parses.
 */
export function sglangMemFractionStatic(cfg: FleetConfig, layout: Pick<EngineLayout, "tp">, gpuBytes?: number): number {
  const gpu = gpuBytes ?? configGpuBytes(cfg);
  const arch = cfg.catalog?.arch;
  const fraction = arch
    ? staticPoolFraction(cfg.gpu_memory_utilization, gpu, sglangReserve(arch, cfg, layout.tp, gpu))
    : Math.floor((cfg.gpu_memory_utilization - sglangDefaultReserveBytes(cfg, layout.tp, gpu) / gpu) * 1000 + 1e-9) /
      1000;
  return Math.min(0.999, Math.max(0.001, fraction));
}
