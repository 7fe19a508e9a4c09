import type { FleetConfig } from "../../../config/types";
import { userEnv } from "../../user-env";
import type { Role } from "../../deployment-plan";
import type { Value } from "../../values";
import { ENGINE_READY_TIMEOUT_S } from "../../../config/timeouts";

/**
 * prime-rl's DEFAULT_COMMON_ENV_VARS and DEFAULT_INFERENCE_ENV_VARS (its
 * src/prime_rl/utils/process.py); UCX_TLS is set below, for P/D only.
 */
export const DEFAULT_ENV: [string, string][] = [
  ["CUDA_DEVICE_ORDER", "PCI_BUS_ID"],
  ["PYTHONUNBUFFERED", "1"],
  ["OMP_NUM_THREADS", "1"],
  ["VLLM_WORKER_MULTIPROC_METHOD", "spawn"],
  ["PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:False"],
  ["VLLM_ENGINE_READY_TIMEOUT_S", String(ENGINE_READY_TIMEOUT_S)],
];

/**
 * prime-rl's layout: its launcher defaults as they are, DEFAULT_COMMON_ENV_VARS then
 * DEFAULT_INFERENCE_ENV_VARS (src/prime_rl/utils/process.py), UCX_TLS for every shape.
 */
export const PRIME_DEFAULT_ENV: [string, string][] = [
  ["CUDA_DEVICE_ORDER", "PCI_BUS_ID"],
  ["PYTHONUNBUFFERED", "1"],
  ["OMP_NUM_THREADS", "1"],
  ["GIT_LFS_SKIP_SMUDGE", "1"],
  ["VLLM_WORKER_MULTIPROC_METHOD", "spawn"],
  ["PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:False"],
  ["VLLM_ENGINE_READY_TIMEOUT_S", String(ENGINE_READY_TIMEOUT_S)],
  ["UCX_TLS", "all"],
];

/**
 * prime-rl's layout: what its server sets in-process before vLLM starts (setup_vllm_env in
 * src/prime_rl/inference/server.py). `default` entries apply only when nothing earlier set the
 * variable (os.environ.setdefault); the others always win.
 */
export function primeServerEnv(cfg: FleetConfig): { name: string; value: string; default: boolean }[] {
  const pe = cfg.prime_engine;
  const deepGemm = pe?.use_deep_gemm ? "1" : "0";
  // prime-rl 8324600: sampling masks are captured on the V2 model runner only; the logprobs patch reads its variable.
  const mask = cfg.prime_engine?.enable_return_sampling_mask === true;
  const maskLogprobs = mask && cfg.prime_engine?.enable_return_sampling_mask_logprobs === true;
  return [
    { name: "VLLM_WORKER_MULTIPROC_METHOD", value: "spawn", default: true },
    // The V2 model runner cannot capture routed experts (559b447); sampling masks need it (8324600).
    { name: "VLLM_USE_V2_MODEL_RUNNER", value: mask ? "1" : "0", default: true },
    ...(maskLogprobs ? [{ name: "PRIME_RETURN_SAMPLING_MASK_LOGPROBS", value: "1", default: false }] : []),
    // prime-rl 8324600: its server's FP8 weight patches and plugin loader read these in every vLLM process.
    ...(pe?.fp8_ue8m0_weight_scales ? [{ name: "PRIME_FP8_UE8M0_WEIGHT_SCALES", value: "1", default: false }] : []),
    ...(pe?.fp8_stochastic_weight_rounding
      ? [{ name: "PRIME_FP8_STOCHASTIC_WEIGHT_ROUNDING", value: "1", default: false }]
      : []),
    ...(pe?.vllm_plugins?.length
      ? [{ name: "PRIME_VLLM_PLUGINS", value: JSON.stringify(pe.vllm_plugins), default: false }]
      : []),
    // vLLM 0.24 grammar-constrains tool calls by default, which changes rollout logprobs.
    { name: "VLLM_ENFORCE_STRICT_TOOL_CALLING", value: "0", default: true },
    { name: "VLLM_USE_DEEP_GEMM", value: deepGemm, default: false },
    { name: "VLLM_MOE_USE_DEEP_GEMM", value: deepGemm, default: false },
    ...(cfg.enable_lora ? [{ name: "VLLM_ALLOW_RUNTIME_LORA_UPDATING", value: "True", default: false }] : []),
  ];
}

/**
 * Layers environments in the order prime-rl exports them: launcher defaults, then env_vars, then
 * the role's env (P/D), then what the launcher sets per process, then (prime-rl's layout) what its
 * server sets in-process. Later entries win; the order of first appearance is kept so scripts are
 * stable.
 */
export function layerEnv(cfg: FleetConfig, role: Role, perProcess: [string, Value][]): [string, Value][] {
  if (cfg.prime_rl) return layerPrimeEnv(cfg, role, perProcess);
  const env = new Map<string, Value>(DEFAULT_ENV);
  if (cfg.deployment.type === "disaggregated") env.set("UCX_TLS", "all");
  if (cfg.enable_lora) env.set("VLLM_ALLOW_RUNTIME_LORA_UPDATING", "True");
  for (const [k, v] of userEnv(cfg, role)) env.set(k, v);
  for (const [k, v] of perProcess) env.set(k, v);
  return [...env.entries()];
}

function layerPrimeEnv(cfg: FleetConfig, role: Role, perProcess: [string, Value][]): [string, Value][] {
  const env = new Map<string, Value>(PRIME_DEFAULT_ENV);
  for (const [k, v] of userEnv(cfg, role)) env.set(k, v);
  for (const [k, v] of perProcess) env.set(k, v);
  for (const { name, value, default: onlyIfUnset } of primeServerEnv(cfg))
    if (!onlyIfUnset || !env.has(name)) env.set(name, value);
  return [...env.entries()];
}
