import type { ConfigView } from "./fleet-config";
import { shapeOf } from "./fleet-config";
import { FIXED_PORTS } from "./fixed-ports";
import { fail, type RuleIssue } from "./rule";
import { localRanks, perRankEngines } from "./topology";

/** Every port a node kind binds, with the stack-file key that chose it; duplicates on one node are errors. */
export function portCollisions(cfg: ConfigView): RuleIssue[] {
  /** `fixed`: a port the planner reserves; a collision is then the user's port's fault. */
  type Use = { port: number; what: string; key: string; fixed?: boolean };
  const shape = shapeOf(cfg);
  const d = cfg.deployment;
  const head: Use[] = [];
  const others: Use[] = [];
  const both = (u: Use) => (head.push(u), others.push(u));
  const routed = cfg.router.type !== "none";
  if (routed) head.push({ port: cfg.server.port, what: "the router", key: "server.port" });
  if (cfg.router.type === "vllm-router" || cfg.router.type === "sglang-router")
    head.push({
      port: cfg.server.port + FIXED_PORTS.routerMetricsOffset,
      what: "the router's Prometheus port (server.port + 21000)",
      key: "server.port",
    });
  if (cfg.router.type === "llm-d") {
    head.push(
      { port: FIXED_PORTS.eppGrpc, what: "the llm-d EPP gRPC port", key: "router.type", fixed: true },
      { port: FIXED_PORTS.eppHealth, what: "the llm-d EPP health port", key: "router.type", fixed: true },
      { port: FIXED_PORTS.eppMetrics, what: "the llm-d EPP metrics port", key: "router.type", fixed: true },
      { port: FIXED_PORTS.envoyAdmin, what: "the Envoy admin port", key: "router.type", fixed: true },
    );
  }
  // Per-rank engines (and decode sidecars) listen on port + k for each local rank k.
  const ranks = perRankEngines(cfg) ? localRanks(cfg) : 1;
  const ranged = (u: Use): Use[] =>
    Array.from({ length: ranks }, (_, k) => (k === 0 ? u : { ...u, port: u.port + k, what: `${u.what} (rank ${k})` }));
  if (d.type === "disaggregated") {
    head.push(...ranged({ port: d.prefill_port, what: "the prefill engines", key: "deployment.prefill_port" }));
    others.push(...ranged({ port: d.decode_port, what: "the decode engines", key: "deployment.decode_port" }));
    if (cfg.router.type === "llm-d")
      others.push(
        ...ranged({
          port: cfg.router.decode_sidecar_port,
          what: "the llm-d pd-sidecar",
          key: "router.decode_sidecar_port",
        }),
      );
    const dpLocal = Math.max(1, Math.floor(d.gpus_per_node / cfg.parallel.tp));
    for (let k = 0; k < dpLocal; k++)
      both({
        port: FIXED_PORTS.nixlSideChannel + k,
        what: `the NIXL side channel of local rank ${k}`,
        key: "deployment.type",
      });
  } else {
    ranged({
      port: routed ? cfg.backend_port : cfg.server.port,
      what: "the vLLM engine",
      key: routed ? (cfg.explicit.has("backend_port") ? "backend_port" : "server.port") : "server.port",
    }).forEach(both);
  }
  if (shape === "wide_ep" || shape === "disaggregated" || cfg.parallel.dp > 1)
    both({ port: FIXED_PORTS.dpRpc, what: "the data-parallel RPC port", key: "parallel.dp", fixed: true });
  if (cfg.kv_cache_offload?.type === "mooncake") {
    head.push(
      { port: FIXED_PORTS.mooncakeMaster, what: "the Mooncake master", key: "kv_cache_offload.type", fixed: true },
      {
        port: FIXED_PORTS.mooncakeMetadata,
        what: "the Mooncake metadata server",
        key: "kv_cache_offload.type",
        fixed: true,
      },
      {
        port: FIXED_PORTS.mooncakeMetrics,
        what: "the Mooncake master metrics",
        key: "kv_cache_offload.type",
        fixed: true,
      },
    );
    both({ port: FIXED_PORTS.mooncakeClient, what: "the Mooncake client", key: "kv_cache_offload.type", fixed: true });
  }
  if (cfg.kv_cache_offload?.type === "lmcache") {
    const key = "kv_cache_offload.type";
    both({ port: FIXED_PORTS.lmcacheServer, what: "the LMCache server", key, fixed: true });
    both({ port: FIXED_PORTS.lmcacheHttp, what: "the LMCache server's HTTP frontend", key, fixed: true });
  }
  const out: RuleIssue[] = [];
  const seen = new Set<string>();
  for (const uses of [head, others]) {
    for (const [i, a] of uses.entries()) {
      if (a.port > 65535) out.push(...fail(a.key, `puts ${a.what} on port ${a.port}, beyond 65535`));
      for (const b of uses.slice(i + 1)) {
        const id = [a.what, b.what, a.port].join("|");
        if (a.port === b.port && a.what !== b.what && !seen.has(id)) {
          seen.add(id);
          const [blamed, other] = b.fixed && !a.fixed ? [a, b] : [b, a];
          out.push(
            ...fail(
              blamed.key,
              `port ${a.port} is used by both ${other.what} and ${blamed.what} on the same node; choose another {key:${blamed.key}}`,
              other.key,
            ),
          );
        }
      }
    }
  }
  return out;
}
