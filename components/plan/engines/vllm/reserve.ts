import { GIB } from "../../../config/gpu-types";
import { extraNumber } from "../../../config/flag-values";
import type { ReserveEstimate } from "../../memory-reserve";

/**
 * The reserve, fitted to vLLM 0.19's profiling logs on H100 (README, GPU-memory planner): the
 * sampler's float32 logits over `max_num_seqs` dominate the activation peak (~3.5 copies, not split
 * by TP: logits are gathered), plus ~3 hidden-state copies of the `max_num_batched_tokens` batch and,
 * for MoE, fused MoE's intermediate caches (the expert width follows from `expert_params`);
 * non-torch memory is 0.25 GiB on one GPU and ~2.1 GiB once TP needs communication buffers; CUDA
 * graphs grow with depth.
 */
export const vllmReserve: ReserveEstimate = (arch, cfg, tp, gpuBytes) => {
  const bigGpu = gpuBytes >= 70 * GIB;
  // vLLM's serve defaults: 8192 batched tokens and 1024 sequences on >= 70 GiB GPUs, else 2048 and 256.
  const tokens = extraNumber(cfg.vllm_extra, "max_num_batched_tokens") ?? (bigGpu ? 8192 : 2048);
  const seqs = extraNumber(cfg.vllm_extra, "max_num_seqs") ?? (bigGpu ? 1024 : 256);
  const nonTorchBytes = (tp > 1 ? 2.1 : 0.25) * GIB;
  let activationBytes = 3.5 * seqs * arch.vocab_size * 4 + 3 * tokens * arch.hidden_size * 2;
  if (arch.experts !== undefined && arch.expert_params !== undefined && arch.experts_per_token !== undefined) {
    // Fused MoE's three intermediate caches per routed token: gate+up (2 x I / tp), down input (I / tp), output (H).
    const moeIntermediate = arch.expert_params / (arch.layers * arch.experts * 3 * arch.hidden_size);
    activationBytes += tokens * arch.experts_per_token * ((3 * moeIntermediate) / tp + arch.hidden_size) * 2;
  }
  const cudaGraphBytes = cfg.model.enforce_eager ? 0 : (0.4 + 0.016 * arch.layers) * GIB;
  return { nonTorchBytes, activationBytes, cudaGraphBytes, lowBytes: (tp > 1 ? 1.5 : 0.2) * GIB };
};
