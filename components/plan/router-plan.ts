import type { FleetConfig } from "../config/types";
import type { PoolRef } from "./target-hints";
import { FIXED_PORTS } from "../config/fixed-ports";
import type {
  EngineProcess,
  HttpRouterKind,
  HttpRouterPlan,
  LlmdPlan,
  RouterFollow,
  RouterSettings,
} from "./deployment-plan";
import { fileRef, nodeRef, selfRef, t, type Value } from "./values";
import { ROUTER_RELEASES } from "../config/schema/router";
import { ENGINE_READY_TIMEOUT_S } from "../config/timeouts";
import { engineNamed } from "./engines";
import { routerFlagArgs } from "../config/router-flags";
import type { ExtraValue } from "../config/flag-values";

/** Seconds the router waits for its workers: as long as an engine may take to be ready (prime-rl uses 4200). */
export const WORKER_STARTUP_TIMEOUT_S = ENGINE_READY_TIMEOUT_S;
/** Seconds between vllm-router's health checks of its workers in P/D mode (its default: 60). */
const PD_HEALTH_CHECK_S = 2;

const engineUrl = (e: EngineProcess): Value => t`http://${nodeRef(e.node)}:${e.port!}`;

/**
 * How each HTTP router is started: vllm-router's console script; sglang-router's module, as SGLang's
 * docs start it (python -m sglang_router.launch_router).
 */
const ROUTER_PROGRAMS: Record<HttpRouterKind, readonly string[]> = {
  "vllm-router": ["vllm-router"],
  "sglang-router": ["python3", "-m", "sglang_router.launch_router"],
};

export const routerProgram = (kind: HttpRouterKind): readonly string[] => ROUTER_PROGRAMS[kind];

/**
 * vllm-router, or sglang-router (vllm-router's origin, with the same flags) in front of SGLang, on
 * the island head: regular mode over every engine, or P/D mode (prefill, then decode; SGLang's
 * prefill URLs carry their bootstrap port).
 */
export function httpRouterPlan(cfg: FleetConfig, engines: EngineProcess[]): HttpRouterPlan {
  const kind = cfg.router.type;
  if (kind !== "vllm-router" && kind !== "sglang-router") throw new Error("httpRouterPlan needs an HTTP router config");
  const port = cfg.server.port;
  const metricsPort = port + FIXED_PORTS.routerMetricsOffset;
  const serving = engines.filter((e) => e.port !== undefined);
  const pd = cfg.deployment.type === "disaggregated";
  const host = cfg.server.host ?? "0.0.0.0";
  // The user's router flags (checked at load: config/router-flags.ts); one the planner would set
  // by default (ROUTER_PLANNER_DEFAULTS) replaces the planner's, as the routers refuse a flag twice.
  const extra = (cfg.router.extra ?? {}) as Record<string, ExtraValue>;
  const unless = (key: string, ...tokens: string[]) => (key in extra ? [] : tokens);
  const argv: Value[] = [
    ...routerProgram(kind),
    "--policy",
    cfg.router.policy,
    "--host",
    host,
    "--port",
    String(port),
    "--request-id-headers",
    "x-session-id",
    "--prometheus-host",
    "0.0.0.0",
    "--prometheus-port",
    String(metricsPort),
    "--worker-startup-timeout-secs",
    String(WORKER_STARTUP_TIMEOUT_S),
    // It waits for its workers before it serves, checking every 30 s by default: up to 30 s between
    // the last engine being healthy and the trainer getting its URL. 1 s is the least it accepts.
    "--worker-startup-check-interval",
    "1",
    ...unless("log_level", "--log-level", "info"),
  ];
  const timeout = cfg.router.request_timeout_secs;
  if (timeout !== undefined) argv.push("--request-timeout-secs", String(timeout));
  for (const [key, value] of Object.entries(extra)) argv.push(...routerFlagArgs(key, value));
  // prime-rl's layout, single node: its local router is told the engine's DP ranks behind the one
  // URL (--intra-node-data-parallel-size, src/prime_rl/entrypoints/inference.py); its SLURM
  // templates give every rank its own URL instead.
  const ranksPerUrl =
    cfg.prime_rl && cfg.deployment.type === "single_node" && serving.length === 1 ? (serving[0].dp?.local ?? 1) : 0;
  if (ranksPerUrl) argv.push("--intra-node-data-parallel-size", String(ranksPerUrl));
  const follow = followOf(cfg, {
    url: host === "0.0.0.0" ? t`http://${selfRef}:${port}` : `http://${host}:${port}`,
    urls: serving.map(engineUrl),
    origins: serving.map((e) => ({ group: e.group, node: e.node })),
    weightVersion: engineNamed(serving[0].engine).routes.weightVersion,
  });
  const lateWorkers =
    follow?.routes === "query" ? { argv: [...argv], count: serving.length * Math.max(ranksPerUrl, 1) } : undefined;
  if (pd && !follow && kind === "vllm-router") {
    // Unfollowed, its own health checks keep it to the engines that serve: a dead one (P/D mode
    // retries nothing: each request it gets fails) out at its first failed check, a restarted one
    // back after two good ones once it serves the fleet's weights (on a host its restart gate,
    // Engine.restartGate; on Kubernetes its ready Service, kubernetes/ready-services.ts); by
    // default that is 3 and 2 checks a minute apart (measured with 0.1.17).
    argv.push(
      ...unless("health_check_interval_secs", "--health-check-interval-secs", String(PD_HEALTH_CHECK_S)),
      ...unless("health_failure_threshold", "--health-failure-threshold", "1"),
    );
  }
  if (pd) {
    argv.push(kind === "sglang-router" ? "--pd-disaggregation" : "--vllm-pd-disaggregation");
    for (const e of serving.filter((e) => e.role === "prefill")) {
      const bootstrap = e.disaggregation?.bootstrapPort;
      argv.push("--prefill", engineUrl(e), ...(bootstrap === undefined ? [] : [String(bootstrap)]));
    }
    for (const e of serving.filter((e) => e.role === "decode")) argv.push("--decode", engineUrl(e));
  } else {
    argv.push("--worker-urls", ...serving.map(engineUrl));
  }
  return {
    kind,
    holdsApiKey: kind === "sglang-router",
    node: 0,
    port,
    metricsPort,
    pd,
    argv,
    ...(follow && { follow }),
    ...(lateWorkers && { lateWorkers }),
  };
}

/**
 * Where a router can be told its workers at run time, and so followed (a restarted engine taken out,
 * told again once it serves current weights): sglang-router 0.3.2 in either mode (its /workers
 * routes take a P/D worker's type and bootstrap port: measured with the pinned build); vllm-router
 * in regular mode only (no run-time add or remove in P/D mode). vllm-router (routes "query") is then
 * also started before its workers and told each as it serves (lateWorkers): told them at start, it binds its port only once one answers /health,
 * checking every --worker-startup-check-interval (whole seconds, at least 1), whereas POST
 * /add_worker registers a worker already healthy in milliseconds (vllm-router 0.1.17, measured with
 * the pinned build; router.rs add_worker). Not with power_of_two (it refuses fewer than 2 workers at
 * start), nor a build not known to serve the route. sglang-router 0.3.2 (routes "workers") listens
 * at once and registers its --worker-urls in the background, so it keeps them at start.
 */
function followOf(cfg: FleetConfig, follow: Omit<RouterFollow, "routes">): RouterFollow | undefined {
  const r = cfg.router;
  if (r.type === "sglang-router") return { routes: "workers", ...follow };
  if (cfg.deployment.type === "disaggregated") return;
  if (r.type !== "vllm-router" || r.policy === "power_of_two" || !ROUTER_RELEASES[r.release].add_worker) return;
  return { routes: "query", ...follow };
}

/**
 * llm-d standalone: EPP (file discovery of every engine on SLURM, the InferencePool's pods on
 * Kubernetes; decode entries point at the pd-sidecar), Envoy with ext_proc to the EPP, and a
 * pd-sidecar on every decode node, as prime-rl runs them (its
 * src/prime_rl/templates/_launch_router.sh.j2, llmd/ and inference.sbatch.j2).
 */
export function llmdPlan(cfg: FleetConfig, pool: PoolRef, engines: EngineProcess[]): LlmdPlan {
  if (cfg.router.type !== "llm-d") throw new Error("llmdPlan needs an llm-d config");
  const r = cfg.router;
  const pd = cfg.deployment.type === "disaggregated";
  const serving = engines.filter((e) => e.port !== undefined);
  // A decode node's pd-sidecar listens on decode_sidecar_port + k in front of its engine on
  // decode_port + k, one listener per decode engine of the node (k = 0 with one engine per node).
  const decodeOffset = (e: EngineProcess) =>
    cfg.deployment.type === "disaggregated" ? e.port! - cfg.deployment.decode_port : 0;
  const endpoints: LlmdPlan["endpoints"] = serving.map((e) =>
    e.role === "replica"
      ? { name: e.id, address: t`${nodeRef(e.node)}`, port: e.port!, worker: engineUrl(e) }
      : {
          name: e.id,
          address: t`${nodeRef(e.node)}`,
          port: e.role === "decode" ? r.decode_sidecar_port + decodeOffset(e) : e.port!,
          role: e.role,
          worker: engineUrl(e),
        },
  );

  const fileDiscovery = pool.discovery === "file";
  const plugins: Record<string, unknown>[] = [
    ...(fileDiscovery
      ? [
          {
            name: "file-disc",
            type: "file-discovery",
            parameters: { path: { parts: [fileRef("epp-endpoints")] }, watchFile: true },
          },
        ]
      : []),
    // llm-d-router v0.10.0 resolves a parser per request path (pkg/epp/handlers/parsers.go):
    // vllmhttp-parser claims only /inference/v1/generate (parsers/vllmhttp/vllmhttp.go), so
    // /v1/completions and /v1/chat/completions need openai-parser too (parsers/README.md).
    { type: "vllmhttp-parser" },
    { type: "openai-parser" },
  ];
  const weighted = (scorers: Record<string, number>) =>
    Object.entries(scorers).map(([name, weight]) => ({ pluginRef: name, weight }));
  let profiles: Record<string, unknown>[];
  if (pd) {
    const prefill = { ...r.scorers, ...r.prefill_scorer_overrides };
    const decode = { ...r.scorers, ...r.decode_scorer_overrides };
    for (const name of new Set([...Object.keys(prefill), ...Object.keys(decode)])) plugins.push({ type: name });
    plugins.push(
      { name: "pd-decider", type: "prefix-based-pd-decider", parameters: { nonCachedTokens: r.non_cached_tokens } },
      { type: "prefill-filter" },
      { type: "decode-filter" },
      { type: "max-score-picker" },
      {
        name: "profile-handler",
        type: "disagg-profile-handler",
        parameters: { profiles: { prefill: "prefill", decode: "decode" }, deciders: { prefill: "pd-decider" } },
      },
    );
    profiles = [
      {
        name: "prefill",
        plugins: [{ pluginRef: "prefill-filter" }, ...weighted(prefill), { pluginRef: "max-score-picker" }],
      },
      {
        name: "decode",
        plugins: [{ pluginRef: "decode-filter" }, ...weighted(decode), { pluginRef: "max-score-picker" }],
      },
    ];
  } else {
    for (const name of Object.keys(r.scorers)) plugins.push({ type: name });
    plugins.push({ type: "max-score-picker" }, { type: "single-profile-handler" });
    profiles = [{ name: "default", plugins: [...weighted(r.scorers), { pluginRef: "max-score-picker" }] }];
  }
  const eppConfig = {
    apiVersion: "llm-d.ai/v1alpha1",
    kind: "EndpointPickerConfig",
    plugins,
    schedulingProfiles: profiles,
    requestHandler: { parsers: [{ pluginRef: "vllmhttp-parser" }, { pluginRef: "openai-parser" }] },
    // Without a discovery plugin the EPP watches the InferencePool's pods through the Kubernetes API.
    ...(fileDiscovery ? { dataLayer: { discovery: { pluginRef: "file-disc" } } } : {}),
  };
  const eppArgv: Value[] = [
    "epp",
    "--pool-name",
    pool.name,
    "--pool-namespace",
    pool.namespace,
    "--config-file",
    { parts: [fileRef("epp-config")] },
    "--grpc-port",
    String(FIXED_PORTS.eppGrpc),
    "--grpc-health-port",
    String(FIXED_PORTS.eppHealth),
    "--metrics-port",
    String(FIXED_PORTS.eppMetrics),
    "--secure-serving=false",
    "--metrics-endpoint-auth=false",
    "--tracing=false",
  ];
  // One pd-sidecar per decode node, as prime-rl runs it (inference.sbatch.j2): with per-rank engines
  // its --data-parallel-size is the node's engine count, each listener forwarding to one of them.
  const decodeNodes = [...new Set(serving.filter((e) => e.role === "decode").map((e) => e.node))];
  const sidecars = decodeNodes.map((node) => {
    const local = serving.filter((e) => e.role === "decode" && e.node === node);
    const vllmPort = Math.min(...local.map((e) => e.port!));
    return {
      node,
      port: r.decode_sidecar_port,
      vllmPort,
      argv: [
        "pd-sidecar",
        "--port",
        String(r.decode_sidecar_port),
        "--vllm-port",
        String(vllmPort),
        "--kv-connector",
        "nixlv2",
        "--secure-proxy=false",
        "--enable-ssrf-protection=false",
        "--inference-pool",
        pool.name,
        "--data-parallel-size",
        String(local.length),
      ] as Value[],
    };
  });
  return {
    kind: "llm-d",
    node: 0,
    port: cfg.server.port,
    pd,
    epp: {
      argv: eppArgv,
      config: eppConfig,
      grpcPort: FIXED_PORTS.eppGrpc,
      healthPort: FIXED_PORTS.eppHealth,
      metricsPort: FIXED_PORTS.eppMetrics,
    },
    endpoints,
    envoy: {
      argv: ["envoy", "-c", { parts: [fileRef("envoy-config")] }, "--log-level", "warn"],
      config: envoyConfig(cfg.server.port),
      adminPort: FIXED_PORTS.envoyAdmin,
    },
    sidecars,
    // On a host the EPP reads its endpoints from a file it watches: its follower rewrites that file.
    ...(fileDiscovery && {
      follow: {
        routes: "file" as const,
        url: { parts: [fileRef("epp-endpoints")] },
        urls: serving.map(engineUrl),
        origins: serving.map((e) => ({ group: e.group, node: e.node })),
        weightVersion: engineNamed(serving[0].engine).routes.weightVersion,
      },
    }),
  };
}

/** Circuit breakers raised far above Envoy's ~1024 default, which overflowed at RL concurrency (prime-rl #2697). */
const BREAKERS = {
  thresholds: ["DEFAULT", "HIGH"].map((priority) => ({
    priority,
    max_connections: 100000,
    max_pending_requests: 100000,
    max_requests: 100000,
    max_retries: 1000,
  })),
};

/** Envoy: listener on the client port, ext_proc to the EPP, ORIGINAL_DST to the endpoint it picks. */
export function envoyConfig(listenPort: number): Record<string, unknown> {
  const route = (prefix: string) => ({
    match: { prefix },
    route: { cluster: "backend_cluster", timeout: "0s", idle_timeout: "86400s" },
  });
  return {
    admin: { address: { socket_address: { address: "127.0.0.1", port_value: FIXED_PORTS.envoyAdmin } } },
    static_resources: {
      listeners: [
        {
          name: "fleet",
          address: { socket_address: { address: "0.0.0.0", port_value: listenPort } },
          filter_chains: [
            {
              filters: [
                {
                  name: "envoy.filters.network.http_connection_manager",
                  typed_config: {
                    "@type":
                      "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
                    stat_prefix: "fleet",
                    stream_idle_timeout: "0s",
                    request_timeout: "0s",
                    route_config: {
                      name: "fleet",
                      virtual_hosts: [
                        { name: "fleet", domains: ["*"], routes: [route("/v1/"), route("/inference/v1/")] },
                      ],
                    },
                    http_filters: [
                      {
                        name: "envoy.filters.http.ext_proc",
                        typed_config: {
                          "@type": "type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor",
                          // No failure_mode_allow: fail closed, a down EPP is a visible 5xx, never unpicked routing.
                          grpc_service: { envoy_grpc: { cluster_name: "epp_cluster" }, timeout: "10s" },
                          message_timeout: "1000s",
                          processing_mode: {
                            request_header_mode: "SEND",
                            response_header_mode: "SEND",
                            request_body_mode: "FULL_DUPLEX_STREAMED",
                            response_body_mode: "FULL_DUPLEX_STREAMED",
                            request_trailer_mode: "SEND",
                            response_trailer_mode: "SEND",
                          },
                        },
                      },
                      {
                        name: "envoy.filters.http.router",
                        typed_config: {
                          "@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router",
                          suppress_envoy_headers: true,
                        },
                      },
                    ],
                  },
                },
              ],
            },
          ],
        },
      ],
      clusters: [
        {
          name: "backend_cluster",
          type: "ORIGINAL_DST",
          lb_policy: "CLUSTER_PROVIDED",
          connect_timeout: "5s",
          original_dst_lb_config: { use_http_header: true, http_header_name: "x-gateway-destination-endpoint" },
          circuit_breakers: BREAKERS,
        },
        {
          name: "epp_cluster",
          type: "STRICT_DNS",
          connect_timeout: "5s",
          typed_extension_protocol_options: {
            "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": {
              "@type": "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
              explicit_http_config: { http2_protocol_options: {} },
            },
          },
          load_assignment: {
            cluster_name: "epp_cluster",
            endpoints: [
              {
                lb_endpoints: [
                  {
                    endpoint: {
                      address: { socket_address: { address: "127.0.0.1", port_value: FIXED_PORTS.eppGrpc } },
                    },
                  },
                ],
              },
            ],
          },
          circuit_breakers: BREAKERS,
        },
      ],
    },
  };
}

/** The island router's settings the trainer contract reports (trainer/router-contract.ts); null without one. */
export function routerSettings(cfg: FleetConfig): RouterSettings | null {
  const r = cfg.router;
  if (r.type === "none") return null;
  if (r.type === "llm-d") return { kind: r.type, policy: null, release: null };
  return { kind: r.type, policy: r.policy, release: r.type === "vllm-router" ? r.release : null };
}
