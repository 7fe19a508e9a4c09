/**
 * checkArgv (components/upstream/check.ts) for SGLang's server (`python3 -m sglang.launch_server`) and
 * router (`python3 -m sglang_router.launch_router`): what the planner will emit passes, and what their
 * argparse parsers refuse is refused. The other programs are covered through every stack's command
 * lines in test/plan/plan.test.ts.
 */
import { describe, expect, it } from "vitest";
import { checkArgv } from "../../components/upstream/check";
import releases from "../../components/upstream/vllm-router-releases.json";
import routerManifest from "../../components/upstream/vllm-router.json";

/** Every flag the SGLang planner emits (issue 29), on one line. */
const ENGINE = [
  "--model-path",
  "/models/tiny",
  "--served-model-name",
  "tiny",
  "--host",
  "0.0.0.0",
  "--port",
  "30000",
  "--tp-size",
  "2",
  "--dp-size",
  "2",
  "--ep-size",
  "2",
  "--enable-dp-attention",
  "--mem-fraction-static",
  "0.85",
  "--context-length",
  "4096",
  "--nnodes",
  "2",
  "--node-rank",
  "1",
  "--dist-init-addr",
  "10.0.0.1:5000",
  "--tool-call-parser",
  "qwen",
  "--reasoning-parser",
  "qwen3",
  "--enable-lora",
  "--lora-paths",
  "a=/loras/a",
  "b=/loras/b",
  "--max-loras-per-batch",
  "4",
  "--api-key",
  "sk-x",
  "--disaggregation-mode",
  "prefill",
  "--disaggregation-transfer-backend",
  "mooncake",
  "--disaggregation-bootstrap-port",
  "8998",
  "--enable-metrics",
  "--trust-remote-code",
  "--chat-template",
  "/t.jinja",
  "--dtype",
  "bfloat16",
];

describe("checkArgv: sglang (python3 -m sglang.launch_server)", () => {
  it("accepts every flag the planner emits", () => {
    expect(checkArgv("sglang", ENGINE)).toEqual([]);
  });

  it("accepts the aliases and --no- forms its parser accepts, and --flag=value", () => {
    expect(
      checkArgv("sglang", [
        "--model",
        "/m",
        "--tensor-parallel-size",
        "2",
        "--data-parallel-size",
        "2",
        "--ep",
        "2",
        "--nccl-init-addr",
        "10.0.0.1:5000",
        "--no-enable-tf32-matmul",
        "--port=30001",
      ]),
    ).toEqual([]);
  });

  it("refuses unknown flags, vLLM's spellings among them", () => {
    expect(checkArgv("sglang", ["--model-path", "/m", "--max-model-len", "4096"])).toEqual([
      "sglang: unknown flag --max-model-len",
    ]);
    expect(checkArgv("sglang", ["--tensor-parallel", "2"])).toEqual(["sglang: unknown flag --tensor-parallel"]);
  });

  it("refuses bad choices, bad numbers, a value on a switch and a missing value", () => {
    expect(checkArgv("sglang", ["--disaggregation-mode", "both"])[0]).toMatch(
      /--disaggregation-mode both is not one of/,
    );
    expect(checkArgv("sglang", ["--disaggregation-transfer-backend", "ucx"])[0]).toMatch(/is not one of/);
    expect(checkArgv("sglang", ["--tool-call-parser", "hermes2"])[0]).toMatch(/is not one of/);
    expect(checkArgv("sglang", ["--tp-size", "two"])).toEqual(["sglang: --tp-size expects an integer, got two"]);
    expect(checkArgv("sglang", ["--mem-fraction-static", "most"])).toEqual([
      "sglang: --mem-fraction-static expects a number, got most",
    ]);
    expect(checkArgv("sglang", ["--enable-metrics=true"])).toEqual(["sglang: --enable-metrics takes no value"]);
    expect(checkArgv("sglang", ["--port"])).toEqual(["sglang: --port needs a value"]);
    expect(checkArgv("sglang", ["--port", "--host", "h"])).toEqual(["sglang: --port needs a value"]);
  });

  it("refuses a positional word (the model must come as --model-path), and checks list items", () => {
    expect(checkArgv("sglang", ["/models/tiny", "--port", "1"])).toEqual([
      "sglang: unexpected argument /models/tiny (it takes no positional)",
    ]);
    expect(checkArgv("sglang", ["--cuda-graph-bs-decode", "1", "2", "4"])).toEqual([]);
    expect(checkArgv("sglang", ["--cuda-graph-bs-decode", "1", "x"])).toEqual([
      "sglang: --cuda-graph-bs-decode expects an integer, got x",
    ]);
  });

  it("reads nargs='?' and nargs='*' as argparse does", () => {
    // --model-checksum takes an optional value: alone, or with the next word.
    expect(checkArgv("sglang", ["--model-checksum", "--port", "1"])).toEqual([]);
    expect(checkArgv("sglang", ["--model-checksum", "abc", "--port", "1"])).toEqual([]);
    // --lora-paths takes zero or more.
    expect(checkArgv("sglang", ["--lora-paths", "--enable-lora"])).toEqual([]);
  });
});

describe("checkArgv: sglang-router (python3 -m sglang_router.launch_router)", () => {
  it("accepts a regular router in front of replicas", () => {
    expect(
      checkArgv("sglang-router", [
        "--host",
        "0.0.0.0",
        "--port",
        "30000",
        "--worker-urls",
        "http://10.0.0.1:30001",
        "http://10.0.0.2:30001",
        "--policy",
        "cache_aware",
        "--prometheus-host",
        "0.0.0.0",
        "--prometheus-port",
        "29000",
        "--worker-startup-timeout-secs",
        "1800",
        "--health-check-endpoint",
        "/health",
        "--api-key",
        "sk-x",
      ]),
    ).toEqual([]);
  });

  it("accepts P/D: --prefill URL [BOOTSTRAP_PORT] and --decode URL, once per worker", () => {
    expect(
      checkArgv("sglang-router", [
        "--pd-disaggregation",
        "--prefill",
        "http://10.0.0.1:30001",
        "8998",
        "--prefill",
        "http://10.0.0.2:30001",
        "none",
        "--decode",
        "http://10.0.0.3:30001",
        "--decode",
        "http://10.0.0.4:30001",
        "--prefill-policy",
        "bucket",
        "--decode-policy",
        "round_robin",
      ]),
    ).toEqual([]);
  });

  it("refuses what its parser refuses", () => {
    expect(checkArgv("sglang-router", ["--policy", "consistent_hash"])[0]).toMatch(
      /--policy consistent_hash is not one of random, round_robin, cache_aware, power_of_two, manual/,
    );
    // bucket is a prefill policy only.
    expect(checkArgv("sglang-router", ["--decode-policy", "bucket"])[0]).toMatch(/is not one of/);
    // --decode takes exactly one URL (nargs=1): a second word is a stray argument.
    expect(checkArgv("sglang-router", ["--decode", "http://d:1", "http://d:2"])).toEqual([
      "sglang-router: unexpected argument http://d:2 (it takes no positional)",
    ]);
    // vllm-router's spelling of the prometheus port is not sglang-router's.
    expect(checkArgv("sglang-router", ["--prometheus-port", "29000", "--intra-node-data-parallel-size", "2"])).toEqual([
      "sglang-router: unknown flag --intra-node-data-parallel-size",
    ]);
    expect(checkArgv("sglang-router", ["--port", "x"])).toEqual(["sglang-router: --port expects an integer, got x"]);
  });

  it("is a different table from vllm-router's", () => {
    expect(checkArgv("vllm-router", ["--pd-disaggregation"])).toEqual([
      "vllm-router: unknown flag --pd-disaggregation",
    ]);
    expect(checkArgv("sglang-router", ["--pd-disaggregation"])).toEqual([]);
  });
});

describe("vllm-router's --policy by release (vllm-router-releases.json)", () => {
  it("takes PrimeIntellect's policies only when that release runs", () => {
    const sticky = ["--policy", "sticky_least_loaded"];
    // The flag manifest is the pinned 0.1.17's: its parser refuses the fork's policies.
    expect(checkArgv("vllm-router", sticky)[0]).toMatch(/--policy sticky_least_loaded is not one of/);
    expect(checkArgv("vllm-router", sticky, "vllm-router-0.1.17")[0]).toMatch(/is not one of/);
    expect(checkArgv("vllm-router", sticky, "primeintellect-v0.2.1")).toEqual([]);
    expect(checkArgv("vllm-router", ["--policy", "least_loaded"], "primeintellect-v0.2.1")).toEqual([]);
    // The release narrows --policy and nothing else.
    expect(checkArgv("vllm-router", ["--policy", "kv_aware"], "primeintellect-v0.2.1")[0]).toMatch(/is not one of/);
    expect(checkArgv("vllm-router", ["--pd-disaggregation"], "primeintellect-v0.2.1")).toEqual([
      "vllm-router: unknown flag --pd-disaggregation",
    ]);
    expect(() => checkArgv("vllm-router", sticky, "v9")).toThrow(/unknown vllm-router release v9/);
  });

  it("lists the pinned 0.1.17's policies as the synced flag manifest does", () => {
    // sync-upstream rewrites vllm-router.json; the release manifest must follow it.
    expect(releases.releases["vllm-router-0.1.17"].policies).toEqual(routerManifest.policies);
    expect(releases.releases[releases.default as keyof typeof releases.releases]).toBeDefined();
    for (const r of Object.values(releases.releases))
      for (const p of r.session_policies) expect(r.policies, p).toContain(p);
  });
});
