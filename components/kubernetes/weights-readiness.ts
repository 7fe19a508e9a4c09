import type { EngineProcess, IslandPlan } from "../plan/deployment-plan";
import { engineNamed } from "../plan/engines";
import type { Probe } from "./objects";
import { pythonCheck } from "./python-check";

/*
 * An engine pod is Ready when it serves and does not serve the base model while the island's other
 * engines serve a trainer's update (issue 41 item 5): the kubelet restarts a crashed engine
 * container, and LeaderWorkerSet recreates a group, with the base weights, which /health alone
 * would count as Ready. The check (templates/kubernetes/weights-ready.py) runs in the engine's image:
 * it compares the engine's weight version with its peers', found through the island's headless
 * engine Service (which publishes pods before they are Ready, and selects every engine pod of the
 * fleet's service: workloads.ts engineService).
 */

/** Seconds between checks; each asks the engine and at most 8 peers, one second each at most. */
const PERIOD_S = 5;
const TIMEOUT_S = 12;

/** The engine container's readiness probe: `python3 -c` with the check and its arguments. */
export function weightsReadinessProbe(island: IslandPlan, e: EngineProcess, peersHost: string): Probe {
  if (e.port === undefined) throw new Error(`internal error: ${e.id} has no API port to check`);
  const engine = engineNamed(e.engine);
  const peerPorts = [...new Set(island.engines.flatMap((x) => (x.port === undefined ? [] : [String(x.port)])))];
  return {
    exec: {
      command: [
        "python3",
        "-c",
        pythonCheck("weights-ready"),
        String(e.port),
        engine.routes.weightVersion,
        engine.baseWeightVersion,
        peersHost,
        ...peerPorts,
      ],
    },
    periodSeconds: PERIOD_S,
    timeoutSeconds: TIMEOUT_S,
    failureThreshold: 3,
  };
}
