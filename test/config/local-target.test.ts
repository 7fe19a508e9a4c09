/**
 * The local target ([local], issue 27): a file that names no target plans on this machine, as
 * prime-rl runs a file without [slurm]; [local] is one target among the others (never beside one);
 * its keys are checked where they are read (local.gpus, local.device); and the planner refuses,
 * before anything starts, the shapes that do not fit one machine, naming the node count and the
 * targets that can run them.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ConfigError, loadConfigFile, loadConfigText, type ConfigIssue } from "../../components/config";
import { buildPlan } from "../../components/planner";
import { issuesOf, load, LOCAL_STACKS, plan, ROOT, runPlanCli, stackText } from "../helpers";
import { PAYLOADS } from "../security/payloads";

const PRIME = path.join(ROOT, "test/fixtures/prime-rl");

/** The issues of a plan the planner refuses (after the file loaded); fails the test if it plans. */
function refusals(text: string): ConfigIssue[] {
  const cfg = load(text);
  try {
    buildPlan(cfg, "t");
  } catch (err) {
    if (err instanceof ConfigError) return err.issues;
    throw err;
  }
  throw new Error("expected the plan to be refused, but it planned");
}

/** A shipped stack with its target table (and whatever follows it) replaced by `[local]`. */
function onLocal(name: string, table: "slurm" | "kubernetes"): string {
  const text = stackText(name);
  const at = text.search(new RegExp(`^\\[${table}\\]`, "m"));
  expect(at, `stacks/${name}.toml has a [${table}] table`).toBeGreaterThan(0);
  return `${text.slice(0, at)}[local]\n`;
}

afterEach(() => vi.restoreAllMocks());

describe("a file naming no target plans on the local target", () => {
  it("in vllm-fleet's older layouts the file names it: [local]", () => {
    const p = plan(`[model]\nname = "Qwen/Qwen3-0.6B"\n[parallel]\ntp = 2\n[local]\n`);
    expect(p.target).toBe("local");
    expect(p.settings).toMatchObject({ kind: "local", device: "gpu", ready_timeout: 3600 });
    expect(p.totals).toMatchObject({ nodes: 1, engines: 1, routers: 1 });
    expect(load(`[inference]\nmodel = "Qwen/Qwen3-0.6B"\n[local]\n`).target.kind).toBe("local");
  });

  it("a file naming no target is read as prime-rl reads it (prime-rl refuses the older layout's [model], and so does this)", () => {
    for (const text of [`[model]\nname = "Qwen/Qwen3-0.6B"\n`, `[inference]\nmodel = "Qwen/Qwen3-0.6B"\n`]) {
      const found = issuesOf(text);
      expect(found).toHaveLength(1);
      expect(found[0].message).toContain("Extra inputs are not permitted");
      expect(found[0].message).toContain("[local]");
    }
  });

  it("in prime-rl's layout, through `npm run plan` without --target", () => {
    const { code, stdout, stderr } = runPlanCli([path.join(PRIME, "no-target.toml"), "--json"]);
    expect(code, stderr).toBe(0);
    const p = JSON.parse(stdout);
    expect(p.target).toBe("local");
    expect(p.totals).toMatchObject({ nodes: 1, routers: 1 });
    expect(loadConfigFile(path.join(PRIME, "no-target.toml"), []).prime_rl).toBe(true);
  });

  it("an empty file: prime-rl's default model on this machine", () => {
    const cfg = load(`# nothing but a comment\n`);
    expect(cfg.target.kind).toBe("local");
    expect(cfg.model.name).toBe("Qwen/Qwen3-0.6B");
  });

  it.each(LOCAL_STACKS)("stacks/%s.toml plans on local", (name) => {
    expect(plan(stackText(name), name).target).toBe("local");
  });
});

describe("[local] is one target among the others", () => {
  it("beside [slurm] is refused, naming both", () => {
    const found = issuesOf(`[model]\nname = "Qwen/Qwen3-0.6B"\n[slurm]\njob_name = "t"\n[local]\n`);
    expect(found).toHaveLength(1);
    expect(found[0].path).toBe("local");
    expect(found[0].message).toContain("[slurm]");
    expect(found[0].message).toContain("[local]");
  });

  it("beside [kubernetes] is refused, naming both (the RL layout too)", () => {
    const found = issuesOf(`[inference]\nmodel = "Qwen/Qwen3-0.6B"\n[kubernetes]\nnamespace = "n"\n[local]\n`);
    expect(found.map((i) => i.path)).toContain("local");
    const m = found.find((i) => i.path === "local")!.message;
    expect(m).toContain("[kubernetes]");
    expect(m).toContain("[local]");
  });

  it("--target local runs a prime-rl file without a target, and contradicts a file that names another", () => {
    const file = path.join(PRIME, "no-target.toml");
    expect(loadConfigFile(file, [], { target: "local" }).target.kind).toBe("local");
    const { code, stdout, stderr } = runPlanCli([file, "--json", "--target", "local"]);
    expect(code, stderr).toBe(0);
    expect(JSON.parse(stdout).target).toBe("local");
    const text = `[vllm]\nmodel = "Qwen/Qwen3-0.6B"\n[slurm]\n`;
    expect(() => loadConfigText(text, "t.toml", [], ROOT, { target: "local" })).toThrow(/slurm/);
  });
});

describe("[local] keys", () => {
  const base = `[model]\nname = "Qwen/Qwen3-0.6B"\n`;

  it("defaults: gpu, every GPU nvidia-smi lists, an hour to be ready, programs on PATH", () => {
    expect(load(base + `[local]\n`).target).toMatchObject({
      kind: "local",
      device: "gpu",
      gpus: undefined,
      ready_timeout: 3600,
      launcher: { type: "vllm" },
    });
  });

  it("every injection payload in the closed keys (local.device, local.launcher.type) is refused, naming the key", () => {
    for (const payload of PAYLOADS) {
      const text = payload.text("/tmp/canary");
      for (const [table, key] of [
        ["local", "device"],
        ["local.launcher", "type"],
      ]) {
        const found = issuesOf(`${base}[${table}]\n${key} = ${JSON.stringify(text)}\n`);
        expect(
          found.map((i) => i.path),
          `${payload.id} in ${table}.${key}`,
        ).toContain(`${table}.${key}`);
      }
    }
  });

  it("local.gpus naming a GPU twice is refused", () => {
    const found = issuesOf(base + `[local]\ngpus = [0, 1, 0]\n`);
    expect(found.map((i) => i.path)).toEqual(["local.gpus"]);
    expect(found[0].message).toContain("twice");
  });

  it('device = "cpu" with gpus is refused naming local.gpus', () => {
    const found = issuesOf(base + `[local]\ndevice = "cpu"\ngpus = [0]\n`);
    expect(found.map((i) => i.path)).toEqual(["local.gpus"]);
    expect(found[0].message).toContain('local.device = "cpu"');
    expect(load(base + `[local]\ndevice = "cpu"\n`).target).toMatchObject({ kind: "local", device: "cpu" });
  });

  it("local.gpus smaller than the plan is refused before anything starts", () => {
    const found = refusals(base + `[parallel]\ntp = 2\n[local]\ngpus = [0]\n`);
    expect(found.map((i) => i.path)).toEqual(["local.gpus"]);
    expect(found[0].message).toContain("1 GPU(s)");
    expect(found[0].message).toContain("needs 2");
    expect(plan(base + `[parallel]\ntp = 2\n[local]\ngpus = [2, 3]\n`).target).toBe("local");
  });
});

describe("shapes that do not fit one machine are refused", () => {
  it("a replica over several nodes (wide-EP) names the node count and the cluster targets", () => {
    const found = refusals(onLocal("wide-ep", "slurm"));
    expect(found.map((i) => i.path)).toContain("deployment");
    const m = found.find((i) => i.path === "deployment")!.message;
    expect(m).toContain("spans 2 nodes");
    expect(m).toMatch(/\[slurm\] or \[kubernetes\]|\[kubernetes\] or \[slurm\]/);
  });

  it("several islands (num_infer_replicas) name the islands and the node count", () => {
    const found = refusals(onLocal("disaggregated-x3", "slurm"));
    const m = found.find((i) => i.path === "deployment.num_infer_replicas")?.message;
    expect(m).toContain("3 islands");
    expect(m).toContain("18 nodes");
    expect(m).toContain("[slurm]");
  });

  it("Mooncake over two nodes: one client port per node, and one machine", () => {
    const found = refusals(onLocal("kv-offload-mooncake", "slurm"));
    expect(found.map((i) => i.path)).toContain("kv_cache_offload.type");
    expect(found.find((i) => i.path === "kv_cache_offload.type")!.message).toContain("2 nodes");
  });

  it("the same shapes plan on SLURM, and the refusal reaches `npm run plan` (exit 2)", () => {
    expect(plan(stackText("wide-ep")).target).toBe("slurm");
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vllm-fleet-local-"));
    try {
      const file = path.join(dir, "wide.toml");
      fs.writeFileSync(file, onLocal("wide-ep", "slurm"));
      const { code, stderr } = runPlanCli([file]);
      expect(code).toBe(2);
      expect(stderr).toContain("spans 2 nodes");
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
