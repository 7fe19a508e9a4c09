import { checkFlagValue, ownedFlagMessage, type ExtraValue, type FlagOwner, type FlagValueSpec } from "./flag-values";
import { ConfigIssue, joinPath } from "./issues";
import { didYouMean } from "./suggest";

/** The HTTP routers whose flags a router table's `extra` sets. */
export type HttpRouterType = "vllm-router" | "sglang-router";

/*
 * Each router's flags, from its vendored manifest: vllm-router's are the flags every build of it
 * accepts (components/upstream/vllm-router.json: the pinned 0.1.17 and PrimeIntellect's fork alike),
 * so a flag set here works whichever release runs; sglang-router's are the pinned 0.3.2's. Read on
 * the first router table with extra flags.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
const MANIFESTS: Record<HttpRouterType, () => { source: string; flags: Record<string, FlagValueSpec> }> = {
  "vllm-router": () => require("../upstream/vllm-router.json"),
  "sglang-router": () => require("../upstream/sglang-router.json"),
};
/* eslint-enable @typescript-eslint/no-require-imports */

/** `retry_max_retries` -> `--retry-max-retries`: the spelling a router extra key is emitted as. */
export const routerFlagName = (key: string): string => "--" + key.replace(/_/g, "-");

/** Who controls a router flag instead of `extra`. */
type Owner = FlagOwner;

const WORKERS = "the planner gives the router its workers";
const SECRET = "a secret: stack files and rendered scripts carry none";

/**
 * The router flags the planner emits or that contradict its plan (plan/router-plan.ts
 * httpRouterPlan), by snake_case name, each with the key that controls it or why none does. A flag
 * only one router has is harmless in the other's list.
 */
const ROUTER_OWNED: Record<string, Owner> = {
  policy: { key: "router.policy" },
  host: { key: "server.host" },
  port: { key: "server.port" },
  request_timeout_secs: { key: "router.request_timeout_secs" },
  worker_urls: { why: WORKERS },
  prefill: { why: WORKERS },
  decode: { why: WORKERS },
  vllm_pd_disaggregation: { key: "deployment.type", why: "P/D mode follows the deployment" },
  pd_disaggregation: { key: "deployment.type", why: "P/D mode follows the deployment" },
  service_discovery: { why: WORKERS },
  service_discovery_namespace: { why: WORKERS },
  service_discovery_port: { why: WORKERS },
  selector: { why: WORKERS },
  prefill_selector: { why: WORKERS },
  decode_selector: { why: WORKERS },
  intra_node_data_parallel_size: { why: "computed by the planner from the deployment" },
  request_id_headers: { why: "the planner routes sessions by X-Session-ID, which trainers send" },
  prometheus_host: { why: "the planner serves the router's metrics on every interface" },
  prometheus_port: { key: "server.port", why: "the metrics port is planned from the server port" },
  worker_startup_timeout_secs: { why: "the planner waits for its engines as long as an engine may take to be ready" },
  worker_startup_check_interval: { why: "the planner checks its engines every second" },
  api_key: {
    why: "API keys are Pulumi config secrets (pulumi config set --secret apiKey ...), never stack-file values",
  },
  control_plane_api_keys: { why: SECRET },
  oracle_password: { why: SECRET },
  postgres_db_url: { why: `${SECRET} (a database URL may hold a password)` },
  redis_url: { why: `${SECRET} (a Redis URL may hold a password)` },
  help: { why: "it prints the router's help and exits" },
};

/**
 * Flags the planner sets only when `extra` does not: its log level, and in P/D mode vllm-router's
 * health checks (router-plan.ts). The user's value replaces the planner's.
 */
export const ROUTER_PLANNER_DEFAULTS: readonly string[] = [
  "log_level",
  "health_check_interval_secs",
  "health_failure_threshold",
];

/**
 * Checks a router table's `extra` against the router's flag manifest, as checkVllmExtra does
 * vllm_extra: unknown flags refused with a did-you-mean, values against the flag's type and choices,
 * the flags the planner owns refused naming the key that controls them, a flag given twice (`a_b`
 * and `a-b`) refused. Returns the entries by snake_case name and every problem found (`path`: the
 * table as the user wrote it; `userPath` spells an owning key as the file does).
 */
export function checkRouterExtra(
  router: HttpRouterType,
  extra: Record<string, unknown>,
  path: string,
  userPath: (canonical: string) => string = (c) => c,
): { values: Record<string, ExtraValue>; issues: ConfigIssue[] } {
  const values: Record<string, ExtraValue> = {};
  const issues: ConfigIssue[] = [];
  if (Object.keys(extra).length === 0) return { values, issues };
  const manifest = MANIFESTS[router]();
  const names = Object.keys(manifest.flags).map((f) => f.slice(2).replace(/-/g, "_"));
  const release = /^\S+ \S+/.exec(manifest.source)?.[0] ?? router;
  const seen = new Map<string, string>();
  for (const [rawKey, value] of Object.entries(extra)) {
    const key = rawKey.replace(/-/g, "_");
    const at = joinPath(path, rawKey);
    const owner = ROUTER_OWNED[key];
    if (owner) {
      issues.push({ path: at, message: ownedFlagMessage("extra", owner, userPath) });
      continue;
    }
    const spec = manifest.flags[routerFlagName(key)];
    if (!spec) {
      const which = router === "vllm-router" ? "a flag every vllm-router release accepts" : `a flag of ${release}`;
      issues.push({ path: at, message: `"${rawKey}" is not ${which}${didYouMean(key, names)}` });
      continue;
    }
    const first = seen.get(key);
    if (first !== undefined) {
      issues.push({ path: at, message: `sets ${routerFlagName(key)} again (${first} already does)` });
      continue;
    }
    seen.set(key, rawKey);
    const checked = checkFlagValue(value, spec, router);
    if (typeof checked === "string") issues.push({ path: at, message: `${checked} (flag ${routerFlagName(key)})` });
    else values[key] = checked.value;
  }
  return { values, issues };
}

/** `--flag value` tokens for one checked extra entry: switches bare, lists spread. */
export function routerFlagArgs(key: string, value: ExtraValue): string[] {
  const flag = routerFlagName(key);
  if (value === true) return [flag];
  if (Array.isArray(value)) return [flag, ...value.map(String)];
  if (typeof value === "object") return [flag, JSON.stringify(value)];
  return [flag, String(value)];
}
