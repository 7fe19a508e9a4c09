import type { FleetConfig } from "../config/types";
import type { RestartPlan } from "./deployment-plan";

/** `restart` as a launch script counts: whole seconds for the window, tenths of a second for waits (the schema takes tenths at most). */
export function restartPlan(cfg: FleetConfig): RestartPlan {
  const r = cfg.restart;
  return {
    maxRestarts: r.max_restarts,
    windowS: Math.ceil(r.window),
    backoffDs: Math.round(r.backoff * 10),
    maxBackoffDs: Math.round(Math.max(r.max_backoff, r.backoff) * 10),
  };
}
