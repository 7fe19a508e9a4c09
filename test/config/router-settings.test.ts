/**
 * The router's settings (issue 43 item 2): `request_timeout_secs` and the table of extra flags of
 * [deployment.router] reach the HTTP router's command line (vllm-router and sglang-router), checked
 * against the router's own manifest as vllm_extra is against vLLM's; the refusals name the key. In
 * prime-rl's layout, [router] request_timeout_secs, with prime-rl's 14400 only in a file read as
 * prime-rl 8324600. The rendered scripts and objects of each target: router-settings-targets.test.ts.
 */
import { describe, expect, it } from "vitest";
import { checkArgv } from "../../components/upstream/check";
import { resolveValue } from "../../components/plan/values";
import { issuesOf, load, plan, SLURM, stackText } from "../helpers";

const MODEL = `[model]\nname = "Qwen/Qwen3-8B"\n`;

/** The first island's router command line, node references as addresses. */
function routerArgv(text: string): string[] {
  const r = plan(text).islands[0].router!;
  if (r.kind === "llm-d") throw new Error("not an HTTP router");
  return r.argv.map((v) => resolveValue(v, () => "10.0.0.1"));
}

/** The value(s) after each occurrence of `flag`. */
const occurrences = (argv: string[], flag: string) => argv.flatMap((a, i) => (a === flag ? [argv[i + 1]] : []));

const TUNED = `[deployment.router]
request_timeout_secs = 14400
[deployment.router.extra]
retry_max_retries = 3
disable_circuit_breaker = true
health-check-timeout-secs = 20
cors_allowed_origins = ["https://a.example", "https://b.example"]
`;

describe("vllm-router: request_timeout_secs and extra reach its command line", () => {
  it("each flag once, after the planned ones, and the line passes vllm-router's manifest", () => {
    const argv = routerArgv(`${MODEL}${TUNED}${SLURM}`);
    expect(occurrences(argv, "--request-timeout-secs")).toEqual(["14400"]);
    expect(occurrences(argv, "--retry-max-retries")).toEqual(["3"]);
    expect(occurrences(argv, "--health-check-timeout-secs")).toEqual(["20"]);
    expect(argv.filter((a) => a === "--disable-circuit-breaker")).toHaveLength(1);
    const cors = argv.indexOf("--cors-allowed-origins");
    expect(argv.slice(cors + 1, cors + 3)).toEqual(["https://a.example", "https://b.example"]);
    expect(checkArgv("vllm-router", argv.slice(1))).toEqual([]);
  });

  it("without them, neither: the router keeps its own defaults", () => {
    const argv = routerArgv(`${MODEL}${SLURM}`);
    expect(argv).not.toContain("--request-timeout-secs");
    expect(argv).not.toContain("--retry-max-retries");
    expect(load(`${MODEL}${SLURM}`).router).not.toHaveProperty("extra");
  });

  it("a router started before its workers (told them by /add_worker) gets them too", () => {
    const r = plan(`${MODEL}${TUNED}${SLURM}`).islands[0].router!;
    if (r.kind === "llm-d" || !r.lateWorkers) throw new Error("expected a router started before its workers");
    const late = r.lateWorkers.argv.map((v) => resolveValue(v, () => "10.0.0.1"));
    expect(occurrences(late, "--request-timeout-secs")).toEqual(["14400"]);
    expect(occurrences(late, "--retry-max-retries")).toEqual(["3"]);
  });

  it("a flag the planner sets by default (log level, P/D health checks) is replaced, never given twice", () => {
    const argv = routerArgv(`${MODEL}[deployment.router.extra]\nlog_level = "debug"\n${SLURM}`);
    expect(occurrences(argv, "--log-level")).toEqual(["debug"]);
    const pd = stackText("disaggregated-small");
    expect(occurrences(routerArgv(pd), "--health-check-interval-secs")).toEqual(["2"]);
    const tuned = routerArgv(`${pd}\n[inference.deployment.router.extra]\nhealth_check_interval_secs = 10\n`);
    expect(occurrences(tuned, "--health-check-interval-secs")).toEqual(["10"]);
    expect(occurrences(tuned, "--health-failure-threshold")).toEqual(["1"]);
    expect(checkArgv("vllm-router", tuned.slice(1))).toEqual([]);
  });
});

describe("sglang-router: the same keys, against its own manifest", () => {
  const SGLANG = `engine = "sglang"\n${MODEL}[parallel]\ntp = 8\n`;
  it("reach its command line, also when SGLang's engine picks the router (no type given)", () => {
    for (const type of ['type = "sglang-router"\n', ""]) {
      const text = `${SGLANG}[deployment.router]\n${type}request_timeout_secs = 900\n[deployment.router.extra]\nshutdown_grace_period_secs = 30\nretry_max_retries = 2\n${SLURM}`;
      const argv = routerArgv(text);
      expect(argv.slice(0, 3)).toEqual(["python3", "-m", "sglang_router.launch_router"]);
      expect(occurrences(argv, "--request-timeout-secs")).toEqual(["900"]);
      expect(occurrences(argv, "--shutdown-grace-period-secs")).toEqual(["30"]);
      expect(occurrences(argv, "--retry-max-retries")).toEqual(["2"]);
      expect(checkArgv("sglang-router", argv.slice(3))).toEqual([]);
    }
  });

  it("a flag only sglang-router has is refused for vllm-router", () => {
    const issues = issuesOf(`${MODEL}[deployment.router.extra]\nshutdown_grace_period_secs = 30\n${SLURM}`);
    expect(issues).toEqual([
      {
        path: "deployment.router.extra.shutdown_grace_period_secs",
        message: expect.stringContaining("is not a flag every vllm-router release accepts"),
      },
    ]);
  });
});

describe("refusals name the key", () => {
  const refused = (extra: string, layout: "standalone" | "rl" = "standalone") =>
    issuesOf(
      layout === "rl"
        ? `[inference]\nmodel = "Qwen/Qwen3-8B"\n[inference.deployment.router.extra]\n${extra}\n${SLURM}`
        : `${MODEL}[deployment.router.extra]\n${extra}\n${SLURM}`,
    ).map((i) => `${i.path}: ${i.message}`);

  it("an unknown flag, with the flag it resembles", () => {
    expect(refused("retry_max_retrie = 3")).toEqual([
      'deployment.router.extra.retry_max_retrie: "retry_max_retrie" is not a flag every vllm-router release accepts (did you mean "retry_max_retries"?)',
    ]);
  });

  it("a flag the planner owns, pointing at the key that sets it as the file spells it", () => {
    expect(refused("policy = 'round_robin'")).toEqual([
      "deployment.router.extra.policy: cannot be set in extra: set deployment.router.policy instead",
    ]);
    expect(refused("request-timeout-secs = 60", "rl")).toEqual([
      "inference.deployment.router.extra.request-timeout-secs: cannot be set in extra: set inference.deployment.router.request_timeout_secs instead",
    ]);
    expect(refused("port = 9")[0]).toContain("set server.port instead");
    expect(refused("worker_urls = ['http://x:1']")[0]).toContain("the planner gives the router its workers");
    expect(refused("worker_startup_timeout_secs = 5")[0]).toContain("cannot be set in extra");
    expect(refused("api_key = 'sk-x'")[0]).toContain("Pulumi config secrets");
  });

  it("a value of the wrong type, a switch set false, a flag given twice", () => {
    expect(refused("cb_failure_threshold = 'ten'")).toEqual([
      'deployment.router.extra.cb_failure_threshold: expects a whole number, got string "ten" (flag --cb-failure-threshold)',
    ]);
    expect(refused("log_level = 'loud'")[0]).toContain("must be one of debug, info, warn, error");
    expect(refused("disable_retries = false")[0]).toContain("remove the key instead of setting false");
    expect(refused("retry_max_retries = 1\nretry-max-retries = 2")).toEqual([
      "deployment.router.extra.retry-max-retries: sets --retry-max-retries again (retry_max_retries already does)",
    ]);
  });

  it("request_timeout_secs is a whole number of seconds, at least 1", () => {
    for (const bad of ["0", "1.5", '"1h"'])
      expect(
        issuesOf(`${MODEL}[deployment.router]\nrequest_timeout_secs = ${bad}\n${SLURM}`).map((i) => i.path),
      ).toEqual(["deployment.router.request_timeout_secs"]);
  });

  it("llm-d takes neither: its gateway waits without bound, and the planner configures it", () => {
    const llmd = `${MODEL}[deployment]\ntype = "multi_node"\nnum_nodes = 2\n[deployment.router]\ntype = "llm-d"\n`;
    expect(issuesOf(`${llmd}request_timeout_secs = 60\n${SLURM}`)).toEqual([
      {
        path: "deployment.router.request_timeout_secs",
        message: expect.stringContaining("waits on a request without bound"),
      },
    ]);
    expect(issuesOf(`${llmd}extra = { retry_max_retries = 1 }\n${SLURM}`).map((i) => i.path)).toEqual([
      "deployment.router.extra",
    ]);
  });
});

describe("prime-rl's [router] request_timeout_secs", () => {
  const prime = (router: string, release?: string, commit?: string) =>
    `[vllm]\nmodel = "Qwen/Qwen3-8B"\n[deployment]\ntype = "multi_node"\n[router]\n${router}\n${release || commit ? "[vllm_fleet]\n" : ""}${release ? `router_release = "${release}"\n` : ""}${commit ? `prime_rl_commit = "${commit}"\n` : ""}${SLURM}`;
  const primeRl = (router: string) =>
    `[model]\nname = "Qwen/Qwen3-8B"\n[orchestrator]\n[deployment]\ntype = "multi_node"\nnum_train_nodes = 1\n[inference.router]\n${router}\n${SLURM}`;

  it("unset in a file for prime-rl 559b447 (upstream router): no flag, as prime-rl passed none", () => {
    expect(routerArgv(prime('policy = "consistent_hash"'))).not.toContain("--request-timeout-secs");
    expect(load(prime("")).router).not.toHaveProperty("request_timeout_secs", expect.anything());
  });

  it("unset in a file read as prime-rl 8324600 (its VllmRouterConfig default): 14400, with either release", () => {
    for (const release of [undefined, "primeintellect-v0.2.1"]) {
      const argv = routerArgv(prime('policy = "consistent_hash"', release, "8324600"));
      expect(occurrences(argv, "--request-timeout-secs")).toEqual(["14400"]);
    }
  });

  it("unset in a 559b447 file that names PrimeIntellect's v0.2.1: no flag (559b447 passed none)", () => {
    const argv = routerArgv(prime('policy = "sticky_least_loaded"', "primeintellect-v0.2.1"));
    expect(argv).not.toContain("--request-timeout-secs");
  });

  it("set, in either of prime-rl's files, with any release: its value", () => {
    for (const release of [undefined, "primeintellect-v0.2.1"])
      expect(occurrences(routerArgv(prime("request_timeout_secs = 600", release)), "--request-timeout-secs")).toEqual([
        "600",
      ]);
    expect(occurrences(routerArgv(primeRl("request_timeout_secs = 600")), "--request-timeout-secs")).toEqual(["600"]);
  });

  it("refusals name prime-rl's key; its [router] has no extra (prime-rl forbids unknown keys)", () => {
    expect(issuesOf(primeRl("request_timeout_secs = 0")).map((i) => i.path)).toEqual([
      "inference.router.request_timeout_secs",
    ]);
    expect(issuesOf(prime("extra = { retry_max_retries = 1 }")).map((i) => i.path)).toEqual(["router.extra"]);
  });
});
