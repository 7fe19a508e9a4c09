import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fixturesDir, vllmServeFile, vllmServeVersions } from "../../bin/sync-upstream";
import {
  BUILTIN_CATALOG,
  ConfigError,
  loadCatalog,
  loadConfigFile,
  loadConfigText,
  lookupModel,
  type CatalogEntry,
} from "../../components/config";
import { compileBuiltinCatalog } from "../../components/config/catalog";
import { buildPlan } from "../../components/planner";
import { parse as parseYaml } from "yaml";
import { issuesOf, load, SLURM } from "../helpers";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "catalog-test-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Writes a file under the temp dir and returns its absolute path. */
function write(rel: string, text: string): string {
  const file = path.join(tmp, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return file;
}

function catalogError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error("expected a ConfigError");
}

const builtin = loadCatalog();
const entries = Object.entries(builtin.models);

describe("the built-in catalog", () => {
  it("parses and holds the built-in models", () => {
    expect(builtin.files).toEqual([BUILTIN_CATALOG]);
    expect(Object.keys(builtin.models)).toEqual([
      "Qwen/Qwen3-8B",
      "Qwen/Qwen3-32B",
      "Qwen/Qwen3-30B-A3B",
      "Qwen/Qwen3-235B-A22B",
      "zai-org/GLM-4.5-Air",
      "PrimeIntellect/INTELLECT-3",
      "meta-llama/Llama-3.1-8B-Instruct",
      "meta-llama/Llama-3.1-70B-Instruct",
      "deepseek-ai/DeepSeek-V3",
    ]);
  });

  it("records config.json facts", () => {
    expect(builtin.models["Qwen/Qwen3-8B"]).toEqual({
      family: "Qwen3",
      type: "LLM",
      aliases: ["qwen3-8b"],
      launch: { tp: 1, max_model_len: 40960, dtype: "bfloat16", tool_call_parser: "hermes", reasoning_parser: "qwen3" },
      arch: {
        params: 8190735360,
        layers: 36,
        hidden_size: 4096,
        attention: "gqa",
        attention_heads: 32,
        kv_heads: 8,
        head_dim: 128,
        vocab_size: 151936,
        max_position_embeddings: 40960,
        torch_dtype: "bfloat16",
      },
    });
    const air = builtin.models["zai-org/GLM-4.5-Air"].arch;
    expect([
      air.layers,
      air.attention_heads,
      air.kv_heads,
      air.head_dim,
      air.experts,
      air.experts_per_token,
      air.vocab_size,
    ]).toEqual([46, 96, 8, 128, 128, 8, 151552]);
    const ds = builtin.models["deepseek-ai/DeepSeek-V3"].arch;
    expect([ds.attention, ds.kv_lora_rank, ds.qk_rope_head_dim, ds.layers, ds.experts, ds.quantization]).toEqual([
      "mla",
      512,
      64,
      61,
      256,
      "fp8",
    ]);
    expect(builtin.models["meta-llama/Llama-3.1-70B-Instruct"].arch.params).toBe(70_553_706_496);
  });

  it("INTELLECT-3 has GLM-4.5-Air's architecture", () => {
    expect(builtin.models["PrimeIntellect/INTELLECT-3"].arch).toEqual(builtin.models["zai-org/GLM-4.5-Air"].arch);
  });

  it.each(entries)("%s: attention facts match its kind", (_id, e) => {
    const a = e.arch;
    if (a.attention === "gqa") {
      expect(a.kv_heads).toBeGreaterThan(0);
      // Every model here has hidden_size a multiple of head_dim, even where heads x head_dim != hidden_size.
      expect(a.hidden_size % a.head_dim!).toBe(0);
      expect(a.kv_lora_rank).toBeUndefined();
    } else {
      expect(a.kv_lora_rank).toBeGreaterThan(0);
      expect(a.qk_rope_head_dim).toBeGreaterThan(0);
      expect(a.kv_heads).toBeUndefined();
    }
    expect(e.launch.max_model_len).toBeLessThanOrEqual(a.max_position_embeddings);
  });

  it.each(entries.filter(([, e]) => e.arch.experts !== undefined))("%s: MoE parameter counts agree", (_id, e) => {
    const a = e.arch as Required<CatalogEntry["arch"]>;
    expect(a.expert_params).toBeLessThan(a.params);
    expect(a.active_params).toBeLessThanOrEqual(a.params);
    // Routed experts are (MoE layers x experts) gate/up/down matrices of hidden_size x moe_intermediate_size.
    expect(a.expert_params % (a.experts * 3 * a.hidden_size)).toBe(0);
    // Per token, everything but the unselected experts runs.
    expect(a.params - a.expert_params + (a.expert_params / a.experts) * a.experts_per_token).toBe(a.active_params);
  });

  /** Weights and one max_model_len sequence of KV cache per GPU, in GB, for a tp x dp layout. */
  function perGpuGB(e: CatalogEntry, tp: number, dp: number): number {
    const a = e.arch;
    const bytes = a.quantization === "fp8" ? 1 : 2;
    const experts = e.launch.enable_expert_parallel ? (a.expert_params ?? 0) : 0;
    const weights = ((a.params - experts) / tp + experts / (tp * dp)) * bytes;
    const kvPerToken =
      a.attention === "gqa"
        ? (2 * a.kv_heads! * a.head_dim!) / Math.min(tp, a.kv_heads!)
        : a.kv_lora_rank! + a.qk_rope_head_dim!;
    return (weights + a.layers * kvPerToken * 2 * e.launch.max_model_len) / 1e9;
  }

  it.each(entries)("%s: launch.tp x dp is the smallest layout that fits 80 GB GPUs", (_id, e) => {
    const { tp, dp = 1 } = e.launch;
    const usable = 80 * 0.9; // vLLM's default gpu_memory_utilization
    expect(perGpuGB(e, tp, dp)).toBeLessThan(usable);
    if (tp * dp > 1) expect(perGpuGB(e, dp > 1 ? tp : tp / 2, dp > 1 ? dp / 2 : 1)).toBeGreaterThan(usable);
  });

  it("parser names are ones the stack already uses or vLLM registers", () => {
    const names = entries
      .flatMap(([, e]) => [e.launch.tool_call_parser, e.launch.reasoning_parser])
      .filter((p): p is string => !!p);
    expect([...new Set(names)].sort()).toEqual([
      "deepseek_r1",
      "deepseek_v3",
      "glm45",
      "hermes",
      "llama3_json",
      "qwen3",
      "qwen3_coder",
    ]);
  });

  it.each(vllmServeVersions())("parser names are registered in vLLM %s's manifest (test/fixtures/upstream)", (v) => {
    const manifest = path.join(fixturesDir, vllmServeFile(v));
    const registered = JSON.parse(fs.readFileSync(manifest, "utf8")).post_parse_validated_values;
    for (const [id, e] of entries) {
      if (e.launch.tool_call_parser) expect(registered["--tool-call-parser"], id).toContain(e.launch.tool_call_parser);
      if (e.launch.reasoning_parser) expect(registered["--reasoning-parser"], id).toContain(e.launch.reasoning_parser);
    }
  });

  it("every alias resolves to its entry", () => {
    expect(lookupModel(builtin, "qwen3-8b")?.id).toBe("Qwen/Qwen3-8B");
    expect(lookupModel(builtin, "glm-4.5-air")?.id).toBe("zai-org/GLM-4.5-Air");
    expect(lookupModel(builtin, "llama3.1-70b")?.id).toBe("meta-llama/Llama-3.1-70B-Instruct");
    expect(lookupModel(builtin, "Qwen/Qwen3-8B")).toMatchObject({
      id: "Qwen/Qwen3-8B",
      family: "Qwen3",
      launch: { tp: 1 },
    });
    expect(lookupModel(builtin, "qwen/qwen3-8b")).toBeUndefined(); // ids are matched exactly
    expect(lookupModel(builtin, "org/unknown")).toBeUndefined();
  });

  it("lookups hand out copies", () => {
    lookupModel(builtin, "qwen3-8b")!.launch.tp = 99;
    expect(lookupModel(builtin, "qwen3-8b")!.launch.tp).toBe(1);
    expect(loadCatalog().models["Qwen/Qwen3-8B"].launch.tp).toBe(1);
  });
});

describe("a user catalog", () => {
  const newModel = `
  my-org/Tiny-1B:
    family: Tiny
    type: LLM
    aliases: [tiny]
    launch: { tp: 1, max_model_len: 8192, dtype: bfloat16 }
    arch:
      params: 1000000000
      layers: 16
      hidden_size: 2048
      attention: gqa
      kv_heads: 4
      head_dim: 64
      vocab_size: 32000
      max_position_embeddings: 8192
      torch_dtype: bfloat16
`;

  it("adds a model", () => {
    const c = loadCatalog(write("add.yaml", `models:${newModel}`));
    expect(c.files).toEqual([BUILTIN_CATALOG, path.join(tmp, "add.yaml")]);
    expect(Object.keys(c.models)).toHaveLength(10);
    expect(lookupModel(c, "tiny")).toMatchObject({
      id: "my-org/Tiny-1B",
      launch: { tp: 1, max_model_len: 8192 },
      arch: { head_dim: 64 },
    });
    expect(lookupModel(c, "Qwen/Qwen3-8B")?.launch.tp).toBe(1);
  });

  it("overrides one field and keeps the rest of the built-in entry", () => {
    const c = loadCatalog(
      write("override.yaml", `models:\n  Qwen/Qwen3-8B:\n    launch:\n      max_model_len: 16384\n`),
    );
    expect(c.models["Qwen/Qwen3-8B"]).toEqual({
      ...builtin.models["Qwen/Qwen3-8B"],
      launch: { ...builtin.models["Qwen/Qwen3-8B"].launch, max_model_len: 16384 },
    });
    expect(c.models["Qwen/Qwen3-8B"].launch).toEqual({
      tp: 1,
      max_model_len: 16384,
      dtype: "bfloat16",
      tool_call_parser: "hermes",
      reasoning_parser: "qwen3",
    });
    expect(loadCatalog().models["Qwen/Qwen3-8B"].launch.max_model_len).toBe(40960); // the built-in one is untouched
  });

  it("merges an entry named by alias, field by field, and adds aliases", () => {
    const c = loadCatalog(
      write(
        "alias.yaml",
        `models:\n  glm-4.5-air:\n    aliases: [air]\n    launch: { tp: 8 }\n    arch: { max_position_embeddings: 65536 }\n`,
      ),
    );
    const air = lookupModel(c, "air")!;
    expect(air.id).toBe("zai-org/GLM-4.5-Air");
    expect(air.aliases).toEqual(["glm-4.5-air", "air"]);
    expect(air.launch).toEqual({
      tp: 8,
      max_model_len: 131072,
      dtype: "bfloat16",
      tool_call_parser: "glm45",
      reasoning_parser: "glm45",
    });
    expect(air.arch).toMatchObject({ max_position_embeddings: 65536, layers: 46, experts: 128 });
    expect(c.models).not.toHaveProperty("glm-4.5-air");
  });

  it("rejects an unknown key with its path and a did-you-mean", () => {
    const file = write("typo.yaml", `models:\n  Qwen/Qwen3-8B:\n    launch:\n      tpp: 2\n`);
    const err = catalogError(() => loadCatalog(file));
    expect(err.source).toBe(file);
    expect(err.issues).toHaveLength(1);
    expect(err.issues[0].path).toBe('models."Qwen/Qwen3-8B".launch.tpp');
    expect(err.issues[0].message).toContain('unknown key "tpp" (did you mean "tp"?)');
    expect(err.message).toContain(file);
  });

  it("rejects an incomplete new model, naming each missing key", () => {
    const err = catalogError(() =>
      loadCatalog(
        write(
          "incomplete.yaml",
          `models:\n  my-org/New:\n    family: New\n    type: LLM\n    launch: { tp: 1, max_model_len: 4096, dtype: auto }\n`,
        ),
      ),
    );
    expect(err.issues.map((i) => i.path)).toEqual(['models."my-org/New".arch']);
    expect(err.issues[0].message).toBe("is required (expected object) (a new model needs a complete entry)");
  });

  it("checks facts that must agree, in the merged entry", () => {
    const file = write(
      "facts.yaml",
      `models:\n  Qwen/Qwen3-8B:\n    arch: { attention: mla }\n  Qwen/Qwen3-30B-A3B:\n    arch: { expert_params: 40000000000 }\n    launch: { tp: 0 }\n`,
    );
    const err = catalogError(() => loadCatalog(file));
    expect(err.issues).toEqual([{ path: 'models."Qwen/Qwen3-30B-A3B".launch.tp', message: "must be at least 1" }]);

    const facts = catalogError(() =>
      loadCatalog(
        write(
          "facts2.yaml",
          `models:\n  Qwen/Qwen3-8B:\n    arch: { attention: mla }\n  Qwen/Qwen3-30B-A3B:\n    arch: { expert_params: 40000000000 }\n`,
        ),
      ),
    );
    expect(facts.issues.map((i) => `${i.path}: ${i.message}`)).toEqual([
      'models."Qwen/Qwen3-8B".arch.kv_lora_rank: is required for attention = "mla" (config.json kv_lora_rank)',
      'models."Qwen/Qwen3-8B".arch.qk_rope_head_dim: is required for attention = "mla" (config.json qk_rope_head_dim)',
      'models."Qwen/Qwen3-8B".arch.kv_heads: applies to attention = "gqa" only',
      'models."Qwen/Qwen3-8B".arch.head_dim: applies to attention = "gqa" only',
      'models."Qwen/Qwen3-30B-A3B".arch.expert_params: 40000000000 must be less than arch.params = 30532122624 (attention and embeddings are not experts)',
    ]);
  });

  it("rejects whole-number facts given as fractions and an alias that names another model", () => {
    const err = catalogError(() =>
      loadCatalog(
        write("counts.yaml", `models:\n  Qwen/Qwen3-8B:\n    arch: { layers: 36.5 }\n    aliases: [qwen3-32b]\n`),
      ),
    );
    expect(err.issues).toEqual([{ path: 'models."Qwen/Qwen3-8B".arch.layers', message: "must be a whole number" }]);
    const alias = catalogError(() =>
      loadCatalog(write("alias-clash.yaml", `models:\n  Qwen/Qwen3-8B:\n    aliases: [qwen3-32b]\n`)),
    );
    expect(alias.issues).toEqual([
      { path: 'models."Qwen/Qwen3-8B".aliases.1', message: '"qwen3-32b" already names "Qwen/Qwen3-32B"' },
    ]);
  });

  it("rejects two keys for one model, a YAML syntax error, and a missing file", () => {
    const twice = catalogError(() =>
      loadCatalog(
        write("twice.yaml", `models:\n  Qwen/Qwen3-8B: { launch: { tp: 2 } }\n  qwen3-8b: { launch: { tp: 4 } }\n`),
      ),
    );
    expect(twice.issues).toEqual([
      {
        path: "models.qwen3-8b",
        message: 'names the same model as models."Qwen/Qwen3-8B" in this file; merge the two entries',
      },
    ]);
    const syntax = catalogError(() => loadCatalog(write("bad.yaml", `models:\n  a: 1\n  a: 2\n`)));
    expect(syntax.issues[0]).toMatchObject({ path: "", line: 3, column: 3 });
    expect(syntax.issues[0].message).toMatch(/^Map keys must be unique/);
    const missing = path.join(tmp, "nope.yaml");
    expect(catalogError(() => loadCatalog(missing)).issues).toEqual([
      { path: "", message: `cannot read ${missing}: ENOENT` },
    ]);
  });
});

describe("stack files naming a catalog model", () => {
  it("get the entry's launch defaults, which do not count as explicit", () => {
    const cfg = load(`[model]\nname = "Qwen/Qwen3-32B"${SLURM}`);
    expect(cfg.model).toEqual({
      name: "Qwen/Qwen3-32B",
      max_model_len: 40960,
      enforce_eager: false,
      dtype: "bfloat16",
      trust_remote_code: false,
      chat_template: undefined,
      tool_call_parser: "hermes",
      reasoning_parser: "qwen3",
    });
    expect(cfg.parallel).toEqual({ tp: 2, dp: 1 });
    expect(cfg.enable_expert_parallel).toBe(false);
    expect([...cfg.explicit].sort()).toEqual(["model", "model.name", "slurm", "slurm.job_name"]);
    expect(cfg.catalog).toMatchObject({ id: "Qwen/Qwen3-32B", family: "Qwen3", arch: { layers: 64, kv_heads: 8 } });
    const argv = buildPlan(cfg, "t").islands[0].engines[0].argv.map(String);
    expect(argv).toEqual(
      expect.arrayContaining([
        "--tensor-parallel-size",
        "2",
        "--max-model-len",
        "40960",
        "--dtype",
        "bfloat16",
        "--tool-call-parser",
        "hermes",
        "--reasoning-parser",
        "qwen3",
      ]),
    );
  });

  it("explicit stack-file values win", () => {
    const cfg = load(
      `[model]\nname = "Qwen/Qwen3-32B"\nmax_model_len = 8192\ndtype = "auto"\nreasoning_parser = "deepseek_r1"\n[parallel]\ntp = 4\ndp = 2${SLURM}`,
    );
    expect(cfg.model).toMatchObject({
      max_model_len: 8192,
      dtype: "auto",
      tool_call_parser: "hermes",
      reasoning_parser: "deepseek_r1",
    });
    expect(cfg.parallel).toEqual({ tp: 4, dp: 2 });
    expect(cfg.explicit.has("parallel.tp")).toBe(true);
    expect(cfg.explicit.has("model.tool_call_parser")).toBe(false);
  });

  it("an alias serves the real id, in either layout", () => {
    const cfg = load(`[model]\nname = "qwen3-8b"${SLURM}`);
    expect(cfg.model.name).toBe("Qwen/Qwen3-8B");
    expect(cfg.notes).toEqual([
      'model.name = "qwen3-8b" is the model catalog\'s alias of Qwen/Qwen3-8B, which is served under that name',
    ]);
    const rl = load(`[inference]\nmodel = "glm-4.5-air"${SLURM}`);
    expect(rl.model.name).toBe("zai-org/GLM-4.5-Air");
    expect(rl.parallel).toEqual({ tp: 4, dp: 1 });
    expect(rl.notes[0]).toMatch(/^inference\.model = "glm-4.5-air" is the model catalog's alias/);
    // The trainer's [model] and [inference] may name the same model by id and alias.
    expect(
      load(`[model]\nname = "intellect-3"\n[inference]\nmodel = "PrimeIntellect/INTELLECT-3"${SLURM}`).model.name,
    ).toBe("PrimeIntellect/INTELLECT-3");
  });

  it("fills expert parallelism and dp, and says so when a rule trips over a catalog default", () => {
    const multi = load(`model = "deepseek-v3"\n[deployment]\ntype = "multi_node"\nnum_nodes = 2${SLURM}`);
    expect([multi.parallel, multi.enable_expert_parallel]).toEqual([{ tp: 8, dp: 2 }, true]);
    expect(issuesOf(`model = "deepseek-v3"${SLURM}`)).toEqual([
      {
        path: "parallel.dp",
        message:
          "tp x dp = 8 x 2 = 16 GPUs exceeds deployment.gpus_per_node = 8: use a multi_node deployment for more GPUs (parallel.dp = 2, parallel.tp = 8 are the model catalog's defaults for deepseek-ai/DeepSeek-V3; set them in the stack file to override)",
      },
    ]);
  });

  it("leaves unknown models as they were", () => {
    const cfg = load(`[model]\nname = "org/unknown"${SLURM}`);
    expect(cfg.parallel).toEqual({ tp: 1, dp: 1 });
    expect(cfg.model).toMatchObject({
      name: "org/unknown",
      max_model_len: undefined,
      dtype: undefined,
      tool_call_parser: undefined,
    });
    expect(cfg.catalog).toBeUndefined();
    expect(cfg.notes).toEqual([]);
  });
});

describe("model_catalog in a stack file", () => {
  const userCatalog = `models:\n  Qwen/Qwen3-8B:\n    launch: { max_model_len: 4096, tp: 2 }\n  my-org/Tiny-1B:\n    family: Tiny\n    type: LLM\n    launch: { tp: 1, max_model_len: 2048, dtype: float16 }\n    arch: { params: 1000000000, layers: 16, hidden_size: 2048, attention: gqa, kv_heads: 4, head_dim: 64, vocab_size: 32000, max_position_embeddings: 2048, torch_dtype: float16 }\n`;
  write("project/catalogs/models.yaml", userCatalog);

  it("is relative to the stack file's directory (loadConfigFile)", () => {
    const stack = write(
      "project/stacks/a.toml",
      `model_catalog = "../catalogs/models.yaml"\n[model]\nname = "Qwen/Qwen3-8B"${SLURM}`,
    );
    const cfg = loadConfigFile(stack);
    expect(cfg.model.max_model_len).toBe(4096);
    expect(cfg.parallel.tp).toBe(2);
    expect(cfg.model.tool_call_parser).toBe("hermes"); // the built-in entry's other fields stay
    const rl = write(
      "project/stacks/rl.toml",
      `model_catalog = "../catalogs/models.yaml"\n[inference]\nmodel = "my-org/Tiny-1B"${SLURM}`,
    );
    expect(loadConfigFile(rl).model).toMatchObject({ name: "my-org/Tiny-1B", max_model_len: 2048, dtype: "float16" });
  });

  it("is relative to the current directory for loadConfigText unless a base directory is given", () => {
    const text = `model_catalog = "catalogs/models.yaml"\n[model]\nname = "my-org/Tiny-1B"${SLURM}`;
    const base = path.join(tmp, "project");
    expect(loadConfigText(text, "t.toml", [], base).model.max_model_len).toBe(2048);
    expect(issuesOf(text)).toEqual([
      {
        path: "model_catalog",
        message: `cannot read ${path.resolve("catalogs/models.yaml")} (a relative path is relative to the stack file's directory, ${process.cwd()})`,
      },
    ]);
  });

  it("reports a bad catalog against the catalog file", () => {
    write("project/catalogs/typo.yaml", `models:\n  qwen3-8b:\n    lanch: { tp: 2 }\n`);
    const err = catalogError(() =>
      loadConfigText(
        `model_catalog = "catalogs/typo.yaml"\n[model]\nname = "m/x"${SLURM}`,
        "t.toml",
        [],
        path.join(tmp, "project"),
      ),
    );
    expect(err.source).toBe(path.join(tmp, "project/catalogs/typo.yaml"));
    expect(err.issues).toEqual([
      {
        path: "models.qwen3-8b.lanch",
        message: expect.stringContaining('unknown key "lanch" (did you mean "launch"?)'),
      },
    ]);
  });

  it("belongs at the top level of an RL file", () => {
    expect(issuesOf(`[inference]\nmodel = "m/x"\nmodel_catalog = "c.yaml"${SLURM}`)).toEqual([
      {
        path: "inference.model_catalog",
        message: '"model_catalog" belongs at the top level of the file, not under [inference]',
      },
    ]);
  });
});

describe("the built-in catalog compiled to JSON (npm run build; plan reads it instead of the YAML)", () => {
  it("holds the YAML's data", () => {
    const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "catalog-json-")), "models.json");
    compileBuiltinCatalog(out);
    expect(JSON.parse(fs.readFileSync(out, "utf8"))).toEqual(parseYaml(fs.readFileSync(BUILTIN_CATALOG, "utf8")));
    fs.rmSync(path.dirname(out), { recursive: true });
  });
});
