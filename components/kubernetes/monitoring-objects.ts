import type { IslandPlan } from "../plan/deployment-plan";
import { engineNamed } from "../plan/engines";
import { labels, meta, type Component, type K8sContext } from "./render-context";
import { servingSelector } from "./engine-pod";
import type { K8sObject } from "./objects";

/** Container port names the monitors scrape: the engine's API port, and the router's or EPP's metrics port. */
export const METRICS_PORTS = { engine: "http", router: "metrics" } as const;

function podMonitor(
  ctx: K8sContext,
  name: string,
  component: Component,
  island: number,
  selector: Record<string, string>,
  port: string,
  path: string,
): K8sObject {
  // The stack's monitoring_labels first: a Prometheus selects monitors by them, ours still identify the fleet.
  const own = { ...ctx.target.monitoring_labels, ...labels(ctx, component, island) };
  return {
    apiVersion: "monitoring.coreos.com/v1",
    kind: "PodMonitor",
    metadata: meta(ctx, name, own),
    // No namespaceSelector: a PodMonitor selects pods in its own namespace, the fleet's.
    spec: { selector: { matchLabels: selector }, podMetricsEndpoints: [{ port, path, scheme: "http" }] },
  };
}

/**
 * An island's Prometheus Operator PodMonitors (issue 20 #11; `[kubernetes] monitoring`, off by
 * default since the CRDs may be absent): one over the serving engine pods (vLLM serves /metrics on
 * its API port; --api-key guards only /v1), one over the router pods: vllm-router's Prometheus
 * exporter (--prometheus-port), or llm-d's EPP metrics port (9090), which the plan starts with
 * --metrics-endpoint-auth=false (llm-d-router v0.10.0 cmd/epp/runner/runner.go: with it true,
 * controller-runtime's WithAuthenticationAndAuthorization would ask every scrape for a bearer token
 * allowed `get` on the nonResourceURL /metrics, and the EPP for cluster-wide TokenReview rights).
 * Envoy's admin port and the Mooncake master are not scraped.
 */
export function monitoringObjects(ctx: K8sContext, island: IslandPlan): K8sObject[] {
  if (!ctx.target.monitoring) return [];
  const i = island.index;
  // Every engine of an island runs the same engine: its metrics route on the API port.
  const enginePath = engineNamed(island.engines[0].engine).routes.metrics;
  const out = [
    podMonitor(ctx, ctx.names.engineService(i), "engine", i, servingSelector(ctx, i), METRICS_PORTS.engine, enginePath),
  ];
  const r = island.router;
  if (r) {
    const name = r.kind === "llm-d" ? ctx.names.eppService(i) : ctx.names.routerService(i);
    out.push(podMonitor(ctx, name, "router", i, labels(ctx, "router", i), METRICS_PORTS.router, "/metrics"));
  }
  return out;
}
