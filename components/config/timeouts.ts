/**
 * Seconds an engine may take to become ready: vLLM's VLLM_ENGINE_READY_TIMEOUT_S (prime-rl's
 * 4200, components/plan/engines/vllm/env.ts), the Kubernetes startup-probe budget's default and the router's
 * wait for its workers (plan/router-plan.ts WORKER_STARTUP_TIMEOUT_S, checked equal in tests).
 * One number, so no layer gives up on an engine another layer still waits for.
 */
export const ENGINE_READY_TIMEOUT_S = 4200;
