import { z } from "zod";
import releasesManifest from "../../upstream/vllm-router-releases.json";
import { port, table, typeChoices } from "./primitives";

/** One vllm-router build the launcher may provide (components/upstream/vllm-router-releases.json). */
export interface RouterRelease {
  title: string;
  install: string;
  policies: string[];
  /** Its policies that keep a session on one engine by ROUTER_SESSION_HEADER. */
  session_policies: string[];
  /** Whether it serves `POST /finish_session?session_id=...` (prime-rl's orchestrator calls it when a rollout ends). */
  finish_session: boolean;
  /** Whether it serves `POST /add_worker?url=...`, so a host can start it before its workers (router-plan.ts followOf). */
  add_worker: boolean;
}

export const ROUTER_RELEASES = releasesManifest.releases as Record<string, RouterRelease>;
export const ROUTER_RELEASE_NAMES = Object.keys(ROUTER_RELEASES) as [string, ...string[]];
export const DEFAULT_ROUTER_RELEASE = releasesManifest.default;
export const ROUTER_SESSION_HEADER = releasesManifest.session_header;

/**
 * Policies some vllm-router build accepts: a file may name any of them, and the rule "the router
 * release serves the policy" (rules.ts) checks it against router.release.
 */
export const ROUTER_POLICIES = [...new Set(Object.values(ROUTER_RELEASES).flatMap((r) => r.policies))].sort() as [
  string,
  ...string[],
];

/** Which vllm-router build runs: its home is [deployment.router] here, [vllm_fleet] router_release in prime-rl's layout. */
export const routerRelease = z
  .enum(ROUTER_RELEASE_NAMES)
  .default(DEFAULT_ROUTER_RELEASE)
  .describe(
    `Which vllm-router build the launcher provides: "vllm-router-0.1.17" (the pinned upstream, pip install vllm-router==0.1.17; default) or "primeintellect-v0.2.1" (PrimeIntellect's fork, which adds least_loaded, sticky_least_loaded and POST /finish_session). It decides the policies the file may name and the island's router entry in the endpoints contract; install that build where the launcher finds vllm-router`,
  );

/** prime-rl's KNOWN_SCORERS: the llm-d scorer plugins its generated EPP config may weight. */
export const KNOWN_SCORERS = [
  "prefix-cache-scorer",
  "precise-prefix-cache-scorer",
  "queue-scorer",
  "kv-cache-utilization-scorer",
  "active-request-scorer",
  "load-aware-scorer",
  "running-requests-size-scorer",
  "token-load-scorer",
  "latency-scorer",
  "session-affinity-scorer",
  "lora-affinity-scorer",
] as const;

const weights = z.record(z.string(), z.number().min(0, "scorer weights must be >= 0").max(1000));

/** prime-rl's VllmRouterConfig.request_timeout_secs default (prime-rl #3495), which its router command passes. */
export const PRIME_ROUTER_REQUEST_TIMEOUT_S = 14400;

/** Seconds one routed request may take, streamed completions included: the HTTP routers' --request-timeout-secs. */
const requestTimeout = (router: string, otherwise: string) =>
  z
    .number()
    .int()
    .min(1, "must be at least 1 second")
    .optional()
    .describe(
      `Seconds ${router} lets one request run, a streamed completion included, before cutting it (--request-timeout-secs); a rollout longer than this fails. Default: ${otherwise}`,
    );

/** The HTTP router's other flags, checked against its manifest (config/router-flags.ts). */
const routerExtra = (router: string) =>
  z
    .record(z.string(), z.unknown())
    .optional()
    .describe(
      `Extra ${router} flags by snake_case name (retry_max_retries = 3, disable_circuit_breaker = true, health_check_interval_secs = 10, ...), checked against its manifest; the flags vllm-fleet plans are refused, naming the key that sets them (default: none)`,
    );

/** `type` may be omitted: this is the table's default router. */
const vllmRouterShape = {
  type: z.literal("vllm-router").default("vllm-router"),
  policy: z
    .enum(ROUTER_POLICIES)
    .default("consistent_hash")
    .describe(
      'Load-balancing policy (default consistent_hash on X-Session-ID); sticky_least_loaded and least_loaded need release = "primeintellect-v0.2.1"',
    ),
};

export const vllmRouter = table({
  ...vllmRouterShape,
  release: routerRelease,
  request_timeout_secs: requestTimeout("vllm-router", "unset, the router's own (1800 s)"),
  extra: routerExtra("vllm-router"),
});

/**
 * prime-rl's VllmRouterConfig: no release key (it forbids extras: there it is [vllm_fleet]
 * router_release) and no table of extra flags.
 * request_timeout_secs unset: AUTO_SETUP "prime-rl's router waits 14400 s for a request".
 */
export const primeVllmRouter = table({
  ...vllmRouterShape,
  request_timeout_secs: requestTimeout(
    "vllm-router",
    `${PRIME_ROUTER_REQUEST_TIMEOUT_S} (prime-rl's) in a file read as prime-rl 8324600 ([vllm_fleet] prime_rl_commit); otherwise unset, the router's own (1800 s), as prime-rl 559b447 passes none`,
  ),
});

/**
 * The HTTP routers' keys llm-d has no use for: its Envoy gateway's routes wait on a request without
 * bound (router-plan.ts envoyConfig: timeout 0s), and neither the EPP nor Envoy takes their flags.
 */
const LLMD_ABSENT = {
  request_timeout_secs:
    "llm-d's Envoy gateway waits on a request without bound (its routes' timeout is 0s), so no rollout is cut",
  extra: "llm-d's EPP and Envoy are configured by the planner, not by extra flags",
};

export const llmdRouter = table(
  {
    type: z.literal("llm-d"),
    scorers: weights
      .default({ "prefix-cache-scorer": 3.0, "active-request-scorer": 2.0 })
      .describe("Base scorer weights for every profile"),
    prefill_scorer_overrides: weights
      .default({ "queue-scorer": 2.0, "kv-cache-utilization-scorer": 2.0 })
      .describe(
        "Prefill profile weights over scorers (P/D; default queue-scorer and kv-cache-utilization-scorer at 2)",
      ),
    decode_scorer_overrides: weights.default({}).describe("Decode profile weights over scorers (P/D; default none)"),
    non_cached_tokens: z
      .number()
      .int()
      .min(0)
      .max(1_000_000)
      .default(16)
      .describe("Fewer prompt tokens not in the prefix cache than this: decode only (P/D; default 16)"),
    /** On Kubernetes P/D, AUTO_SETUP "llm-d P/D on Kubernetes: the decode sidecar takes the prefill port" replaces this default. */
    decode_sidecar_port: port
      .default(8300)
      .describe("pd-sidecar port on decode nodes (default 8300; on Kubernetes the prefill port)"),
  },
  LLMD_ABSENT,
);

/**
 * Policies sglang-router (sgl-model-gateway) accepts; its default is cache_aware (the radix-tree
 * prefix match per worker), round_robin and random are load-blind, power_of_two picks the less
 * loaded of two, manual routes by the request's routing key.
 */
export const SGLANG_ROUTER_POLICIES = ["cache_aware", "round_robin", "random", "power_of_two", "manual"] as const;

/** SGLang's router, in front of engine = "sglang" (AUTO_SETUP "SGLang engines sit behind sglang-router"). */
export const sglangRouter = table({
  type: z.literal("sglang-router"),
  policy: z
    .enum(SGLANG_ROUTER_POLICIES)
    .default("cache_aware")
    .describe("Load-balancing policy (default cache_aware, SGLang's own)"),
  request_timeout_secs: requestTimeout("sglang-router", "unset, the router's own (1800 s)"),
  extra: routerExtra("sglang-router"),
});

/** No router: a bare engine on server.port. Only meaningful for single_node. */
export const noRouter = table({ type: z.literal("none") });

export const routerTable = z.discriminatedUnion(
  "type",
  [vllmRouter, llmdRouter, sglangRouter, noRouter],
  typeChoices("vllm-router", "llm-d", "sglang-router", "none"),
);
