import type { FleetConfig } from "../config/types";
import type { Role } from "./deployment-plan";
import type { Value } from "./values";

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
  ["VLLM_ENGINE_READY_TIMEOUT_S", "4200"],
];

/**
 * Layers environments in the order prime-rl exports them: launcher defaults, then env_vars, then
 * the role's env (P/D), then what the launcher sets per process. Later entries win; the order of
 * first appearance is kept so scripts are stable.
 */
export function layerEnv(cfg: FleetConfig, role: Role, perProcess: [string, Value][]): [string, Value][] {
  const env = new Map<string, Value>(DEFAULT_ENV);
  if (cfg.deployment.type === "disaggregated") env.set("UCX_TLS", "all");
  if (cfg.enable_lora) env.set("VLLM_ALLOW_RUNTIME_LORA_UPDATING", "True");
  for (const [k, v] of Object.entries(cfg.env_vars)) env.set(k, v);
  if (cfg.deployment.type === "disaggregated" && role !== "replica") {
    const roleEnv = role === "prefill" ? cfg.deployment.prefill_env_vars : cfg.deployment.decode_env_vars;
    for (const [k, v] of Object.entries(roleEnv)) env.set(k, v);
  }
  for (const [k, v] of perProcess) env.set(k, v);
  return [...env.entries()];
}
