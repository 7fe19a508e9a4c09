import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { parseOverrides } from "../../components/config";
import { loadConfigText, loadStackText } from "../../components/config/load";
import { autoSetupNames } from "../../components/config/auto-setup";
import { TARGETS } from "../../components/config/target-registry";
import { issuesOf, load, ROOT, SLURM, STACK_NAMES, stackText } from "../helpers";

describe("stack files", () => {
  it.each(STACK_NAMES)("%s loads", (name) => {
    // Every service of a file with [services]; a file without has one.
    expect(loadStackText(stackText(name), name).length).toBeGreaterThan(0);
  });

  it("ships a stack for every shape", () => {
    expect(STACK_NAMES).toEqual(
      expect.arrayContaining([
        "single-node",
        "multi-replica",
        "wide-ep",
        "disaggregated",
        "disaggregated-x3",
        "kv-offload-native",
        "kv-offload-mooncake",
        "llm-d",
      ]),
    );
  });
});

describe("layouts", () => {
  const standalone = `
output_dir = "/shared/out"
enable_expert_parallel = true
[model]
name = "m/x"
max_model_len = 4096
[parallel]
tp = 2
dp = 8
[deployment]
type = "multi_node"
num_nodes = 2
[deployment.router]
policy = "round_robin"
[slurm]
job_name = "j"
`;
  const rl = `
output_dir = "/shared/out"
[inference]
enable_expert_parallel = true
[inference.model]
name = "m/x"
max_model_len = 4096
[inference.parallel]
tp = 2
dp = 8
[inference.deployment]
type = "multi_node"
num_nodes = 2
[inference.deployment.router]
policy = "round_robin"
[slurm]
job_name = "j"
`;

  it("normalise to the same canonical config", () => {
    const a = load(standalone);
    const b = load(rl);
    expect(a.layout).toBe("standalone");
    expect(b.layout).toBe("rl");
    const { layout: _a, explicit: ea, ...restA } = a;
    const { layout: _b, explicit: eb, ...restB } = b;
    expect(restA).toEqual(restB);
    expect([...ea].sort()).toEqual([...eb].sort());
    expect(a.router).toEqual({ type: "vllm-router", policy: "round_robin", release: "vllm-router-0.1.17" });
    expect(a.deployment).toEqual({ type: "multi_node", num_nodes: 2, gpus_per_node: 8 });
  });

  it('accepts the `model = "..."` shorthand in both layouts and the standalone [model] table', () => {
    expect(load(`[inference]\nmodel = "PrimeIntellect/INTELLECT-3"${SLURM}`).model.name).toBe(
      "PrimeIntellect/INTELLECT-3",
    );
    expect(load(`[model]\nname = "Qwen/Qwen3-8B"${SLURM}`).model.name).toBe("Qwen/Qwen3-8B");
    expect(load(`model = "Qwen/Qwen3-8B"${SLURM}`).model.name).toBe("Qwen/Qwen3-8B");
  });

  it("takes the RL model name from the top-level [model] when [inference] names none", () => {
    expect(load(`[model]\nname = "a/b"\n[inference]\n${SLURM}`).model.name).toBe("a/b");
  });

  it("reads the island multiplier from the RL top-level [deployment]", () => {
    expect(load(stackText("disaggregated-x3")).islands).toBe(3);
    expect(load(stackText("disaggregated")).islands).toBe(1);
  });

  it("maps [trainer] enable_router_replay onto routed experts", () => {
    expect(
      load(`[inference]\nmodel = "a/b"\n[trainer]\nenable_router_replay = true${SLURM}`).enable_return_routed_experts,
    ).toBe(true);
  });
});

describe("defaults and auto-setup", () => {
  const base = `[model]\nname = "m/x"${SLURM}`;

  it("fills the schema's defaults (prime-rl's)", () => {
    const c = load(base);
    expect(c.deployment).toEqual({ type: "single_node", gpus_per_node: 8 });
    expect(c.router).toEqual({ type: "vllm-router", policy: "consistent_hash", release: "vllm-router-0.1.17" });
    expect(c.server.port).toBe(8000);
    expect(c.parallel).toEqual({ tp: 1, dp: 1 });
    expect(c.gpu_memory_utilization).toBe(0.9);
    expect(c.enable_prefix_caching).toBeUndefined();
    expect(c.output_dir).toBeUndefined(); // the plan puts each fleet under vllm-fleet/<job name> (slurm/sbatch.ts fleetDir)
    expect(c.target).toMatchObject({ kind: "slurm", job_name: "t", launcher: { type: "vllm" } });
    // Whole nodes only when the engines fill them: the plan decides (slurm/settings.ts exclusiveNodes).
    expect(c.target.kind === "slurm" && c.target.exclusive).toBeUndefined();
  });

  it("puts the engine on server.port + 100 behind a router unless backend_port is set", () => {
    expect(load(base).backend_port).toBe(8100);
    expect(load(`[server]\nport = 9000\n${base}`).backend_port).toBe(9100);
    expect(load(`backend_port = 7000\n${base}`).backend_port).toBe(7000);
    expect(load(`[deployment.router]\ntype = "none"\n${base}`).backend_port).toBe(8000);
  });

  it("turns prefix caching on for KV offload unless the user set it", () => {
    const off = `[kv_cache_offload]\ntype = "native"\n[kv_cache_offload.cpu]\nnum_bytes = 1000\n`;
    expect(load(`${base}\n${off}`).enable_prefix_caching).toBe(true);
    expect(load(`enable_prefix_caching = true\n${base}\n${off}`).explicit.has("enable_prefix_caching")).toBe(true);
    expect(load(`enable_prefix_caching = false\n${base}`).enable_prefix_caching).toBe(false);
  });

  it("enables expert parallelism for P/D unless explicitly disabled", () => {
    const pd = `[deployment]\ntype = "disaggregated"\n${base}`;
    expect(load(pd).enable_expert_parallel).toBe(true);
    expect(load(`enable_expert_parallel = false\n${pd}`).enable_expert_parallel).toBe(false);
    expect(load(base).enable_expert_parallel).toBe(false);
  });

  it("names every auto-setup rule in the schema, beside the key it derives", () => {
    // The shared schema, and each target's table in its own config part.
    const dirs = [
      path.join(ROOT, "components", "config", "schema"),
      ...TARGETS.map((k) => path.join(ROOT, "components", k, "config")),
    ];
    const schema = dirs
      .flatMap((dir) => fs.readdirSync(dir).map((f) => fs.readFileSync(path.join(dir, f), "utf8")))
      .join("\n");
    expect(autoSetupNames().length).toBeGreaterThan(10);
    for (const name of autoSetupNames()) expect(schema, name).toContain(`AUTO_SETUP "${name}"`);
  });

  it("rounds max_lora_rank up to a rank vLLM accepts", () => {
    expect(load(`enable_lora = true\nmax_lora_rank = 20\n${base}`).max_lora_rank).toBe(32);
    expect(load(`enable_lora = true\nmax_lora_rank = 64\n${base}`).max_lora_rank).toBe(64);
  });

  it("the rank rounding and its bound are vLLM's (its engine's config part): SGLang takes the rank as given", () => {
    const sglang = (rank: number) => `engine = "sglang"\nenable_lora = true\nmax_lora_rank = ${rank}\n${base}`;
    expect(load(sglang(20)).max_lora_rank).toBe(20);
    expect(load(sglang(1024)).max_lora_rank).toBe(1024);
    expect(() => load(`enable_lora = true\nmax_lora_rank = 1024\n${base}`)).toThrow(
      /max_lora_rank: must be at most 512/,
    );
  });

  it("records which keys the user set, in canonical terms", () => {
    const c = load(stackText("wide-ep"));
    expect(c.explicit.has("enable_expert_parallel")).toBe(true);
    expect(c.explicit.has("parallel.dp")).toBe(true);
    expect(c.explicit.has("deployment.num_nodes")).toBe(true);
    expect(c.explicit.has("backend_port")).toBe(false);
    expect(c.explicit.has("enable_prefix_caching")).toBe(false);
  });

  it("parses vllm_extra values by the manifest's types", () => {
    const c = load(
      `${base}\n[vllm_extra]\nmax_num_seqs = 256\ncompilation_config = '{"cudagraph_mode":"NONE"}'\nenable-chunked-prefill = true\n`,
    );
    expect(c.vllm_extra).toEqual({
      max_num_seqs: 256,
      compilation_config: { cudagraph_mode: "NONE" },
      enable_chunked_prefill: true,
    });
  });
});

describe("errors", () => {
  it("reports every problem at once with the user's TOML paths", () => {
    const issues = issuesOf(`
[inference]
model = "m/x"
gpu_memory_utilisation = 0.5
[inference.parallel]
tp = 16
[inference.vllm_extra]
max_num_seq = 4
[inference.env_vars]
CUDA_VISIBLE_DEVICES = "0"
[slurm]
partiton = "x"
`);
    const paths = issues.map((i) => i.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        "inference.gpu_memory_utilisation",
        "inference.parallel.tp",
        "inference.vllm_extra.max_num_seq",
        "inference.env_vars.CUDA_VISIBLE_DEVICES",
        "slurm.partiton",
      ]),
    );
    expect(issues.find((i) => i.path === "slurm.partiton")!.message).toContain('did you mean "partition"');
    expect(issues.find((i) => i.path === "inference.vllm_extra.max_num_seq")!.message).toContain(
      'did you mean "max_num_seqs"',
    );
  });

  it("gives line and column for TOML syntax errors", () => {
    const [issue] = issuesOf(`[model]\nname = "x"\n[slurm\n`);
    expect(issue.message).toMatch(/invalid TOML/);
    expect(issue.line).toBe(3);
    expect(issue.column).toBeGreaterThan(0);
  });

  it("does not report rule errors caused by a key it already rejected", () => {
    // deployment.type is invalid, so "llm-d on single_node" (the fallback) must not be reported too.
    const issues = issuesOf(
      `[model]\nname = "m"\n[deployment]\ntype = "multinode"\n[deployment.router]\ntype = "llm-d"${SLURM}`,
    );
    expect(issues.map((i) => i.path)).toEqual(["deployment.type"]);
  });
});

describe("overrides", () => {
  it("applies dotted command-line flags (values as TOML literals, bare flags as true)", () => {
    const { overrides, rest } = parseOverrides([
      "single-node",
      "--server.port",
      "8001",
      "--model.max_model_len",
      "2048",
      "--model.enforce_eager",
      "--gpu-memory-utilization",
      "0.5",
    ]);
    expect(rest).toEqual(["single-node"]);
    const c = loadConfigText(stackText("single-node"), "single-node", overrides);
    expect(c.server.port).toBe(8001);
    expect(c.model.max_model_len).toBe(2048);
    expect(c.model.enforce_eager).toBe(true);
    expect(c.gpu_memory_utilization).toBe(0.5);
  });

  it("validates overridden values like file values", () => {
    const { overrides } = parseOverrides(["--server.port", "99999"]);
    expect(() => loadConfigText(stackText("single-node"), "single-node", overrides)).toThrow(/server\.port/);
  });
});
