import type { FleetConfig } from "../config/types";
import type { Role } from "./deployment-plan";

/**
 * What the stack file exports for an engine process of `role`, in the order it is layered over the
 * engine's defaults: env_vars, then (P/D) its role's table, whose entries win.
 */
export function userEnv(cfg: FleetConfig, role: Role): [string, string][] {
  const out = Object.entries(cfg.env_vars);
  if (cfg.deployment.type === "disaggregated" && role !== "replica")
    out.push(...Object.entries(role === "prefill" ? cfg.deployment.prefill_env_vars : cfg.deployment.decode_env_vars));
  return out;
}
