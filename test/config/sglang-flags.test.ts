import { describe, expect, it } from "vitest";
import {
  checkSglangExtra,
  SGLANG_PLANNER_OWNED,
  sglangFlagName,
  sglangFlags,
  sglangSource,
} from "../../components/plan/engines/sglang/config/flags";

const check = (extra: Record<string, unknown>) => checkSglangExtra(extra, "sglang_extra");
const messages = (extra: Record<string, unknown>) => check(extra).issues.map((i) => `${i.path}: ${i.message}`);

describe("sglangFlags", () => {
  it("is the pinned SGLang server's flag table", () => {
    expect(sglangSource()).toBe("sglang 0.5.23");
    expect(sglangFlags()["--tp-size"]).toMatchObject({ type: "int", aliases: ["--tensor-parallel-size"] });
    expect(sglangFlags()["--disaggregation-mode"].choices).toEqual(["null", "prefill", "decode"]);
    expect(sglangFlags()["--max-model-len"]).toBeUndefined();
  });

  it("every flag the planner owns is a flag of the manifest (the table names no stale flag)", () => {
    for (const key of Object.keys(SGLANG_PLANNER_OWNED))
      expect(sglangFlags()[sglangFlagName(key)], `${key} is not an SGLang flag`).toBeDefined();
  });
});

describe("checkSglangExtra", () => {
  it("accepts flags of every type, keyed by the flag's own name, with JSON strings parsed", () => {
    const { values, issues } = check({
      "max-running-requests": 64,
      chunked_prefill_size: 4096,
      schedule_conservativeness: 0.5,
      attention_backend: "triton",
      enable_torch_compile: true,
      enable_tf32_matmul: false, // negatable: emitted as --no-enable-tf32-matmul
      preferred_sampling_params: '{"temperature": 0.6}',
      cuda_graph_bs_decode: [1, 2, 4],
      enable_hicache: true, // an alias of --enable-hierarchical-cache
    });
    expect(issues).toEqual([]);
    expect(values).toEqual({
      max_running_requests: 64,
      chunked_prefill_size: 4096,
      schedule_conservativeness: 0.5,
      attention_backend: "triton",
      enable_torch_compile: true,
      enable_tf32_matmul: false,
      preferred_sampling_params: { temperature: 0.6 },
      cuda_graph_bs_decode: [1, 2, 4],
      enable_hierarchical_cache: true,
    });
  });

  it("refuses an unknown key with a did-you-mean, and names vLLM's spelling as not SGLang's", () => {
    expect(messages({ chunked_prefil_size: 4096 })).toEqual([
      'sglang_extra.chunked_prefil_size: "chunked_prefil_size" is not a `python -m sglang.launch_server` flag of sglang 0.5.23 (did you mean "chunked_prefill_size"?)',
    ]);
    expect(messages({ max_num_seqs: 8 })[0]).toMatch(/"max_num_seqs" is not a `python -m sglang.launch_server` flag/);
    expect(messages({ zzzz_qqqq: 1 })[0]).not.toMatch(/did you mean/);
  });

  it("refuses the flags the planner owns, naming the key that controls them, aliases included", () => {
    expect(messages({ tp_size: 4 })).toEqual([
      "sglang_extra.tp_size: cannot be set in sglang_extra: set parallel.tp instead",
    ]);
    expect(messages({ tensor_parallel_size: 4 })).toEqual([
      "sglang_extra.tensor_parallel_size: cannot be set in sglang_extra (an alias of --tp-size): set parallel.tp instead",
    ]);
    expect(messages({ "mem-fraction-static": 0.8 })[0]).toMatch(/set gpu_memory_utilization instead/);
    expect(messages({ model: "/m" })[0]).toMatch(/\(an alias of --model-path\): set model\.name instead/);
    expect(messages({ nnodes: 2 })[0]).toMatch(/computed by the planner from the deployment$/);
    expect(messages({ api_key: "sk" })[0]).toMatch(/Pulumi config secrets/);
    expect(messages({ help: true })[0]).toMatch(/prints the help and exits/);
    // --attention-data-parallel-size: an alias of --attn-dp-size, SGLang's spelling of DP attention.
    expect(messages({ attention_data_parallel_size: 2 })[0]).toMatch(
      /\(an alias of --attn-dp-size\): .*set enable_expert_parallel instead/,
    );
  });

  it("spells the owning key as the file does (userPath), and takes another ownership table", () => {
    const viaUser = checkSglangExtra({ context_length: 4096 }, "inference.sglang_extra", (c) => `inference.${c}`);
    expect(viaUser.issues).toEqual([
      {
        path: "inference.sglang_extra.context_length",
        message: "cannot be set in sglang_extra: set inference.model.max_model_len instead",
      },
    ]);
    const mine = { chunked_prefill_size: { key: "my.key", why: "mine" } };
    expect(checkSglangExtra({ tp_size: 2 }, "x", undefined, mine).issues).toEqual([]);
    expect(checkSglangExtra({ chunked_prefill_size: 2 }, "x", undefined, mine).issues[0].message).toBe(
      "cannot be set in sglang_extra: mine; set my.key instead",
    );
  });

  it("checks values against the flag's type and choices", () => {
    expect(messages({ chunked_prefill_size: "4096" })).toEqual([
      'sglang_extra.chunked_prefill_size: expects a whole number, got string "4096" (flag --chunked-prefill-size)',
    ]);
    expect(messages({ chunked_prefill_size: 1.5 })[0]).toMatch(/expects a whole number/);
    expect(messages({ schedule_conservativeness: "high" })[0]).toMatch(/expects a number/);
    expect(messages({ attention_backend: "magic" })[0]).toMatch(/must be one of .*triton/);
    expect(messages({ attention_backend: "--triton" })[0]).toMatch(/must not start with '-'/);
    expect(messages({ enable_torch_compile: "yes" })[0]).toMatch(/expects true or false/);
    expect(messages({ enable_torch_compile: false })[0]).toMatch(/without a --no- form: remove the key/);
    expect(messages({ preferred_sampling_params: "{not json" })[0]).toMatch(/not valid JSON/);
    expect(messages({ preferred_sampling_params: 3 })[0]).toMatch(/expects a table, an array or JSON/);
    expect(messages({ cuda_graph_bs_decode: [1, "two"] })[0]).toMatch(/expects whole numbers/);
    expect(messages({ cuda_graph_bs_decode: [] })[0]).toMatch(/at least one value/);
  });

  it("refuses --no- forms as keys, deprecated flags (naming the replacement) and a flag set twice", () => {
    expect(messages({ no_enable_tf32_matmul: true })).toEqual([
      "sglang_extra.no_enable_tf32_matmul: write enable_tf32_matmul = false instead of the --no- form",
    ]);
    expect(messages({ disable_cuda_graph: true })).toEqual([
      "sglang_extra.disable_cuda_graph: --disable-cuda-graph is deprecated in sglang 0.5.23: use --cuda-graph-backend-{decode,prefill}=disabled instead",
    ]);
    expect(messages({ enable_hicache: true, enable_hierarchical_cache: true })).toEqual([
      "sglang_extra.enable_hierarchical_cache: sets --enable-hierarchical-cache again (enable_hicache already does)",
    ]);
  });

  it("reports every problem, not just the first", () => {
    const { values, issues } = check({ tp_size: 2, bogus_flag: 1, chunked_prefill_size: "x", page_size: 16 });
    expect(issues.map((i) => i.path)).toEqual([
      "sglang_extra.tp_size",
      "sglang_extra.bogus_flag",
      "sglang_extra.chunked_prefill_size",
    ]);
    expect(values).toEqual({ page_size: 16 });
  });
});
