import type { ArchFacts } from "../config/catalog";
import type { FleetConfig } from "../config/types";

/** Memory an engine keeps on each GPU outside weights and KV cache, by the parts its profiler reports. */
export interface Reserve {
  /** CUDA context growth, NCCL and custom all-reduce buffers ("non-torch forward increase"). */
  nonTorchBytes: number;
  /** Peak of the profiling forward pass and sampler ("torch peak memory increase"). */
  activationBytes: number;
  /** CUDA graphs, charged to the budget since vLLM 0.21 (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS). */
  cudaGraphBytes: number;
  /** The smallest plausible total, for refusals: non-torch memory at its least. */
  lowBytes: number;
  /**
   * Set by an engine that does not profile but sizes a static pool (weights + KV cache) as a fixed
   * fraction of the memory it finds free before loading, and keeps this reserve outside that pool
   * (SGLang's `--mem-fraction-static`, engines/sglang/reserve.ts). The planner then chooses the
   * fraction (`staticPoolFraction`), and the KV cache is what the pool leaves after the weights.
   * `nonTorchBytes` is then what is taken before the engine measures its free memory (CUDA context,
   * NCCL and all-reduce buffers).
   */
  outsideStaticPool?: true;
}

export const reserveTotal = (r: Reserve): number => r.nonTorchBytes + r.activationBytes + r.cudaGraphBytes;

/** An engine's estimate of its reserve for a model (`Engine.memoryReserve`). */
export type ReserveEstimate = (arch: ArchFacts, cfg: FleetConfig, tp: number, gpuBytes: number) => Reserve;

/** The memory a static-pool engine measures as free before it loads: the GPU less its non-torch memory. */
export const freeBeforeLoad = (gpuBytes: number, r: Reserve): number => gpuBytes - r.nonTorchBytes;

/**
 * The static-pool fraction that keeps the whole engine within `utilization` x GPU memory, the
 * meaning `gpu_memory_utilization` has for vLLM: pool = utilization x GPU - reserve, as a fraction
 * of the memory free before loading (what the engine multiplies), rounded down to 3 decimals (the
 * precision SGLang rounds its own default to) so the pool never exceeds the budget. Not positive:
 * the budget cannot hold the reserve.
 */
export function staticPoolFraction(utilization: number, gpuBytes: number, r: Reserve): number {
  const fraction = (utilization * gpuBytes - reserveTotal(r)) / freeBeforeLoad(gpuBytes, r);
  return Math.floor(fraction * 1000 + 1e-9) / 1000;
}

/**
 * KV-cache bytes a static-pool engine gets on one GPU: its pool, `fraction` of the memory free
 * before loading, less the weights (SGLang's KVCacheConfigurator: available after loading - free
 * before loading x (1 - fraction)).
 */
export const staticPoolKvBytes = (fraction: number, gpuBytes: number, r: Reserve, weightBytes: number): number =>
  Math.max(0, fraction * freeBeforeLoad(gpuBytes, r) - weightBytes);
