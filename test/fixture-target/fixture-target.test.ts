// First: the fixture registers before anything builds the stack-file schema (./register.ts).
import "./register";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { stackKeyReference, stackJsonSchema } from "../../bin/schema";
import { loadStackText } from "../../components/config";
import { TARGETS } from "../../components/config/target-registry";
import { viewFromPlan } from "../../components/ops/fleet-view";
import { statusCommand } from "../../components/ops/commands";
import { buildStackPlan } from "../../components/planner";
import { stackPlanText } from "../../components/report/plan-text";
import { targetOf } from "../../components/targets";
import { issuesOf, ROOT } from "../helpers";
import { productFiles, productStringLiterals } from "../product-sources";
import { recordState, run } from "./target";

/*
 * Issue 42's proof: a target that lives only under test/ (./config.ts, ./target.ts), registered by
 * ./register.ts, loads from a stack file, plans, renders its `plan --out` files, reports status and
 * appears in the generated key reference and JSON Schema, with no product file naming it.
 */

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "recorded-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const stackText = (machines: number, extra = "") => `
[model]
name = "Qwen/Qwen3-0.6B"

[deployment]
type = "multi_node"
num_nodes = 2
gpus_per_node = 4

[recorded]
record_dir = "${dir}"
machines = ${machines}
${extra}`;

const load = (text: string) => loadStackText(text, "recorded.toml");

describe("a target registered from test/ only (the recorded fixture)", () => {
  it("is registered beside the built-in targets", () => {
    expect(TARGETS).toContain("recorded");
    expect(targetOf("recorded" as never).title).toBe("recorded");
  });

  it("a stack file with [recorded] loads with its settings and the note of its auto-setup rule", () => {
    const [cfg] = load(stackText(4));
    expect(cfg.target).toEqual({ kind: "recorded", record_dir: dir, machines: 4 });
    expect(cfg.notes).toContain(`the recorder writes every command line under ${dir}`);
  });

  it("its rule refuses an island larger than its machines, naming its key; its unknown keys are refused too", () => {
    const refused = issuesOf;
    expect(refused(stackText(1))).toEqual([
      expect.objectContaining({ path: "recorded.machines", message: "is 1, but one island needs 2 machines" }),
    ]);
    expect(refused(stackText(4, "machnes = 2")).map((i) => i.path)).toEqual(["recorded.machnes"]);
    expect(refused(stackText(4, '[slurm]\npartition = "gpu"'))[0].message).toContain(
      "a stack file targets one backend: keep either [slurm] or [recorded], not both",
    );
  });

  it("plans, prints and renders: every engine's command line in its plan --out file", () => {
    const stack = buildStackPlan(load(stackText(4)), "dev");
    const [plan] = stack.services;
    expect(plan.target).toBe("recorded");
    expect(plan.islands[0].nodes).toHaveLength(2);
    expect(stackPlanText(stack, "recorded.toml")).toContain("Qwen/Qwen3-0.6B");
    const files = targetOf(plan.target).planOut(stack);
    expect(files.map((f) => f.path)).toEqual(["recorded/dev-i0.commands"]);
    const lines = files[0].text.trim().split("\n");
    expect(lines.filter((l) => /^machine [01]: vllm serve Qwen\/Qwen3-0\.6B /.test(l))).toHaveLength(
      plan.islands[0].engines.length,
    );
    expect(lines.at(-1)).toBe("machine 0: the vllm-router router");
  });

  it("reports status from what it recorded: PENDING before a run, LAUNCHING once run, then the state it records", async () => {
    const stack = buildStackPlan(load(stackText(4)), "dev");
    const [plan] = stack.services;
    const view = viewFromPlan(plan, stack);
    expect(view.islands[0].engines[0].url).toMatch(/^http:\/\/recorded-[01]:\d+\//);
    const status = async () => (await statusCommand(view, undefined, { plan, access: {} })).status;
    expect(await status()).toBe("PENDING");
    expect(run(plan).every((f) => fs.existsSync(f))).toBe(true);
    expect(await status()).toBe("LAUNCHING");
    recordState(plan, 0, "READY", "every engine answered");
    const report = await statusCommand(view, undefined, { plan, access: {} });
    expect(report.status).toBe("READY");
    expect(report.target).toBe("recorded");
    expect(report.islands[0].detail).toBe("every engine answered");
  });

  it("appears in the generated key reference and the stack file's JSON Schema", () => {
    const reference = stackKeyReference();
    expect(reference).toContain("`[recorded]`");
    expect(reference).toContain("Machines the recorder has: an island needs one per node (default 8)");
    const schema = JSON.stringify(stackJsonSchema());
    expect(schema).toContain('"record_dir"');
    // The generated files in the repository are the product's: the fixture is not in them.
    expect(fs.readFileSync(path.join(ROOT, "docs", "stack-file.md"), "utf8")).not.toContain("[recorded]");
  });

  it("no product file names it: no string `recorded` and no import of test/", () => {
    const named = productStringLiterals((s) => s === "recorded" || s.includes("fixture-target"));
    expect(productFiles().length).toBeGreaterThan(100);
    expect(named).toEqual([]);
  });
});
