import { afterEach, describe, expect, it, vi } from "vitest";
import { ConfigError } from "../../components/config";
import { loadCatalog, lookupModel } from "../../components/config/catalog";
import { GPU_TYPES, gpuTypeFromHint } from "../../components/config/gpu-types";
import { kvBytesPerToken, reserveTotal, weightBytesPerGpu } from "../../components/plan/gpu-memory";
import { planText } from "../../components/report/plan-text";
import { planJson } from "../../components/report/plan-json";
import { issuesOf, load, plan, runPlanCli, SLURM } from "../helpers";
import { drainRpcs, installMocks, setConfig, slurmConfig } from "../program-harness";

// A finished test's outstanding Pulumi RPCs must not reach the next test's mocks.
afterEach(drainRpcs);

const GIB = 1024 ** 3;
const arch = (model: string) => lookupModel(loadCatalog(), model)!.arch;

/** The issues buildPlan refuses a stack with; fails the test if it plans. */
function planIssues(text: string) {
  try {
    plan(text);
  } catch (err) {
    if (err instanceof ConfigError) return err.issues;
    throw err;
  }
  throw new Error("expected the plan to be refused, but it was built");
}

const stack = (model: string, extra = "", deployment = 'type = "single_node"\ngpu_type = "H100"') =>
  `[model]\nname = "${model}"\n${extra}\n[deployment]\n${deployment}\n${SLURM}`;

describe("KV-cache bytes per token", () => {
  it("GQA: layers x KV heads x head_dim x 2 (K and V) x dtype bytes, heads split by tp", () => {
    // Qwen3-8B: 36 layers, 8 KV heads of 128, bf16: 144 KiB per token on one GPU.
    expect(kvBytesPerToken(arch("Qwen/Qwen3-8B"), 2, 1)).toBe(36 * 8 * 128 * 2 * 2);
    // Llama-3.1-70B at tp=4: each GPU keeps 2 of the 8 KV heads of its 80 layers.
    expect(kvBytesPerToken(arch("meta-llama/Llama-3.1-70B-Instruct"), 2, 4)).toBe(80 * 2 * 128 * 2 * 2);
    // More GPUs than KV heads: vLLM replicates, each GPU still keeps one head.
    expect(kvBytesPerToken(arch("Qwen/Qwen3-30B-A3B"), 2, 8)).toBe(48 * 1 * 128 * 2 * 2);
  });

  it("MLA: layers x (kv_lora_rank + qk_rope_head_dim) x dtype bytes, the same on every TP rank", () => {
    const ds = arch("deepseek-ai/DeepSeek-V3");
    expect(kvBytesPerToken(ds, 2, 1)).toBe(61 * (512 + 64) * 2);
    expect(kvBytesPerToken(ds, 2, 8)).toBe(kvBytesPerToken(ds, 2, 1));
    expect(kvBytesPerToken(ds, 1, 8)).toBe(61 * 576);
  });
});

describe("weight bytes per GPU", () => {
  it("dense: parameters x dtype bytes / tp", () => {
    const a = arch("Qwen/Qwen3-8B");
    expect(weightBytesPerGpu(a, 2, false, 1, 1)).toBe(8190735360 * 2);
    expect(weightBytesPerGpu(a, 2, false, 4, 4)).toBe((8190735360 * 2) / 4);
  });

  it("MoE with expert parallelism: routed experts over tp x dp, the rest over tp", () => {
    const a = arch("Qwen/Qwen3-30B-A3B");
    const dense = a.params - a.expert_params!;
    expect(weightBytesPerGpu(a, 2, false, 2, 16)).toBe((dense * 2) / 2 + (a.expert_params! * 2) / 16);
    // Without EP every expert is split by TP like the rest.
    expect(weightBytesPerGpu(a, 2, false, 2, 2)).toBe(a.params);
  });

  it("a quantized checkpoint keeps embeddings and output head in 16 bits", () => {
    const a = arch("deepseek-ai/DeepSeek-V3");
    const embed = 2 * a.vocab_size * a.hidden_size;
    expect(weightBytesPerGpu(a, 1, true, 8, 8)).toBe((a.params - embed + embed * 2) / 8);
  });
});

describe("the plan's memory section", () => {
  it("Qwen3-8B on one H100 at tp=1: weights, KV cache, tokens and max-length sequences per GPU", () => {
    const m = plan(stack("Qwen/Qwen3-8B", "", 'type = "single_node"\ngpu_type = "H100"\ngpus_per_node = 1')).memory!;
    expect(m.gpu).toMatchObject({ type: "H100", from: "deployment.gpu_type", assumed: false });
    expect(m.budgetBytes).toBeCloseTo(GPU_TYPES.find((g) => g.name === "H100")!.bytes * 0.9, 0);
    expect(m.maxModelLen).toBe(40960);
    const [r] = m.roles;
    expect(r).toMatchObject({ role: "replica", tp: 1, dp: 1, weightBytes: 8190735360 * 2, kvBytesPerToken: 147456 });
    expect(r.kvCacheBytes).toBeCloseTo(m.budgetBytes - r.weightBytes - reserveTotal(r.reserve), 0);
    expect(r.kvTokens % 16).toBe(0);
    expect(r.kvTokens).toBe(Math.floor(r.kvCacheBytes / 147456 / 16) * 16);
    expect(r.concurrency).toBeCloseTo(r.kvTokens / 40960, 10);
  });

  it("P/D: prefill and decode replicas of different sizes get their own rows (EP spans each replica)", () => {
    const m = plan(
      stack(
        "Qwen/Qwen3-30B-A3B",
        "[parallel]\ntp = 2",
        'type = "disaggregated"\ngpu_type = "H100"\nnum_prefill_nodes = 1\nnum_decode_nodes = 2',
      ),
    ).memory!;
    expect(m.roles.map((r) => [r.role, r.dp, r.ep])).toEqual([
      ["prefill", 4, 8],
      ["decode", 8, 16],
    ]);
    expect(m.roles[1].weightBytes).toBeLessThan(m.roles[0].weightBytes);
  });

  it("kv_cache_dtype = fp8 halves the bytes per token and doubles the tokens' share of the cache", () => {
    const bf16 = plan(stack("Qwen/Qwen3-8B")).memory!;
    const fp8 = plan(stack("Qwen/Qwen3-8B", '[vllm_extra]\nkv_cache_dtype = "fp8"')).memory!;
    expect(fp8.kvDtype).toBe("fp8");
    expect(fp8.roles[0].kvBytesPerToken * 2).toBe(bf16.roles[0].kvBytesPerToken);
  });

  it("`npm run plan` prints it, and --json carries it", () => {
    const p = plan(stack("Qwen/Qwen3-8B"));
    const cfg = load(stack("Qwen/Qwen3-8B"));
    const text = planText(p, "test.toml");
    expect(text).toMatch(
      /GPU memory per GPU: H100 79\.2 GiB \(deployment\.gpu_type\) x 0\.9 = 71\.3 GiB budget; max_model_len 40960/,
    );
    expect(text).toMatch(/│ replica │ tp=1 dp=1 +│ 15\.3 GiB +│/);
    expect(planJson(p, cfg).memory?.roles[0].kvBytesPerToken).toBe(36 * 8 * 128 * 2 * 2);
  });

  it("a model the catalog does not describe is planned without a memory check, and the plan says so", () => {
    const p = plan(stack("my-org/private-model"));
    expect(p.memory).toBeUndefined();
    expect(p.notes.join("\n")).toMatch(
      /GPU memory not checked: the model catalog has no arch facts for my-org\/private-model/,
    );
  });
});

describe("where the GPU's memory comes from", () => {
  const source = (extra: string, deployment = 'type = "single_node"') =>
    plan(`[model]\nname = "Qwen/Qwen3-8B"\n[deployment]\n${deployment}\n${extra}`).memory!.gpu;

  it("gpu_memory_gib wins, then gpu_type, then the SLURM GRES type, then the Kubernetes product label", () => {
    expect(source(SLURM, 'type = "single_node"\ngpu_type = "H200"\ngpu_memory_gib = 100')).toMatchObject({
      bytes: 100 * GIB,
      from: "deployment.gpu_memory_gib",
    });
    expect(source(SLURM, 'type = "single_node"\ngpu_type = "H200"')).toMatchObject({
      type: "H200",
      from: "deployment.gpu_type",
    });
    expect(source('[slurm]\njob_name = "t"\ngres = "gpu:h200:8"')).toMatchObject({
      type: "H200",
      from: 'slurm.gres = "gpu:h200:8"',
      assumed: false,
    });
    expect(
      source(
        '[kubernetes]\nrouter_image = "r.example/vllm-router:1"\nimage = "vllm/vllm-openai:v0.11.0"\nnode_selector = { "nvidia.com/gpu.product" = "NVIDIA-A100-SXM4-80GB" }',
      ),
    ).toMatchObject({ type: "A100-80GB", assumed: false });
  });

  it("with nothing to go on it assumes an 80 GB H100 and says which keys would name the GPU", () => {
    expect(source('[slurm]\njob_name = "t"\ngres = "gpu:8"')).toMatchObject({
      type: "H100",
      assumed: true,
      from: "assumed; set deployment.gpu_type or deployment.gpu_memory_gib",
    });
  });

  it("product names as SLURM sites and the GPU operator spell them", () => {
    const name = (hint: string) => gpuTypeFromHint(hint)?.name;
    expect(["h100", "H100_80GB", "NVIDIA-H100-80GB-HBM3"].map(name)).toEqual(["H100", "H100", "H100"]);
    expect(["a100", "NVIDIA-A100-SXM4-40GB", "a100_80g", "NVIDIA-A100-SXM4-80GB"].map(name)).toEqual([
      "A100-40GB",
      "A100-40GB",
      "A100-80GB",
      "A100-80GB",
    ]);
    expect(
      ["h200", "NVIDIA-H200", "h20", "NVIDIA-H100-NVL", "gh200", "b200", "NVIDIA-L40S", "tesla"].map(name),
    ).toEqual(["H200", "H200", "H20", "H100-NVL", "GH200", "B200", "L40S", undefined]);
  });

  it("an unknown gpu_type lists the known ones", () => {
    const [i] = issuesOf(stack("Qwen/Qwen3-8B", "", 'type = "single_node"\ngpu_type = "H300"'));
    expect(i.path).toBe("deployment.gpu_type");
    expect(i.message).toContain('must be one of "A10", "A40", "A100-40GB", "A100-80GB", "H100",');
  });
});

describe("plans that cannot load are refused before anything is submitted", () => {
  it("weights over the budget: refused at parallel.tp with the figures", () => {
    const [i, ...rest] = planIssues(
      stack(
        "meta-llama/Llama-3.1-70B-Instruct",
        "[parallel]\ntp = 1",
        'type = "single_node"\ngpu_type = "H100"\ngpus_per_node = 1',
      ),
    );
    expect(rest).toEqual([]);
    expect(i.path).toBe("parallel.tp");
    expect(i.message).toMatch(
      /^meta-llama\/Llama-3\.1-70B-Instruct's weights need 131\.4 GiB per GPU \(bfloat16, tp=1\), more than gpu_memory_utilization 0\.9 x H100 \(79\.2 GiB, deployment\.gpu_type\) = 71\.3 GiB; raise parallel\.tp/,
    );
  });

  it("the same on an RL stack names the keys as that file writes them", () => {
    const rl = `[inference]\nmodel = "meta-llama/Llama-3.1-70B-Instruct"\n[inference.parallel]\ntp = 1\n[inference.deployment]\ntype = "single_node"\ngpu_type = "A100-80GB"\n${SLURM}`;
    const [i] = planIssues(rl);
    expect(i.path).toBe("inference.parallel.tp");
    expect(i.message).toContain(
      "inference.gpu_memory_utilization 0.9 x A100-80GB (79.3 GiB, inference.deployment.gpu_type)",
    );
  });

  it("a KV cache that cannot hold one max_model_len sequence: refused at model.max_model_len, with the length that fits", () => {
    // Llama-3.1-70B at tp=2 on H100s: 65.7 GiB of weights leave ~6 GiB, ~38k tokens of 160 KiB; 131072 cannot fit.
    const [i] = planIssues(
      stack(
        "meta-llama/Llama-3.1-70B-Instruct",
        "[parallel]\ntp = 2",
        'type = "single_node"\ngpu_type = "H100"\ngpus_per_node = 2',
      ),
    );
    expect(i.path).toBe("model.max_model_len");
    expect(i.message).toMatch(
      /^one 131072-token sequence needs 20\.0 GiB of KV cache per GPU \(163840 bytes\/token, bfloat16\), but .* leaves at most \d+\.\d GiB after 65\.7 GiB of weights \(tp=2\); lower model\.max_model_len \((\d+) would fit\)/,
    );
    const fits = Number(/\((\d+) would fit\)/.exec(i.message)![1]);
    // The suggested length really plans.
    expect(() =>
      plan(
        stack(
          "meta-llama/Llama-3.1-70B-Instruct",
          `max_model_len = ${fits}\n[parallel]\ntp = 2`,
          'type = "single_node"\ngpu_type = "H100"\ngpus_per_node = 2',
        ),
      ),
    ).not.toThrow();
  });

  it("a shortfall only the estimated activations cause is a warning, not a refusal", () => {
    const base = (len: number) =>
      stack(
        "meta-llama/Llama-3.1-70B-Instruct",
        `max_model_len = ${len}\n[parallel]\ntp = 2`,
        'type = "single_node"\ngpu_type = "H100"\ngpus_per_node = 2',
      );
    const m = plan(base(1024)).memory!;
    const r = m.roles[0];
    // A length between what the central estimate holds and what the smallest reserve would.
    const len = Math.floor(
      (m.budgetBytes - r.weightBytes - (reserveTotal(r.reserve) + r.reserve.lowBytes) / 2) / r.kvBytesPerToken,
    );
    const p = plan(base(len));
    expect(p.warnings.join("\n")).toMatch(new RegExp(`the KV cache may not hold one ${len}-token sequence`));
  });

  it("on an assumed GPU the same findings are warnings: the GPU may be larger than assumed", () => {
    const p = plan(`[model]\nname = "meta-llama/Llama-3.1-70B-Instruct"\n[parallel]\ntp = 1\n${SLURM}`);
    expect(p.warnings.join("\n")).toMatch(
      /would not load on H100 GPUs \(assumed; name the GPU to make this an error\): parallel\.tp: .*weights need 131\.4 GiB/,
    );
  });

  it("vllm_extra.kv_cache_memory_bytes fixes the KV cache; too small for one sequence is refused there", () => {
    const [i] = planIssues(stack("Qwen/Qwen3-8B", "[vllm_extra]\nkv_cache_memory_bytes = 1073741824"));
    expect(i.path).toBe("vllm_extra.kv_cache_memory_bytes");
    expect(i.message).toMatch(/1\.0 GiB of KV cache hold 7280 tokens, fewer than one 40960-token sequence/);
  });
});

describe("a refusal stops `npm run plan` and the Pulumi program before anything is registered", () => {
  it("the multi-replica stack (prime-rl's INTELLECT-3 example at tp=2) plans on H200s and is refused on H100s", () => {
    const run = runPlanCli;
    const h200 = run(["multi-replica", "--inference.deployment.gpu_type", "H200"]);
    expect(h200.code).toBe(0);
    expect(h200.stdout).toMatch(/GPU memory per GPU: H200 139\.8 GiB \(inference\.deployment\.gpu_type\)/);
    const h100 = run(["multi-replica", "--inference.deployment.gpu_type", "H100"]);
    expect(h100.code).toBe(2);
    expect(h100.stdout).toBe("");
    expect(h100.stderr).toMatch(
      /inference\.parallel\.tp: PrimeIntellect\/INTELLECT-3's weights need 99\.5 GiB per GPU \(bfloat16, tp=2\)/,
    );
  });

  it("the program under mocks throws the ConfigError and registers nothing", async () => {
    const registered = installMocks("memory");
    setConfig(slurmConfig({ stackFile: "multi-replica", overrides: { "inference.deployment.gpu_type": "H100" } }));
    vi.resetModules();
    await expect(import("../../index")).rejects.toThrow(/inference\.parallel\.tp: .*weights need 99\.5 GiB per GPU/);
    expect(registered).toEqual([]);
  });
});
