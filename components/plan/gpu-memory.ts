/**
 * The GPU-memory planner: per GPU, what the weights take, what vLLM's KV cache gets of the rest of
 * `gpu_memory_utilization` x GPU memory, and how many tokens and max-length sequences that holds.
 * A plan whose weights cannot fit, or whose KV cache cannot hold one `max_model_len` sequence, is
 * rejected before anything is submitted: vLLM would fail the same way, but only after the job got
 * its GPUs and loaded the weights. Pure; the facts come from the catalog entry's `arch`.
 *
 * vLLM's own account (worker memory profiling): KV cache = total x utilization - weights - peak
 * activation - non-torch memory (CUDA context, NCCL) - CUDA graphs. Weights and KV bytes per token
 * follow from the architecture exactly; the rest is estimated (`reserve`), and a KV shortfall is
 * only rejected when even the smallest reserve leaves too little (a larger one only warns).
 *
 * An engine whose reserve lies outside a static pool it does not profile (SGLang,
 * `Reserve.outsideStaticPool`) gets the pool's fraction from the planner instead
 * (`memFractionStatic`, from `gpu_memory_utilization` less the reserve), and its KV cache is that
 * fraction of the memory free before loading less the weights: fixed by the emitted fraction, so
 * shortfalls are refused with the full reserve.
 */
import { ASSUMED_GPU_TYPE, GIB, GPU_TYPES, gpuTypeFromHint } from "../config/gpu-types";
import type { ConfigIssue } from "../config/issues";
import type { ArchFacts } from "../config/catalog";
import type { FleetConfig } from "../config/types";
import { extraNumber } from "../config/flag-values";
import type { PlanHints } from "./target-hints";
import {
  freeBeforeLoad,
  reserveTotal,
  staticPoolFraction,
  staticPoolKvBytes,
  type Reserve,
  type ReserveEstimate,
} from "./memory-reserve";

export { reserveTotal, type Reserve } from "./memory-reserve";
import type { Role } from "./roles";

export interface GpuMemorySource {
  type?: string;
  bytes: number;
  /** Where the figure came from, as the plan prints it. */
  from: string;
  assumed: boolean;
  /** The GPU type the target names (slurm.gres, a node selector) when it is none the table knows. */
  unknown?: string;
}

/** One kind of replica: its role and how its GPUs share the model. */
export interface ReplicaShape {
  role: Role;
  /** Data-parallel ranks in the replica (each an engine core with its own KV cache). */
  dpSize: number;
}

/** Per GPU, for one kind of replica. Byte counts are per GPU; tokens are per engine core (TP group). */
export interface RoleMemory {
  role: Role;
  tp: number;
  dp: number;
  /** Expert-parallel size when routed experts are spread over the replica's GPUs. */
  ep?: number;
  weightBytes: number;
  /** Estimated by the engine (`Engine.memoryReserve`). */
  reserve: Reserve;
  kvCacheBytes: number;
  kvBytesPerToken: number;
  kvTokens: number;
  /** KV tokens / max_model_len, as vLLM logs "Maximum concurrency". */
  concurrency: number;
}

export interface GpuMemoryPlan {
  gpu: GpuMemorySource;
  utilization: number;
  /** utilization x GPU memory: what vLLM may use on each GPU. */
  budgetBytes: number;
  maxModelLen: number;
  weightDtype: string;
  bytesPerParam: number;
  kvDtype: string;
  /** Set when vllm_extra.kv_cache_memory_bytes fixes the KV cache (vLLM then ignores utilization). */
  kvCacheMemoryBytes?: number;
  /**
   * A static-pool engine's pool fraction (SGLang's `--mem-fraction-static`), derived from
   * utilization: what the engine's command line must carry for the plan to hold.
   */
  memFractionStatic?: number;
  roles: RoleMemory[];
}

/** `deployment.gpu_memory_gib`, else `deployment.gpu_type`, else the target's GPU type, else assumed. */
export function gpuMemorySource(
  cfg: FleetConfig,
  hints: PlanHints,
  userPath: (canonical: string) => string,
): GpuMemorySource {
  const d = cfg.deployment;
  if (d.gpu_memory_gib !== undefined)
    return {
      type: d.gpu_type,
      bytes: Math.round(d.gpu_memory_gib * GIB),
      from: userPath("deployment.gpu_memory_gib"),
      assumed: false,
    };
  if (d.gpu_type !== undefined) {
    const g = GPU_TYPES.find((x) => x.name === d.gpu_type)!;
    return { type: g.name, bytes: g.bytes, from: userPath("deployment.gpu_type"), assumed: false };
  }
  const hint = hints.gpuTypeHint(cfg.target);
  const g = hint && gpuTypeFromHint(hint.hint);
  if (hint && g) return { type: g.name, bytes: g.bytes, from: hint.from, assumed: false };
  const set = `set ${userPath("deployment.gpu_type")} or ${userPath("deployment.gpu_memory_gib")}`;
  return {
    type: ASSUMED_GPU_TYPE.name,
    bytes: ASSUMED_GPU_TYPE.bytes,
    // A GPU the target names but the table lacks is said so, not silently taken for the assumed one.
    from: hint
      ? `assumed: ${hint.from} names GPU type "${hint.hint}", which is not in the GPU table; ${set}`
      : `assumed; ${set}`,
    assumed: true,
    ...(hint && { unknown: hint.hint }),
  };
}

/** Bytes per weight of a quantized checkpoint (scales included roughly); undefined = not modelled. */
const QUANT_BYTES: Record<string, number> = {
  fp8: 1,
  fbgemm_fp8: 1,
  ptpc_fp8: 1,
  modelopt: 1,
  experts_int8: 1,
  awq: 0.5,
  awq_marlin: 0.5,
  gptq: 0.5,
  gptq_marlin: 0.5,
  bitsandbytes: 0.5,
  mxfp4: 4.25 / 8,
  modelopt_fp4: 4.5 / 8,
};

/** Bytes per KV element for `--kv-cache-dtype` (per-token or per-block scales ignored). */
const KV_DTYPE_BYTES: Record<string, number> = {
  bfloat16: 2,
  float16: 2,
  fp8: 1,
  fp8_e4m3: 1,
  fp8_e5m2: 1,
  fp8_inc: 1,
  fp8_ds_mla: 1,
  fp8_per_token_head: 1,
  int8_per_token_head: 1,
  int4_per_token_head: 0.5,
  nvfp4: 0.5,
  nvfp4_4over6: 0.5,
  turboquant_3bit_nc: 3 / 8,
  turboquant_4bit_nc: 0.5,
  turboquant_k3v4_nc: 3.5 / 8,
  turboquant_k8v4: 6 / 8,
};

/** vLLM's compute dtype: `auto` is 16-bit (it serves float32 checkpoints in 16 bits too). */
function computeDtype(cfg: FleetConfig, arch: ArchFacts): { name: string; bytes: number } {
  const d = cfg.model.dtype ?? "auto";
  if (d === "float32" || d === "float") return { name: "float32", bytes: 4 };
  if (d === "auto") return { name: arch.torch_dtype === "float32" ? "bfloat16" : arch.torch_dtype, bytes: 2 };
  return { name: d === "half" ? "float16" : d, bytes: 2 };
}

/** The engine's pass-through table: `sglang_extra` for a static-pool engine (SGLang), else `vllm_extra`. */
const extraTable = (cfg: FleetConfig, staticPool: boolean) =>
  staticPool ? ((cfg as { sglang_extra?: FleetConfig["vllm_extra"] }).sglang_extra ?? {}) : cfg.vllm_extra;

const extraString = (extra: FleetConfig["vllm_extra"], key: string) =>
  typeof extra[key] === "string" ? (extra[key] as string) : undefined;

/** Weight bytes on one GPU: dense parts split by TP, routed experts by TP or, with EP, by TP x DP. */
export function weightBytesPerGpu(
  arch: ArchFacts,
  bytesPerParam: number,
  quantized: boolean,
  tp: number,
  expertShards: number,
): number {
  const experts = arch.expert_params ?? 0;
  // Quantized checkpoints keep the embedding and output matrices in 16 bits.
  const embeddings = quantized ? Math.min(2 * arch.vocab_size * arch.hidden_size, arch.params - experts) : 0;
  const dense = (arch.params - experts - embeddings) * bytesPerParam + embeddings * 2;
  return dense / tp + (experts * bytesPerParam) / expertShards;
}

/** KV-cache bytes one GPU stores per token: K and V per layer (GQA, heads split by TP) or MLA's latent. */
export function kvBytesPerToken(arch: ArchFacts, elementBytes: number, tp: number): number {
  if (arch.attention === "mla") return arch.layers * (arch.kv_lora_rank! + arch.qk_rope_head_dim!) * elementBytes;
  return arch.layers * Math.ceil(arch.kv_heads! / tp) * arch.head_dim! * 2 * elementBytes;
}

/** The tokens a KV cache of `bytes` holds: vLLM hands out whole 16-token blocks. */
const tokensIn = (bytes: number, perToken: number): number => Math.floor(bytes / perToken / 16) * 16;

/** The memory plan for each kind of replica, or undefined when the catalog has no arch facts. */
export function gpuMemoryPlan(
  cfg: FleetConfig,
  shapes: ReplicaShape[],
  hints: PlanHints,
  engineReserve: ReserveEstimate,
  userPath: (canonical: string) => string,
): GpuMemoryPlan | undefined {
  const arch = cfg.catalog?.arch;
  if (!arch) return undefined;
  const gpu = gpuMemorySource(cfg, hints, userPath);
  const budgetBytes = gpu.bytes * cfg.gpu_memory_utilization;
  const tp = cfg.parallel.tp;
  // Only the expert sharding differs between kinds of replica; the rest follows from tp.
  const reserve = engineReserve(arch, cfg, tp, gpu.bytes);
  const staticPool = reserve.outsideStaticPool === true;
  const extra = extraTable(cfg, staticPool);
  const compute = computeDtype(cfg, arch);
  const quant = extraString(extra, "quantization") ?? arch.quantization;
  const quantBytes = quant !== undefined ? QUANT_BYTES[quant] : undefined;
  const bytesPerParam = quantBytes ?? compute.bytes;
  const kvName = extraString(extra, "kv_cache_dtype") ?? "auto";
  const kvElement = kvName === "auto" ? compute.bytes : (KV_DTYPE_BYTES[kvName] ?? compute.bytes);
  const maxModelLen = cfg.model.max_model_len ?? arch.max_position_embeddings;
  // vLLM's fixed KV size; a static-pool engine sizes its KV cache from the fraction only.
  const fixedKv = staticPool ? undefined : extraNumber(extra, "kv_cache_memory_bytes");
  const offload = (extraNumber(extra, "cpu_offload_gb") ?? 0) * GIB;
  const moe = arch.experts !== undefined && cfg.enable_expert_parallel;
  const fraction = staticPool ? staticPoolFraction(cfg.gpu_memory_utilization, gpu.bytes, reserve) : undefined;
  const perToken = kvBytesPerToken(arch, kvElement, tp);

  const seen = new Set<string>();
  const roles: RoleMemory[] = [];
  for (const s of shapes) {
    if (seen.has(`${s.role}/${s.dpSize}`)) continue;
    seen.add(`${s.role}/${s.dpSize}`);
    const ep = moe ? tp * s.dpSize : undefined;
    const weightBytes = Math.max(
      0,
      weightBytesPerGpu(arch, bytesPerParam, quantBytes !== undefined, tp, ep ?? tp) - offload,
    );
    const kvCacheBytes =
      fixedKv ??
      (fraction !== undefined
        ? staticPoolKvBytes(fraction, gpu.bytes, reserve, weightBytes)
        : Math.max(0, budgetBytes - weightBytes - reserveTotal(reserve)));
    const kvTokens = tokensIn(kvCacheBytes, perToken);
    roles.push({
      role: s.role,
      tp,
      dp: s.dpSize,
      ...(ep && { ep }),
      weightBytes,
      reserve,
      kvCacheBytes,
      kvBytesPerToken: perToken,
      kvTokens,
      concurrency: kvTokens / maxModelLen,
    });
  }
  return {
    gpu,
    utilization: cfg.gpu_memory_utilization,
    budgetBytes,
    maxModelLen,
    weightDtype: quantBytes !== undefined ? quant! : compute.name,
    bytesPerParam,
    kvDtype: kvName === "auto" ? compute.name : kvName,
    ...(fixedKv !== undefined && { kvCacheMemoryBytes: fixedKv }),
    ...(fraction !== undefined && { memFractionStatic: fraction }),
    roles,
  };
}

export const gib = (bytes: number): string => `${(bytes / GIB).toFixed(1)} GiB`;

/**
 * Why this plan cannot load: weights over the budget (at `parallel.tp`), or a KV cache that cannot
 * hold one `max_model_len` sequence even with the smallest reserve. `warnings` get the cases only the
 * central estimate fails.
 */
export function memoryProblems(
  cfg: FleetConfig,
  m: GpuMemoryPlan,
  userPath: (canonical: string) => string,
): { issues: ConfigIssue[]; warnings: string[] } {
  const issues: ConfigIssue[] = [];
  const warnings: string[] = [];
  if (m.gpu.unknown !== undefined)
    warnings.push(
      `GPU type "${m.gpu.unknown}" is unknown (known: ${GPU_TYPES.map((t) => t.name).join(", ")}): GPU memory was checked against an assumed ${m.gpu.type} of ${gib(m.gpu.bytes)}; set ${userPath("deployment.gpu_type")} or ${userPath("deployment.gpu_memory_gib")}`,
    );
  const gpu = `${m.gpu.type ?? "GPU"} (${gib(m.gpu.bytes)}, ${m.gpu.from})`;
  const budget = `${userPath("gpu_memory_utilization")} ${m.utilization} x ${gpu} = ${gib(m.budgetBytes)}`;
  for (const r of m.roles) {
    const who = r.role === "replica" ? "" : `${r.role}: `;
    const sharding = `tp=${r.tp}${r.ep ? `, experts over ep=${r.ep}` : ""}`;
    if (m.memFractionStatic !== undefined) {
      staticPoolProblems(cfg, m, r, userPath, budget, who, sharding, issues);
      continue;
    }
    if (r.weightBytes > m.budgetBytes) {
      issues.push({
        path: userPath("parallel.tp"),
        message: `${who}${cfg.model.name}'s weights need ${gib(r.weightBytes)} per GPU (${m.weightDtype}, ${sharding}), more than ${budget}; raise ${userPath("parallel.tp")}, serve a quantized checkpoint, or use larger GPUs`,
      });
      continue;
    }
    if (m.kvCacheMemoryBytes !== undefined) {
      if (r.kvTokens < m.maxModelLen) {
        issues.push({
          path: userPath("vllm_extra.kv_cache_memory_bytes"),
          message: `${who}${gib(m.kvCacheMemoryBytes)} of KV cache hold ${r.kvTokens} tokens, fewer than one ${m.maxModelLen}-token sequence (${userPath("model.max_model_len")})`,
        });
      }
      continue;
    }
    const need = m.maxModelLen * r.kvBytesPerToken;
    const atBest = m.budgetBytes - r.weightBytes - r.reserve.lowBytes;
    if (atBest < need) {
      issues.push({
        path: userPath("model.max_model_len"),
        message:
          `${who}one ${m.maxModelLen}-token sequence needs ${gib(need)} of KV cache per GPU (${r.kvBytesPerToken} bytes/token, ${m.kvDtype}), ` +
          `but ${budget} leaves at most ${gib(Math.max(0, atBest))} after ${gib(r.weightBytes)} of weights (${sharding}); ` +
          `lower ${userPath("model.max_model_len")} (${Math.max(0, tokensIn(atBest, r.kvBytesPerToken))} would fit), raise ${userPath("parallel.tp")} or ${userPath("gpu_memory_utilization")}`,
      });
    } else if (r.kvTokens < m.maxModelLen) {
      warnings.push(
        `${who}the KV cache may not hold one ${m.maxModelLen}-token sequence: about ${gib(r.kvCacheBytes)} (${r.kvTokens} tokens) remain per GPU after weights and an estimated ${gib(reserveTotal(r.reserve))} of activations and CUDA graphs; vLLM refuses to start if so`,
      );
    }
  }
  return { issues, warnings };
}

/**
 * A static-pool engine (SGLang) with the fraction the planner emits: its KV cache is fixed by that
 * fraction, so what does not fit is refused, with the full reserve (no profiler adapts it).
 */
function staticPoolProblems(
  cfg: FleetConfig,
  m: GpuMemoryPlan,
  r: RoleMemory,
  userPath: (canonical: string) => string,
  budget: string,
  who: string,
  sharding: string,
  issues: ConfigIssue[],
): void {
  const fraction = m.memFractionStatic!;
  const planned = `${userPath("sglang_extra.mem_fraction_static")} is set by the planner`;
  const reserve = `an estimated ${gib(reserveTotal(r.reserve))} of activations, CUDA graphs and non-torch memory outside SGLang's static pool`;
  if (fraction <= 0) {
    issues.push({
      path: userPath("gpu_memory_utilization"),
      message: `${who}${budget} cannot hold ${reserve}, so no static pool (--mem-fraction-static) is left for weights and KV cache (${planned}); raise ${userPath("gpu_memory_utilization")}`,
    });
    return;
  }
  const pool = fraction * freeBeforeLoad(m.gpu.bytes, r.reserve);
  const fits = `${budget} less ${reserve} leaves a static pool of ${gib(pool)} (--mem-fraction-static ${fraction}, ${planned})`;
  if (r.weightBytes >= pool) {
    issues.push({
      path: userPath("parallel.tp"),
      message: `${who}${cfg.model.name}'s weights need ${gib(r.weightBytes)} per GPU (${m.weightDtype}, ${sharding}), but ${fits}; raise ${userPath("parallel.tp")} or ${userPath("gpu_memory_utilization")}, or use larger GPUs`,
    });
  } else if (r.kvTokens < m.maxModelLen) {
    issues.push({
      path: userPath("model.max_model_len"),
      message:
        `${who}one ${m.maxModelLen}-token sequence needs ${gib(m.maxModelLen * r.kvBytesPerToken)} of KV cache per GPU (${r.kvBytesPerToken} bytes/token, ${m.kvDtype}), ` +
        `but ${fits}, ${gib(r.kvCacheBytes)} after ${gib(r.weightBytes)} of weights (${sharding}); ` +
        `lower ${userPath("model.max_model_len")} (${r.kvTokens} would fit), raise ${userPath("parallel.tp")} or ${userPath("gpu_memory_utilization")}`,
    });
  }
}
