/**
 * prime-rl's current layout ([vllm], [deployment], [router], ... and whole RL files): every fixture
 * in test/fixtures/prime-rl is planned through `npm run plan` (with `--target <t>` when it states
 * `# expect-target: <t>`) and must get the verdict, node and router counts its leading comments
 * state; `# expect-default: <t>` says which target it plans on with no --target at all (local for a
 * file without [slurm] that prime-rl runs on one machine), with the same counts. Those
 * expectations come from prime-rl's own rules (configs/inference.py, configs/rl.py, its sbatch
 * templates), not from this program's output.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ConfigError, loadConfigFile, loadConfigText, parseOverrides } from "../../components/config";
import { buildPlan } from "../../components/planner";
import { ROOT, runPlanCli } from "../helpers";
import { drainRpcs, installMocks, setConfig, settle, slurmConfig } from "../program-harness";

const DIR = path.join(ROOT, "test/fixtures/prime-rl");
const FIXTURES = fs
  .readdirSync(DIR)
  .filter((f) => f.endsWith(".toml"))
  .sort();

/** `# expect-<what>: value` lines at the top of a fixture. */
function expectations(file: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    if (!line.startsWith("#")) break;
    const m = /^# expect-([a-z]+): (.*)$/.exec(line);
    if (m) (out[m[1]] ??= []).push(m[2].trim());
  }
  return out;
}

describe("prime-rl layout fixtures", () => {
  it("cover every shape and key family named in the issue", () => {
    for (const f of [
      "single-node",
      "multi-node",
      "disaggregated-overrides",
      "llm-d",
      "kv-offload-native",
      "kv-offload-mooncake",
      "rl-single-node",
      "rl-multi-node",
      "no-target",
      "env-vars",
      "sft-single-node",
      "sft-multi-node",
      "rl-lora",
      "disaggregated-role-switch",
    ]) {
      expect(FIXTURES).toContain(`${f}.toml`);
    }
    expect(FIXTURES.filter((f) => f.startsWith("refuse-")).length).toBeGreaterThanOrEqual(8);
  });

  it.each(FIXTURES)("%s: verdict and counts", (name) => {
    const file = path.join(DIR, name);
    const e = expectations(file);
    expect(e.verdict, "fixture states its verdict").toHaveLength(1);
    const args = [file, "--json", ...(e.target ? ["--target", e.target[0]] : [])];
    const { code, stdout, stderr } = runPlanCli(args);
    if (e.verdict[0] === "refused") {
      expect(code, stdout).toBe(2);
      for (const p of e.path ?? []) expect(stderr).toContain(`  - ${p}: `);
      for (const m of e.message ?? []) expect(stderr).toContain(m);
      return;
    }
    expect(e.verdict[0]).toBe("ok");
    expect(code, stderr).toBe(0);
    const plan = JSON.parse(stdout);
    expect(plan.totals.nodes).toBe(Number(e.nodes[0]));
    expect(plan.totals.routers).toBe(Number(e.routers[0]));
    if (e.target) expect(plan.target).toBe(e.target[0]);
    if (e.default) {
      const plain = runPlanCli([file, "--json"]);
      expect(plain.code, plain.stderr).toBe(0);
      const onDefault = JSON.parse(plain.stdout);
      expect(onDefault.target).toBe(e.default[0]);
      expect(onDefault.totals).toMatchObject({ nodes: plan.totals.nodes, routers: plan.totals.routers });
    }

    const cfg = loadConfigFile(file, [], { target: e.target?.[0] as "slurm" | undefined });
    expect(cfg.prime_rl).toBe(true);
    for (const m of e.model ?? []) expect(cfg.model.name).toBe(m);
    for (const p of e.parallel ?? []) expect(`tp=${cfg.parallel.tp} dp=${cfg.parallel.dp}`).toBe(p);
    for (const list of e.ignored ?? []) for (const key of list.split(", ")) expect(cfg.ignored).toContain(key);
    const engines = buildPlan(cfg, "t").islands.flatMap((i) => i.engines);
    // The environment every engine process gets (env_vars, and what prime-rl's server sets).
    for (const kv of e.env ?? []) {
      const [k, v] = kv.split("=");
      for (const en of engines) expect(new Map(en.env).get(k), `${en.id} ${k}`).toBe(v);
    }
    const argv = engines.map((en) => en.argv.join(" "));
    for (const a of e.argv ?? [])
      expect(
        argv.some((line) => line.includes(a)),
        a,
      ).toBe(true);
  });
});

describe("prime-rl layout mapping", () => {
  const load = (text: string, overrides: string[] = [], target?: "slurm" | "kubernetes" | "local") =>
    loadConfigText(text, "t.toml", parseOverrides(overrides).overrides, ROOT, { target });
  const issues = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      if (err instanceof ConfigError) return err.issues;
      throw err;
    }
    throw new Error("expected a ConfigError");
  };

  it("maps [vllm] onto the canonical keys and the rest onto vllm_extra", () => {
    const cfg = load(
      `[vllm]\nmodel = "Qwen/Qwen3-8B"\ntensor_parallel_size = 2\ndata_parallel_size = 3\nmax-model-len = 4096\nenable_lora = true\nmax_loras = 4\nenable_prefix_caching = false\nmax_num_seqs = "64"\ncompilation_config = '{"cudagraph_mode":"NONE"}'\n[slurm]\n`,
    );
    expect(cfg.model.name).toBe("Qwen/Qwen3-8B");
    expect(cfg.model.max_model_len).toBe(4096);
    expect(cfg.parallel).toEqual({ tp: 2, dp: 3 });
    expect(cfg.enable_lora).toBe(true);
    expect(cfg.max_loras).toBe(4);
    expect(cfg.enable_prefix_caching).toBe(false);
    expect(cfg.vllm_extra).toEqual({ max_num_seqs: 64, compilation_config: { cudagraph_mode: "NONE" } });
  });

  it("uses prime-rl's defaults, not the model catalog's launch values", () => {
    const cfg = load(`[vllm]\nmodel = "zai-org/GLM-4.5-Air"\n[slurm]\n`);
    expect(cfg.parallel.tp).toBe(1);
    expect(load(`[vllm]\nenforce_eager = true\n[slurm]\n`).model.name).toBe("Qwen/Qwen3-0.6B");
  });

  it("dotted overrides take prime-rl's spellings", () => {
    const cfg = load(`[vllm]\nmodel = "Qwen/Qwen3-8B"\n[slurm]\n`, [
      "--vllm.model",
      "Qwen/Qwen3-4B",
      "--vllm.enforce-eager",
      "--vllm.max-num-seqs",
      "32",
      "--vllm.tensor-parallel-size",
      "2",
    ]);
    expect(cfg.model.name).toBe("Qwen/Qwen3-4B");
    expect(cfg.model.enforce_eager).toBe(true);
    expect(cfg.parallel.tp).toBe(2);
    expect(cfg.vllm_extra.max_num_seqs).toBe(32);
  });

  it("prime-rl's override spellings also reach a file in the older layout", () => {
    const cfg = load(`model = "Qwen/Qwen3-8B"\n[slurm]\n`, [
      "--vllm.model",
      "Qwen/Qwen3-4B",
      "--vllm.enforce-eager",
      "--vllm.data-parallel-size",
      "2",
      "--vllm.enable-dbo",
      "--vllm.max-num-seqs",
      "32",
    ]);
    expect(cfg.prime_rl).toBeUndefined();
    expect(cfg.model).toMatchObject({ name: "Qwen/Qwen3-4B", enforce_eager: true });
    expect(cfg.parallel.dp).toBe(2);
    expect(cfg.enable_dbo).toBe(true);
    expect(cfg.vllm_extra.max_num_seqs).toBe(32);
    const rl = load(`[inference]\nmodel = "Qwen/Qwen3-8B"\n[slurm]\n`, ["--inference.vllm.max-model-len", "2048"]);
    expect(rl.model.max_model_len).toBe(2048);
  });

  it("the target can be named outside the file, and must not contradict it", () => {
    const text = `[vllm]\nmodel = "Qwen/Qwen3-8B"\n`;
    // Named nowhere: this machine, as prime-rl runs a file without [slurm].
    expect(load(text).target.kind).toBe("local");
    expect(load(text, [], "local").target.kind).toBe("local");
    // vllm-router (the default router) on Kubernetes needs an image, which has no default.
    expect(issues(() => load(text, [], "kubernetes"))[0]).toMatchObject({ path: "kubernetes.router_image" });
    expect(load(text, ["--kubernetes.router_image=r.example/vllm-router:1"], "kubernetes").target.kind).toBe(
      "kubernetes",
    );
    expect(load(text, [], "slurm").target.kind).toBe("slurm");
    const clash = issues(() => load(text + "[slurm]\n", [], "kubernetes"));
    expect(clash[0]).toMatchObject({ path: "slurm" });
    expect(runPlanCli([path.join(DIR, "no-target.toml"), "--target", "nowhere"]).code).toBe(2);
  });

  it("[vllm_fleet.slurm] holds vllm-fleet's SLURM keys prime-rl's [slurm] lacks, and alone selects SLURM", () => {
    const text = `[vllm]\nmodel = "Qwen/Qwen3-8B"\n[vllm_fleet.slurm]\nready_timeout = 120\n[vllm_fleet.slurm.launcher]\ntype = "venv"\npath = "/opt/prime/.venv"\n`;
    const cfg = load(text);
    expect(cfg.target).toMatchObject({
      kind: "slurm",
      ready_timeout: 120,
      launcher: { type: "venv", path: "/opt/prime/.venv" },
    });
    // Merged over prime-rl's [slurm]; through overrides too (the e2e deploys prime-rl files this way).
    const merged = load(`[vllm]\nmodel = "Qwen/Qwen3-8B"\n[slurm]\npartition = "gpu"\n`, [
      "--vllm_fleet.slurm.launcher.type",
      "apptainer",
      "--vllm_fleet.slurm.launcher.image",
      "/images/prime.sif",
    ]);
    expect(merged.target).toMatchObject({
      kind: "slurm",
      partition: "gpu",
      launcher: { type: "apptainer", image: "/images/prime.sif" },
    });
    // prime-rl's [slurm] forbids our keys: the error says where they go.
    const bad = issues(() =>
      load(`[vllm]\nmodel = "Qwen/Qwen3-8B"\n[slurm]\nlauncher = { type = "venv", path = "/v" }\n`),
    );
    expect(bad).toEqual([{ path: "slurm.launcher", message: expect.stringContaining("[vllm_fleet.slurm]") }]);
    // prime-rl's own keys stay in its [slurm]; and [vllm_fleet.slurm] contradicts a Kubernetes target.
    expect(issues(() => load(`[vllm]\nmodel = "Qwen/Qwen3-8B"\n[vllm_fleet.slurm]\npartition = "gpu"\n`))[0].path).toBe(
      "vllm_fleet.slurm.partition",
    );
    expect(issues(() => load(text, [], "kubernetes"))[0].message).toContain("[vllm_fleet.slurm] or [kubernetes]");
  });

  it("errors inside [vllm] and the RL tables name the key as written", () => {
    const rl = `[orchestrator]\n[model]\nname = "Qwen/Qwen3-8B"\n[inference.vllm]\nmodel = "Qwen/Qwen3-4B"\ngpu_memory_utilization = 2\n[slurm]\n`;
    const found = issues(() => load(rl));
    expect(found.map((i) => i.path)).toContain("inference.vllm.gpu_memory_utilization");
    const ok = `[orchestrator]\n[model]\nname = "Qwen/Qwen3-8B"\n[inference.vllm]\nmodel = "Qwen/Qwen3-4B"\n[slurm]\n`;
    expect(issues(() => load(ok))).toEqual([
      expect.objectContaining({ path: "model.name", message: expect.stringContaining("inference.vllm.model") }),
    ]);
  });

  it("a file with only keys both layouts share is read in the layout that accepts it, the older one first", () => {
    // Valid in both (an RL file names its model in the shared [model]): the older layout, as before.
    const both = load(`[model]\nname = "Qwen/Qwen3-8B"\n[inference]\n[inference.server]\nport = 8001\n[slurm]\n`);
    expect(both.prime_rl).toBeUndefined();
    expect(both.server.port).toBe(8001);
    // The older layout wants a model name: without one, prime-rl's layout (and its default model).
    const prime = load(`[server]\nport = 8001\n[slurm]\n`);
    expect(prime.prime_rl).toBe(true);
    expect(prime.model.name).toBe("Qwen/Qwen3-0.6B");
    expect(prime.notes.join("\n")).toContain("prime-rl's default model");
    expect(load(``, [], "slurm").prime_rl).toBe(true);
    // Refused by the older layout's rules, accepted by prime-rl's: one router before all replicas.
    const rl = load(
      `[model]\nname = "Qwen/Qwen3-8B"\n[deployment]\ntype = "multi_node"\nnum_train_nodes = 1\nnum_infer_nodes = 2\n[inference]\n[slurm]\n`,
    );
    expect(rl.prime_rl).toBe(true);
    expect(buildPlan(rl, "t").totals).toMatchObject({ nodes: 2, routers: 1 });
  });

  it("overrides in either layout's spelling decide the layout of a file that does not", () => {
    const text = `[deployment]\ntype = "multi_node"\nnum_nodes = 2\n[slurm]\n`;
    const prime = load(text, ["--vllm.model", "Qwen/Qwen3-4B", "--vllm.max-num-seqs", "32"]);
    expect(prime.prime_rl).toBe(true);
    expect(prime.model.name).toBe("Qwen/Qwen3-4B");
    expect(prime.vllm_extra.max_num_seqs).toBe(32);
    const older = load(text, ["--model.name", "Qwen/Qwen3-4B"]);
    expect(older.prime_rl).toBeUndefined();
    expect(older.model.name).toBe("Qwen/Qwen3-4B");
  });

  it("a file valid in neither layout gets the errors of the one it is closer to", () => {
    // Closer to prime-rl's: one problem there (num_nodes), two in the older layout (and no model).
    expect(issues(() => load(`[deployment]\ntype = "multi_node"\nnum_nodes = 0\n[slurm]\n`))).toEqual([
      { path: "deployment.num_nodes", message: "must be at least 1" },
    ]);
    // prime-rl's [slurm] key in an otherwise older file: named as prime-rl's.
    const found = issues(() =>
      load(`[deployment]\ntype = "disaggregated"\nnum_prefill_nodes = 2\n[slurm]\nproject_dir = "/p"\nqos = "high"\n`),
    );
    expect(found.map((i) => i.path).sort()).toEqual(["model", "slurm.project_dir"]);
    expect(found.find((i) => i.path === "slurm.project_dir")!.message).toContain(
      `"project_dir" is a key of prime-rl's current layout; the rest of this file reads as the older layout`,
    );
  });

  it("an RL file's top-level weight_broadcast.type is checked: it picks the engines' worker extension", () => {
    const rl = (wb: string) =>
      `[orchestrator]\n[model]\nname = "Qwen/Qwen3-8B"\n[inference]\n[weight_broadcast]\ntype = "${wb}"\n[slurm]\n`;
    expect(load(rl("filesystem")).prime_engine?.weight_broadcast).toBe("filesystem");
    expect(issues(() => load(rl("$(reboot)")))).toEqual([
      { path: "weight_broadcast.type", message: 'must be one of "nccl", "filesystem", "nixl"' },
    ]);
  });

  it("a chat template prime-rl's layout lets through but an engine cannot take is refused at its key", () => {
    const rl = `[orchestrator]\n[model]\nname = "Qwen/Qwen3-8B"\n[inference]\n[tokenizer]\nchat_template = "--help"\n[slurm]\n`;
    expect(issues(() => load(rl))).toEqual([
      { path: "tokenizer.chat_template", message: expect.stringContaining("must not start with '-'") },
    ]);
    expect(issues(() => load(`[vllm]\nchat_template = "-x"\n[slurm]\n`))).toEqual([
      { path: "vllm.chat_template", message: expect.stringContaining("must not start with '-'") },
    ]);
  });

  it("an SFT file serves its online evals: [model] name and LoRA, the SFT deployment, the trainer tables ignored", () => {
    const cfg = loadConfigFile(path.join(DIR, "sft-single-node.toml"));
    expect(cfg.prime_rl).toBe(true);
    expect(cfg.model.name).toBe("Qwen/Qwen3-8B");
    expect(cfg).toMatchObject({ enable_lora: true, max_lora_rank: 32 });
    expect(cfg.rl_deployment).toMatchObject({ type: "single_node", num_train_gpus: 2, num_infer_gpus: 4 });
    expect(cfg.prime_engine).toMatchObject({ engine: "prime-rl", weight_broadcast: "filesystem" });
    const sft = `[model]\nname = "Qwen/Qwen3-8B"\n[data]\n[eval]\n[slurm]\n`;
    expect(issues(() => load(sft + `[inference.vllm]\nmodel = "Qwen/Qwen3-4B"\n`))).toEqual([
      expect.objectContaining({ path: "model.name" }),
    ]);
    const both = `${sft}[deployment]\nnum_infer_gpus = 2\nnum_eval_gpus = 2\n[inference]\n`;
    expect(issues(() => load(both)).map((i) => i.path)).toContain("deployment.num_eval_gpus");
    // An RL file has no [data]: that stays an unknown key there.
    expect(issues(() => load(`[orchestrator]\n[data]\n[inference]\n[slurm]\n`)).map((i) => i.path)).toContain("data");
  });

  it("a per-role enable_dbo reaches that role's engines only", () => {
    const engines = buildPlan(loadConfigFile(path.join(DIR, "disaggregated-role-switch.toml")), "t").islands[0].engines;
    for (const en of engines) expect(en.argv.includes("--enable-dbo"), en.id).toBe(en.role === "prefill");
    // The same value as [vllm]'s is no override at all; a non-boolean is refused.
    const pd = `[vllm]\nmodel = "zai-org/GLM-4.5-Air"\ntensor_parallel_size = 4\nenable_dbo = true\n[deployment]\ntype = "disaggregated"\n[slurm]\n`;
    expect(load(pd + `[deployment.prefill_vllm_overrides]\nenable_dbo = true\n`).role_vllm_extra).toBeUndefined();
    expect(issues(() => load(pd + `[deployment.decode_vllm_overrides]\nenable_dbo = "yes"\n`))[0]).toMatchObject({
      path: "deployment.decode_vllm_overrides.enable_dbo",
    });
  });

  it("the older layout loads as before", () => {
    const cfg = load(`[model]\nname = "Qwen/Qwen3-8B"\n[parallel]\ntp = 2\n[slurm]\n`);
    expect(cfg.prime_rl).toBeUndefined();
    expect(cfg.parallel.tp).toBe(2);
  });
});

describe("the Pulumi program names the target with vllm-fleet:target", () => {
  afterEach(drainRpcs);

  const run = async (config: Record<string, unknown>) => {
    const registered = installMocks("prime");
    setConfig(slurmConfig({ stackFile: path.join(DIR, "no-target.toml"), ...config }));
    vi.resetModules();
    try {
      await import("../../index");
    } catch (e) {
      return { error: e as Error, registered };
    }
    await settle(registered);
    return { error: undefined, registered };
  };

  it("deploys a file without [slurm] with target = slurm", async () => {
    const { error, registered } = await run({ target: "slurm" });
    expect(error).toBeUndefined();
    expect(registered.length).toBeGreaterThan(0);
  });

  it("deploys it on this machine without a target, and refuses an unknown target", async () => {
    const local = await run({});
    expect(local.error).toBeUndefined();
    expect(local.registered.map((r) => r.type)).toContain("command:local:Command");
    expect((await run({ target: "nomad" })).error?.message).toContain("vllm-fleet:target must be slurm or kubernetes");
  });
});
