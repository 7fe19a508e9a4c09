import type { HttpRouterPlan, IslandPlan } from "../plan/deployment-plan";
import { engineNamed } from "../plan/engines";
import { readTemplate } from "../templates";
import { k8sArgv } from "./kubelet-values";
import { k8sLiteral, resources, type Container } from "./objects";
import type { K8sContext } from "./render-context";

/*
 * vllm-router on Kubernetes is given the engine pods' DNS names and checks only their /health, so an
 * engine container the kubelet restarted (back on the base model while its peers serve a trainer's
 * update) would take requests though its pod is not Ready (weights-readiness.ts). The follower, a
 * container beside the router in its pod, takes it out of the router and tells it again once its
 * weights are current, as fleet_follow_workers does on a host (templates/host/helpers.sh.mustache).
 * Where the router serves POST /add_worker and /remove_worker: the plan's lateWorkers says so
 * (router-plan.ts lateWorkersOf: vllm-router in regular mode, a release known to serve them).
 * The router's own Service and probes are unchanged: the follower only calls the router.
 */

/** The follower's container, or none where the router cannot be told its workers at run time. */
export function routerFollower(ctx: K8sContext, island: IslandPlan, r: HttpRouterPlan, image: string): Container[] {
  const late = r.lateWorkers;
  if (late === undefined) return [];
  const engine = engineNamed(island.engines[0].engine);
  return [
    {
      name: "router-follower",
      image,
      command: [
        "python3",
        "-c",
        k8sLiteral(readTemplate("kubernetes/router-follower.py")),
        String(r.port),
        k8sLiteral(late.weightVersion),
        k8sLiteral(engine.baseWeightVersion),
        ...k8sArgv(ctx, island.index, late.urls),
      ],
      // A loop of HTTP calls once a second: what it needs is small and fixed.
      resources: resources("50m", "64Mi"),
    },
  ];
}
