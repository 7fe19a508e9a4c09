/**
 * Invalid-input corpus: every file under test/fixtures/invalid/ is a stack file that must be
 * rejected. Each one states what the rejection must look like in its leading comments:
 *
 *   # expect-path: <dotted TOML path as the user wrote it>   (`<file>` = the whole file, path "")
 *   # expect-message: <fragment, matched case-insensitively against the issue messages>
 *
 * Every expected path must be the path of some reported issue and every fragment must occur in
 * some issue message, all from ONE load (the loader reports every problem at once). The same
 * fixtures go through the CLI (`bin/plan.ts` main) in-process, and three through a real subprocess
 * (the compiled CLI, `node dist/bin/plan.js`, as `npm run plan` runs it).
 *
 * Fixtures that expose a loader bug are listed in GAPS and run with `it.fails`, so the suite stays
 * green while the bug exists and turns red (asking for the entry to be removed) once it is fixed.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { main } from "../../bin/plan";
import { ConfigError, ConfigIssue, loadConfigText, ruleNames } from "../../components/config";
import { loadStackText } from "../../components/config/load";
import { runBuiltCli } from "../helpers";
import { FIXTURE_LIST, FIXTURES, parseHeader, type Fixture } from "./invalid-corpus";

const ROOT = path.resolve(__dirname, "..", "..");
const STACKS = path.join(ROOT, "stacks");

const fixture = (name: string): Fixture => {
  const f = FIXTURE_LIST.find((x) => x.name === name);
  if (!f) throw new Error(`no fixture ${name}`);
  return f;
};

/**
 * Fixtures that SHOULD be rejected as their header says, but are not (or are rejected with the
 * wrong path/message) because of a bug or gap in components/config. Each runs as `it.fails`.
 */
const GAPS: Record<string, string> = {};

/** Which fixtures exercise each rule of components/config/rules.ts RULES (checked below). */
const RULE_COVERAGE: Record<string, string[]> = {
  "llm-d cannot return routed experts": [
    "rule-llmd-routed-experts",
    "rule-llmd-trainer-router-replay",
    "rule-llmd-trainer-replay-overrides-false",
    "multi-rl-schema-and-rules",
  ],
  "router replay excludes KV offload": ["rule-router-replay-kv-offload", "rule-router-replay-trainer-kv-offload"],
  "llm-d needs a multi-node shape": ["rule-llmd-single-node", "rule-llmd-single-node-rl"],
  "multi-node needs a router": ["rule-multi-node-router-none", "rule-disaggregated-router-none"],
  "the router release serves the policy": [
    "rule-router-release-policy",
    "rule-router-release-least-loaded-rl",
    "rule-router-release-policy-prime",
    "rule-router-release-policy-prime-rl",
  ],
  "known llm-d scorers": [
    "rule-llmd-unknown-scorer",
    "rule-llmd-unknown-prefill-scorer",
    "rule-llmd-unknown-decode-scorer",
    "multi-rl-schema-and-rules",
  ],
  "protected env vars": [
    "rule-protected-env-vars",
    "rule-credential-env-vars",
    "multi-rules-only",
    "multi-standalone-schema-and-rules",
  ],
  "protected prefill env vars": ["rule-protected-prefill-env-vars", "rule-credential-pd-env-vars"],
  "protected decode env vars": ["rule-protected-decode-env-vars", "rule-credential-pd-env-vars"],
  "tensor parallelism fits a node": [
    "rule-tp-exceeds-gpus-per-node",
    "rule-tp-exceeds-gpus-per-node-rl",
    "multi-rl-schema-and-rules",
  ],
  "tensor parallelism divides the attention heads": ["rule-tp-attention-heads", "rule-tp-kv-heads-prime"],
  "tp x dp fits a node": [
    "rule-tp-dp-single-node",
    "rule-tp-dp-multi-replica",
    "rule-tp-dp-disaggregated",
    "multi-rules-only",
  ],
  "wide-EP fills every GPU of its nodes": [
    "rule-wide-ep-dp-not-divisible",
    "rule-wide-ep-dp-per-node-too-large",
    "rule-wide-ep-dp-leaves-gpus-idle",
    "rule-wide-ep-tp-not-dividing-node",
  ],
  "offload forces prefix caching": ["rule-offload-prefix-caching-false", "multi-rules-only"],
  "llm-d P/D on Kubernetes shares one target port": ["rule-k8s-llmd-sidecar-port"],
  "dry_run is a SLURM notion": ["rule-dry-run-kubernetes", "multi-kubernetes"],
  "vllm-router on Kubernetes needs a router image": ["rule-k8s-vllm-router-image"],
  "sglang-router on Kubernetes needs a router image": ["rule-k8s-sglang-router-image"],
  "SGLang's tool-call parsers": ["rule-sglang-tool-parser"],
  "SGLang's reasoning parsers": ["rule-sglang-reasoning-parser"],
  "SGLang is served behind sglang-router": ["rule-sglang-vllm-router"],
  "sglang-router fronts SGLang": ["rule-sglang-router-vllm"],
  "prime-rl's renderer runs in prime-rl's server": ["rule-prime-renderer-stock-vllm"],
  "prime-rl's sampling-mask logprobs run in prime-rl's server": ["rule-prime-mask-logprobs-stock-vllm"],
  "prime-rl's FP8 weight patches and vLLM plugins run in prime-rl's server": ["rule-prime-fp8-patch-stock-vllm"],
  "sglang-router policy": ["rule-sglang-router-policy"],
  "KV offload tiers are vLLM connectors": ["rule-sglang-kv-offload"],
  "vllm_extra is vLLM's": ["rule-sglang-vllm-extra"],
  "sglang_extra is SGLang's": ["rule-sglang-extra-on-vllm"],
  "dual batch overlap is vLLM's": ["rule-sglang-dbo"],
  "router replay is vLLM's": ["rule-sglang-routed-experts"],
  "an SGLang server spans nodes with expert parallelism": ["rule-sglang-dense-spanning"],
  "SGLang runs one server per node": ["rule-sglang-per-rank"],
  "vLLM's P/D moves KV over NIXL": ["rule-vllm-pd-mooncake-transfer"],
  "one KV connector: the user's or the planner's": [
    "rule-own-kv-connector-with-offload",
    "rule-own-kv-connector-with-pd-prime",
  ],
  "monitoring labels need monitoring": ["rule-k8s-monitoring-labels"],
  "a namespace the fleet creates holds nothing it does not create": [
    "rule-k8s-pvc-in-created-namespace",
    "rule-k8s-refs-in-own-namespace",
    "rule-k8s-compile-cache-in-created-namespace",
  ],
  "the shared compile cache is written in the binary format": ["rule-compile-cache-unpacked"],
  "cross-pod DeepEP on Kubernetes needs the RDMA fabric": [
    "rule-k8s-wide-ep-deepep-no-rdma",
    "rule-k8s-pd-deepep-no-rdma",
  ],
  "Mooncake over RDMA on Kubernetes needs the RDMA fabric": ["rule-k8s-mooncake-rdma-no-rdma"],
  "LMCache offload on Kubernetes needs an LMCache image": ["rule-k8s-lmcache-no-image"],
  "kubernetes.pod_labels cannot replace the fleet's labels": ["rule-k8s-fabric-fleet-names"],
  "kubernetes.pod_annotations cannot replace the fleet's annotations": ["rule-k8s-fabric-fleet-names"],
  "kubernetes.extra_resources adds resources the fleet does not request": ["rule-k8s-fabric-fleet-names"],
  "kubernetes.env sets only what the fleet does not": ["rule-k8s-fabric-fleet-names"],
  "per-rank engines each serve their API": ["rule-headless-per-rank"],
  "headless only for wide-EP": ["rule-headless-single-node", "rule-headless-multi-replica", "multi-rules-only"],
  "P/D sets all2all per role": ["rule-all2all-disaggregated"],
  "EPLB needs expert parallelism": ["rule-eplb-without-ep", "multi-rules-only", "multi-standalone-schema-and-rules"],
  "LoRA rank vLLM accepts": ["rule-lora-rank-too-large"],
  "LoRA keys need enable_lora": [
    "rule-max-loras-without-enable-lora",
    "rule-max-lora-rank-without-enable-lora",
    "multi-rules-only",
  ],
  "RL island size matches": ["rule-rl-num-infer-nodes-mismatch", "rule-rl-num-infer-nodes-disaggregated"],
  "RL single node holds one island": ["rule-rl-single-node-islands", "rule-rl-single-node-multi-node-inference"],
  "RL single node: trainer and inference GPUs fit the node": ["rule-rl-single-node-gpu-count"],
  "RL single node: inference GPUs divide by tp": ["rule-rl-single-node-infer-gpus-tp"],
  "ports do not collide": [
    "rule-port-backend-equals-server",
    "rule-port-decode-sidecar-equals-decode",
    "rule-port-router-metrics-overflow",
    "rule-port-prefill-equals-server",
    "rule-port-backend-on-dp-rpc",
    "rule-port-server-on-mooncake-metadata",
    "multi-ports-and-ranges",
    "rule-port-per-rank-range",
  ],
};

/** Checks in normalise.ts / the engines' flag checks (plan/engines/<name>/config/flags.ts) / load.ts (not in RULES), for the same bookkeeping. */
const CHECK_COVERAGE: Record<string, string[]> = {
  "normalise: disk-only offload": [
    "check-offload-disk-only",
    "check-offload-disk-only-rl",
    "multi-targets-and-normalise",
  ],
  "normalise: cpu tier without num_bytes": ["check-offload-cpu-without-num-bytes"],
  "normalise: disk tier without path": ["check-offload-disk-without-path"],
  "normalise: missing model": ["check-missing-model", "check-missing-model-rl"],
  "normalise: RL model name mismatch": ["check-rl-model-name-mismatch"],
  "normalise: RL gpus_per_node conflict": ["check-rl-gpus-per-node-conflict"],
  "normalise: slurm.output_dir conflict": ["check-slurm-output-dir-conflict", "multi-targets-and-normalise"],
  "normalise: both [slurm] and [kubernetes]": ["check-slurm-and-kubernetes"],
  "normalise: [local] beside another target": ["check-local-and-slurm", "check-local-and-kubernetes-rl"],
  "normalise: local.device = cpu with local.gpus": ["check-local-cpu-with-gpus"],
  "vllm-flags: unknown flag (did you mean)": [
    "extra-unknown-flag-did-you-mean",
    "extra-unknown-flag-kebab-rl",
    "extra-unknown-flag-no-hint",
  ],
  "vllm-flags: planner-owned keys": ["extra-planner-owned-keys", "extra-planner-owned-rl"],
  "vllm-flags: bool": ["extra-bool-wrong-type", "extra-bool-false-not-negatable"],
  "vllm-flags: int": ["extra-int-wrong-type"],
  "vllm-flags: float": ["extra-float-wrong-type"],
  "vllm-flags: choice": ["extra-choice-invalid"],
  "vllm-flags: json": ["extra-json-invalid", "extra-json-scalar-string"],
  "vllm-flags: list": ["extra-list-invalid", "extra-list-int-items", "extra-list-choices"],
  "vllm-flags: str (empty, NUL)": ["extra-str-empty-and-nul"],
  "load: RL-root keys belong under [inference]": ["rl-root-keys-belong-under-inference", "multi-rl-schema-and-rules"],
  "load: RL-only keys in a standalone file": ["standalone-rl-only-keys", "multi-targets-and-normalise"],
  "toml: syntax errors carry line/column": [
    "toml-unclosed-string",
    "toml-duplicate-key",
    "toml-bad-table-header",
    "toml-duplicate-table",
    "toml-bare-value",
    "toml-duplicate-key-later-table",
    "toml-lookalike-bare-key",
    "toml-curly-quotes",
    "toml-lone-carriage-return",
  ],
  "normalise: model name near a catalog entry": [
    "model-name-case-slip",
    "model-name-case-slip-prime",
    "model-name-vec-inf",
    "model-name-vec-inf-short",
  ],
};

function load(f: Fixture): ConfigIssue[] {
  try {
    loadConfigText(f.text, f.file);
  } catch (err) {
    expect(err, `${f.name} threw something other than ConfigError`).toBeInstanceOf(ConfigError);
    return (err as ConfigError).issues;
  }
  throw new Error(`${f.name} was accepted, but it must be rejected`);
}

function describeIssues(issues: ConfigIssue[]): string {
  return issues.map((i) => `  ${JSON.stringify(i.path)}: ${i.message}`).join("\n");
}

function assertExpectations(f: Fixture, issues: ConfigIssue[]): void {
  const seen = describeIssues(issues);
  expect(issues.length, `${f.name}: no issues`).toBeGreaterThan(0);
  for (const i of issues) {
    expect(typeof i.path).toBe("string");
    expect(i.message.trim().length, `${f.name}: empty message at ${i.path}`).toBeGreaterThan(0);
  }
  for (const p of f.paths) {
    expect(
      issues.some((i) => i.path === p),
      `${f.name}: no issue at path ${JSON.stringify(p)}; got:\n${seen}`,
    ).toBe(true);
  }
  for (const m of f.messages) {
    expect(
      issues.some((i) => i.message.toLowerCase().includes(m.toLowerCase())),
      `${f.name}: no message contains ${JSON.stringify(m)}; got:\n${seen}`,
    ).toBe(true);
  }
  // Syntax errors carry a position.
  for (const i of issues.filter((x) => /invalid TOML/i.test(x.message))) {
    expect(i.path).toBe("");
    expect(i.line, `${f.name}: syntax error without a line`).toBeTypeOf("number");
    expect(i.line!).toBeGreaterThanOrEqual(1);
    expect(i.column).toBeTypeOf("number");
  }
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The CLI prints `  - <path>[ (line L, column C)]: <message>` per issue; `<file>` for "". */
function stderrNamesPath(stderr: string, p: string): boolean {
  return new RegExp(`^  - ${escapeRe(p || "<file>")}( \\(line \\d+, column \\d+\\))?: `, "mu").test(stderr);
}

function runCli(args: string[]): { code: number; stdout: string; stderr: string } {
  let stdout = "";
  let stderr = "";
  const out = vi.spyOn(process.stdout, "write").mockImplementation(((chunk: unknown) => {
    stdout += String(chunk);
    return true;
  }) as typeof process.stdout.write);
  const err = vi.spyOn(process.stderr, "write").mockImplementation(((chunk: unknown) => {
    stderr += String(chunk);
    return true;
  }) as typeof process.stderr.write);
  try {
    const code = main(args);
    return { code, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("invalid stack corpus: headers", () => {
  it("has at least 150 fixtures, each with >= 1 expect-path and >= 1 expect-message", () => {
    expect(FIXTURE_LIST.length).toBeGreaterThanOrEqual(150);
    for (const f of FIXTURE_LIST) {
      expect(f.paths.length, `${f.name} has no # expect-path`).toBeGreaterThanOrEqual(1);
      expect(f.messages.length, `${f.name} has no # expect-message`).toBeGreaterThanOrEqual(1);
    }
  });

  it("has no malformed expect lines (a typo would silently drop an expectation)", () => {
    for (const f of FIXTURE_LIST) expect(parseHeader(f.text).malformed, f.name).toEqual([]);
  });

  it("parses <file> as the whole-file path and keeps several lines of each kind", () => {
    const h = parseHeader(
      "# x\n# expect-path: <file>\n# expect-path: a.b\n# expect-message: one\n# expect-message: two\n[t]\n# expect-path: ignored\n",
    );
    expect(h).toEqual({ paths: ["", "a.b"], messages: ["one", "two"], malformed: [] });
  });

  it("has several fixtures with multiple independent errors", () => {
    const multi = FIXTURE_LIST.filter((f) => new Set(f.paths).size >= 3);
    expect(multi.length).toBeGreaterThanOrEqual(5);
  });

  it("covers every rule (ruleNames: the shared ones, every target's and the engines') with an existing fixture", () => {
    for (const rule of ruleNames()) {
      expect(RULE_COVERAGE[rule], `rule "${rule}" has no fixture`).toBeDefined();
      expect(RULE_COVERAGE[rule].length).toBeGreaterThan(0);
    }
    for (const files of [...Object.values(RULE_COVERAGE), ...Object.values(CHECK_COVERAGE)]) {
      for (const name of files)
        expect(fs.existsSync(path.join(FIXTURES, `${name}.toml`)), `${name}.toml missing`).toBe(true);
    }
  });

  it("lists only existing fixtures as GAPs", () => {
    for (const name of Object.keys(GAPS)) expect(fs.existsSync(path.join(FIXTURES, name)), name).toBe(true);
  });
});

describe("positive control: the shipped stacks load", () => {
  const stacks = fs
    .readdirSync(STACKS)
    .filter((f) => f.endsWith(".toml"))
    .sort();

  it("finds the example stacks", () => {
    expect(stacks.length).toBeGreaterThan(0);
  });

  for (const name of stacks) {
    it(`${name} loads and plans`, () => {
      const file = path.join(STACKS, name);
      expect(() => loadStackText(fs.readFileSync(file, "utf8"), file)).not.toThrow();
      const r = runCli([file]);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(r.stdout.length).toBeGreaterThan(0);
    });
  }
});

describe("invalid stack corpus: every fixture is rejected as its header says", () => {
  for (const f of FIXTURE_LIST) {
    const gap = GAPS[f.name];
    const test = gap ? it.fails : it;
    test(gap ? `${f.name} [GAP: ${gap}]` : f.name, () => {
      // 1. The loader: one ConfigError carrying every expected issue.
      assertExpectations(f, load(f));

      // 2. The CLI in-process: exit 2, nothing on stdout, every expected path on stderr.
      const r = runCli([f.file]);
      expect(r.code, `${f.name}: CLI exit code`).toBe(2);
      expect(r.stdout, `${f.name}: CLI wrote to stdout`).toBe("");
      expect(r.stderr).toMatch(/\d+ problems?/);
      for (const p of f.paths) {
        expect(stderrNamesPath(r.stderr, p), `${f.name}: stderr does not name ${JSON.stringify(p)}:\n${r.stderr}`).toBe(
          true,
        );
      }
      if (f.messages.some((m) => /invalid TOML/i.test(m))) expect(r.stderr).toMatch(/\(line \d+, column \d+\)/);
    });
  }
});

describe("the real CLI as a subprocess", () => {
  const cases = ["toml-unclosed-string.toml", "multi-rl-schema-and-rules.toml", "rule-llmd-trainer-router-replay.toml"];
  for (const name of cases) {
    it(`node dist/bin/plan.js ${name} exits 2 and lists the problems on stderr`, () => {
      const f = fixture(name);
      const r = runBuiltCli("plan", [f.file]);
      expect(r.error).toBeUndefined();
      expect(r.status, r.stderr).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain(`${f.file}: `);
      for (const p of f.paths)
        expect(stderrNamesPath(r.stderr, p), `stderr does not name ${JSON.stringify(p)}:\n${r.stderr}`).toBe(true);
      for (const m of f.messages) expect(r.stderr.toLowerCase()).toContain(m.toLowerCase());
    });
  }
});
