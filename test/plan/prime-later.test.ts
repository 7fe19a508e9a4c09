/**
 * prime-rl after 559b447 (config/prime-commit.ts): a file is read with 8324600's defaults when it
 * names that commit or uses a key only 8324600 has; what reaches the engines and the router then is
 * what 8324600's configs/inference.py to_namespace and inference/server.py setup_vllm_env give, and
 * a file written for 559b447 keeps 559b447's meaning.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfigFile, loadConfigText } from "../../components/config";
import { buildPlan } from "../../components/planner";
import { vllmArgvOf } from "../../components/plan/engines/vllm/argv";
import { checkArgv } from "../../components/upstream/check";
import { showValue, type Value } from "../../components/plan/values";
import { ROOT, SLURM } from "../helpers";

const show = (argv: Value[]) => argv.map((v) => showValue(v, 0));
const flag = (argv: Value[], name: string) => {
  const s = show(argv);
  const i = s.indexOf(name);
  return i < 0 ? undefined : s[i + 1];
};
const envOf = (env: [string, Value][]) => new Map(env.map(([k, v]) => [k, showValue(v, 0)]));
const FIXTURES = path.join(ROOT, "test/fixtures/prime-rl");
const fixture = (name: string) => loadConfigFile(path.join(FIXTURES, `${name}.toml`), []);
const text = (body: string) => loadConfigText(body + SLURM, "t.toml");

/** An RL file with the trainer's LoRA, so the engines serve adapters. */
const LORA_RL = `[model]\nname = "Qwen/Qwen3-8B"\n[trainer.model.lora]\nrank = 8\n[orchestrator]\n[deployment]\nnum_train_gpus = 1\nnum_infer_gpus = 1\n[inference]\n`;
const LATER = `[vllm_fleet]\nprime_rl_commit = "8324600"\n`;

describe("a file using a key only prime-rl 8324600 has", () => {
  const cfg = fixture("later-rl-renderer");
  const plan = buildPlan(cfg, "renderer");
  const e = plan.islands[0].engines[0];

  it("is read with 8324600's defaults, and the plan says why", () => {
    expect(cfg.prime_engine?.commit).toBe("8324600");
    expect(text(LORA_RL).prime_engine?.commit).toBeUndefined();
    expect(cfg.notes.join("\n")).toContain("exist only since prime-rl 8324600");
  });

  it("hands the renderer to prime-rl's server as InferenceConfig's own keys, outside vLLM's flags", () => {
    expect(flag(e.argv, "--renderer.name")).toBe("qwen3");
    expect(flag(e.argv, "--renderer.enable-thinking")).toBe("false");
    const served = show(vllmArgvOf(e.argv));
    expect(served.some((a) => a.startsWith("--renderer"))).toBe(false);
    expect(
      checkArgv(
        "vllm",
        vllmArgvOf(e.argv)
          .slice(2)
          .map((v) => showValue(v, 0)),
      ),
    ).toEqual([]);
  });

  it("turns on the scale-out endpoint, prompt token details and the sampling mask", () => {
    const s = show(e.argv);
    for (const f of ["--vllm.enable-scale-out", "--vllm.enable-prompt-tokens-details", "--vllm.return-sampling-mask"])
      expect(s).toContain(f);
    const env = envOf(e.env);
    expect(env.get("VLLM_USE_V2_MODEL_RUNNER")).toBe("1");
    expect(env.get("PRIME_RETURN_SAMPLING_MASK_LOGPROBS")).toBe("1");
  });

  it("routes with sticky_least_loaded on the one release that has it, and says so", () => {
    expect(cfg.router).toMatchObject({
      type: "vllm-router",
      policy: "sticky_least_loaded",
      release: "primeintellect-v0.2.1",
    });
    expect(cfg.notes.join("\n")).toContain('planning with [vllm_fleet] router_release = "primeintellect-v0.2.1"');
    expect(cfg.ignored).toContain("orchestrator");
  });
});

describe("defaults that changed after 559b447", () => {
  it("559b447 (the default): max_loras 8, max_cpu_loras 100, no EP weight filter, consistent_hash, no scale-out flag", () => {
    const cfg = text(LORA_RL);
    const e = buildPlan(cfg, "old").islands[0].engines[0];
    expect(flag(e.argv, "--vllm.max-loras")).toBe("8");
    expect(flag(e.argv, "--vllm.max-cpu-loras")).toBe("100");
    for (const f of [
      "--vllm.enable-ep-weight-filter",
      "--vllm.enable-scale-out",
      "--vllm.enable-prompt-tokens-details",
    ])
      expect(show(e.argv)).not.toContain(f);
    expect(cfg.router).toMatchObject({ policy: "consistent_hash", release: "vllm-router-0.1.17" });
    expect(envOf(e.env).get("VLLM_USE_V2_MODEL_RUNNER")).toBe("0");
  });

  it("8324600: max_loras 1, no max_cpu_loras, EP weight filter on, sticky_least_loaded", () => {
    const cfg = text(LORA_RL + LATER);
    const e = buildPlan(cfg, "new").islands[0].engines[0];
    expect(flag(e.argv, "--vllm.max-loras")).toBe("1");
    expect(show(e.argv)).not.toContain("--vllm.max-cpu-loras");
    expect(show(e.argv)).toContain("--vllm.enable-ep-weight-filter");
    expect(cfg.router).toMatchObject({ policy: "sticky_least_loaded", release: "primeintellect-v0.2.1" });
  });

  it("8324600: the file's own values win (enable_ep_weight_filter = false, enable_scale_out = false, max_cpu_loras)", () => {
    const cfg = text(
      LORA_RL.replace(
        "[inference]\n",
        "[inference.vllm]\nenable_ep_weight_filter = false\nenable_scale_out = false\nmax_cpu_loras = 4\n",
      ) + LATER,
    );
    const s = show(buildPlan(cfg, "own").islands[0].engines[0].argv);
    expect(s).toContain("--vllm.enable-ep-weight-filter");
    expect(flag(s, "--vllm.enable-ep-weight-filter")).toBe("false");
    expect(flag(s, "--vllm.enable-scale-out")).toBe("false");
    expect(flag(s, "--vllm.max-cpu-loras")).toBe("4");
  });

  describe("output_dir from $PRL_OUTPUT_DIR", () => {
    const before = process.env.PRL_OUTPUT_DIR;
    afterEach(() => {
      if (before === undefined) delete process.env.PRL_OUTPUT_DIR;
      else process.env.PRL_OUTPUT_DIR = before;
    });
    const standalone = `[vllm]\nmodel = "Qwen/Qwen3-8B"\n`;
    it("is read by 8324600 when the file sets none, and not by 559b447", () => {
      process.env.PRL_OUTPUT_DIR = "/shared/prl-out";
      expect(text(standalone + LATER).output_dir).toBe("/shared/prl-out");
      expect(text(standalone).output_dir).toBeUndefined();
      expect(text(`output_dir = "/mine"\n` + standalone + LATER).output_dir).toBe("/mine");
    });
  });
});

describe("prime-rl's newer files (89fe468), vendored under test/fixtures/prime-rl/later-*", () => {
  it("the GLM-5.3 P/D profile passes enable_ep_weight_filter and its other extras to every engine", () => {
    const plan = buildPlan(fixture("later-glm-5.3-pd-llmd"), "pd");
    for (const e of plan.islands.flatMap((i) => i.engines)) {
      expect(show(e.argv)).toContain("--enable-ep-weight-filter");
      expect(flag(e.argv, "--safetensors-load-strategy")).toBe("prefetch");
    }
  });

  it("the GLM-4.5-Air profile named for 8324600 plans on the same nodes, with its router default", () => {
    const file = fs.readFileSync(path.join(FIXTURES, "later-glm-4.5-air-6-nodes.toml"), "utf8");
    const old = buildPlan(loadConfigText(file, "old.toml"), "old");
    const cfg = loadConfigText(file + "\n" + LATER, "new.toml");
    const later = buildPlan(cfg, "new");
    expect(later.totals.nodes).toBe(old.totals.nodes);
    expect(cfg.router).toMatchObject({ policy: "sticky_least_loaded", release: "primeintellect-v0.2.1" });
  });
});

describe("8324600's FP8 weight patches, vLLM plugins and fp32 switches", () => {
  const standalone = `[vllm]\nmodel = "Qwen/Qwen3-8B"\n`;
  const engineOf = (body: string) => buildPlan(text(body), "p").islands[0].engines[0];

  it("reach prime-rl's server as the environment its patches read, and make it the default engine", () => {
    const body = `fp8_ue8m0_weight_scales = true\nfp8_stochastic_weight_rounding = true\nvllm_plugins = ["my_pkg.tok:register", "/shared/plugins/p.py:setup"]\n${standalone}`;
    const cfg = text(body);
    expect(cfg.prime_engine).toMatchObject({ commit: "8324600", engine: "prime-rl" });
    const env = envOf(engineOf(body).env);
    expect(env.get("PRIME_FP8_UE8M0_WEIGHT_SCALES")).toBe("1");
    expect(env.get("PRIME_FP8_STOCHASTIC_WEIGHT_ROUNDING")).toBe("1");
    expect(JSON.parse(env.get("PRIME_VLLM_PLUGINS")!)).toEqual(["my_pkg.tok:register", "/shared/plugins/p.py:setup"]);
    expect(envOf(engineOf(standalone).env).has("PRIME_VLLM_PLUGINS")).toBe(false);
  });

  it("are refused with stock vllm serve, or a relative plugin file, naming the key", () => {
    const refused = (body: string) => {
      try {
        text(body);
        return "";
      } catch (e) {
        return String(e);
      }
    };
    expect(refused(`fp8_ue8m0_weight_scales = true\n${standalone}[vllm_fleet]\nengine = "vllm"\n`)).toMatch(
      /fp8_ue8m0_weight_scales[\s\S]*prime-rl/,
    );
    expect(refused(`vllm_plugins = ["plugins/p.py:setup"]\n${standalone}`)).toMatch(/vllm_plugins[\s\S]*absolute/);
    expect(refused(`vllm_plugins = ["no_function"]\n${standalone}`)).toMatch(/vllm_plugins/);
  });

  it("fp32 lm_head and router logits: additional_config at 559b447, hf_overrides at 8324600 (over the user's)", () => {
    const old = show(engineOf(standalone).argv);
    expect(JSON.parse(flag(engineOf(standalone).argv, "--additional-config")!)).toEqual({
      fp32_lm_head: true,
      fp32_router_logits: true,
    });
    expect(old).not.toContain("--hf-overrides");
    const later = engineOf(`${standalone}hf_overrides = { rope_theta = 1000000 }\n${LATER}`).argv;
    expect(JSON.parse(flag(later, "--hf-overrides")!)).toEqual({
      rope_theta: 1000000,
      head_dtype: "float32",
      moe_router_dtype: "float32",
    });
    expect(show(later)).not.toContain("--additional-config");
  });
});
