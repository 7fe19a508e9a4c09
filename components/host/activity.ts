import type { IslandPlan } from "../plan/deployment-plan";
import { shq } from "../shell";
import { ACTIVITY_FILE, ACTIVITY_HEARTBEAT_S, IDLE_RELEASED_FILE } from "./activity-ledger";

/*
 * What a host target's launch script (SLURM's launch.sh, local's supervisor) hands the island's
 * activity monitor (templates/host/activity.sh.mustache, included by the keeper): the engines it
 * scrapes and the idle bound (0: no idle release; the ledger is written either way).
 */
export function activityView(island: IslandPlan) {
  return {
    idleS: island.activity.idleReleaseAfterS ?? 0,
    heartbeatS: ACTIVITY_HEARTBEAT_S,
    ledgerFile: ACTIVITY_FILE,
    markerFile: IDLE_RELEASED_FILE,
    activityEngines: island.activity.engines.map((e) => ({
      node: e.node,
      port: e.port,
      metrics: shq(e.metrics),
      running: shq(e.running),
      waiting: shq(e.waiting),
      finished: shq(e.finished),
      paused: shq(e.paused ?? ""),
    })),
  };
}
