import type { HttpRouterPlan, IslandPlan } from "../plan/deployment-plan";
import { engineNamed } from "../plan/engines";
import { k8sArgv } from "./kubelet-values";
import { k8sLiteral, resources, SECRET_KEYS, secretEnv, type K8sObject } from "./objects";
import { pythonCheck } from "./python-check";
import { labels, singletonDeployment, type K8sContext } from "./render-context";

/*
 * vllm-router and sglang-router on Kubernetes are given the engine pods' DNS names and check only
 * their /health, so an engine container the kubelet restarted (back on the base model while its peers
 * serve a trainer's update) would take requests though its pod is not Ready (weights-readiness.ts).
 * The follower takes it out of the router and tells it again once its weights are current, as
 * fleet_follow_workers does on a host (templates/host/helpers.sh.mustache), through the router's
 * Service, in the router's own run-time routes. Where the router has them: the plan's `follow` says
 * so (router-plan.ts followOf: regular mode; vllm-router a release known to serve them). A router
 * that holds the fleet's API key (sglang-router) demands it on those routes: the follower gets it
 * from the Secret, as the router does.
 *
 * A Deployment of its own, not a container in the router's pod: a pod is Ready only while every
 * container is, so a follower that crashed (an image without python3) would take the router out of
 * its Service. On its own, its death costs only the gating (the router keeps its own health checks)
 * and the kubelet restarts it; `pulumi up` waits for it as for the router, so an image that cannot
 * run it fails the up, named.
 */

/** The follower's Deployment, or none where the router cannot be told its workers at run time. */
export function routerFollower(ctx: K8sContext, island: IslandPlan, r: HttpRouterPlan, image: string): K8sObject[] {
  const f = r.follow;
  if (f === undefined) return [];
  const engine = engineNamed(island.engines[0].engine);
  const router = `http://${ctx.names.svcHost(ctx.names.routerService(island.index))}:${r.port}`;
  const keyed = r.holdsApiKey && ctx.secrets.includes("apiKey");
  return [
    singletonDeployment(ctx, ctx.names.routerFollower(island.index), labels(ctx, "router-follower", island.index), {
      containers: [
        {
          name: "router-follower",
          image,
          command: [
            "python3",
            "-c",
            k8sLiteral(pythonCheck("router-follower")),
            k8sLiteral(router),
            f.routes,
            k8sLiteral(f.weightVersion),
            k8sLiteral(engine.baseWeightVersion),
            ...k8sArgv(ctx, island.index, f.urls),
          ],
          ...(keyed ? { env: [secretEnv(ctx.names.secret, SECRET_KEYS.apiKey)] } : {}),
          // A loop of HTTP calls once a second: what it needs is small and fixed.
          resources: resources("50m", "64Mi"),
        },
      ],
    }),
  ];
}
