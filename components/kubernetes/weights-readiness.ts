import type { EngineProcess, IslandPlan } from "../plan/deployment-plan";
import { engineNamed } from "../plan/engines";
import type { Probe } from "./objects";
import { pythonCheck } from "./python-check";

/*
 * An engine pod is Ready when it serves and does not serve the base model while the fleet's other
 * engines serve a trainer's update (issue 41 item 5): the kubelet restarts a crashed engine
 * container, and LeaderWorkerSet recreates a group, with the base weights, which /health alone
 * would count as Ready. The check (templates/kubernetes/weights-ready.py) runs in the engine's image:
 * it compares the engine's weight version with its peers', found through the headless engine
 * Services (which publish pods before they are Ready) of its own island first, then of the fleet's
 * other islands: one service's islands serve one model and take the same updates, and an island of
 * one engine has no other peer.
 */

/** Seconds between checks; each asks the engine and at most 8 peers, one second each at most. */
const PERIOD_S = 5;
const TIMEOUT_S = 12;

/**
 * The engine container's readiness probe: `python3 -c` with the check and its arguments.
 * `peersHosts`: the headless engine Services of the fleet's islands, the engine's own first.
 */
export function weightsReadinessProbe(islands: IslandPlan[], e: EngineProcess, peersHosts: string[]): Probe {
  if (e.port === undefined) throw new Error(`internal error: ${e.id} has no API port to check`);
  const engine = engineNamed(e.engine);
  const ports = islands.flatMap((i) => i.engines.flatMap((x) => (x.port === undefined ? [] : [String(x.port)])));
  const peerPorts = [...new Set(ports)];
  return {
    exec: {
      command: [
        "python3",
        "-c",
        pythonCheck("weights-ready"),
        String(e.port),
        engine.routes.weightVersion,
        engine.baseWeightVersion,
        peersHosts.join(","),
        ...peerPorts,
      ],
    },
    periodSeconds: PERIOD_S,
    timeoutSeconds: TIMEOUT_S,
    failureThreshold: 3,
  };
}
