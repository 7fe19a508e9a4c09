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
}

export const reserveTotal = (r: Reserve): number => r.nonTorchBytes + r.activationBytes + r.cudaGraphBytes;

/** An engine's estimate of its reserve for a model (`Engine.memoryReserve`). */
export type ReserveEstimate = (arch: ArchFacts, cfg: FleetConfig, tp: number, gpuBytes: number) => Reserve;
