// First: the fixture registers its name before anything builds the stack-file schema (./register.ts).
import "./register";
import * as fs from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stackJsonSchema, stackKeyReference } from "../../bin/schema";
import { loadStackText } from "../../components/config";
import { ENGINE_NAMES } from "../../components/config/schema/engine-names";
import { statusCommand } from "../../components/ops/commands";
import { viewFromPlan } from "../../components/ops/fleet-view";
import { engineNamed } from "../../components/plan/engines";
import { buildStackPlan } from "../../components/planner";
import { stackPlanText } from "../../components/report/plan-text";
import { targetOf } from "../../components/targets";
import { issuesOf, ROOT } from "../helpers";
import { productFiles, productStringLiterals } from "../product-sources";

/*
 * Issue 42's proof, an engine: one that lives only under test/ (./name.ts, ./config.ts, ./engine.ts),
 * registered by ./register.ts, is chosen by `engine = "tiny"`, refused and filled in by its own
 * rules, plans, renders with its own routes, reports status through them against a stand-in HTTP
 * server (a test fixture, not a real engine), and appears in the generated key reference, with no
 * product file naming it.
 */

const MODEL = "Qwen/Qwen3-0.6B";
let server: http.Server;
let port = 0;
const asked: string[] = [];

beforeAll(async () => {
  // The stand-in engine: health, the model list and the tiny engine's own weight-version route.
  server = http.createServer((req, res) => {
    asked.push(req.url ?? "");
    const body: Record<string, string> = {
      "/health": "",
      "/v1/models": JSON.stringify({ data: [{ id: MODEL }] }),
      "/tiny/weight_version": JSON.stringify({ weight_version: "tiny-3" }),
    };
    if (!(req.url! in body)) res.statusCode = 404;
    res.end(body[req.url!] ?? "");
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

const stackText = (type = "single_node", extra = "") => `
engine = "tiny"
${extra}
[model]
name = "${MODEL}"

[deployment]
type = "${type}"
${type === "multi_node" ? "num_nodes = 2" : ""}

[deployment.router]
type = "none"

[server]
port = ${port}

[local]
device = "cpu"
`;

const load = (text: string) => loadStackText(text, "tiny.toml");

describe("an engine registered from test/ only (the tiny fixture)", () => {
  it("is registered beside the built-in engines", () => {
    expect(ENGINE_NAMES).toContain("tiny");
    expect(engineNamed("tiny" as never).routes.weightVersion).toBe("/tiny/weight_version");
  });

  it('engine = "tiny" loads, with its auto-setup rule applied unless the file sets the key', () => {
    const [cfg] = load(stackText());
    expect(cfg.engine).toBe("tiny");
    expect(cfg.model.max_model_len).toBe(2048);
    const [own] = load(
      stackText("single_node").replace(`name = "${MODEL}"`, `name = "${MODEL}"\nmax_model_len = 4096`),
    );
    expect(own.model.max_model_len).toBe(4096);
  });

  it("its rule refuses what it does not serve, naming the key; another engine name is still refused", () => {
    const refused = issuesOf;
    const multi = stackText("multi_node").replace('type = "none"', 'type = "vllm-router"');
    expect(refused(multi.replace(`port = ${port}`, "port = 8000"))).toEqual([
      expect.objectContaining({
        path: "deployment.type",
        message: 'is "multi_node", but engine = "tiny" serves single_node deployments only',
      }),
    ]);
    expect(refused(stackText().replace('engine = "tiny"', 'engine = "tinyy"'))[0].path).toBe("engine");
  });

  it("plans and renders with its own name and routes", () => {
    const stack = buildStackPlan(load(stackText()), "dev");
    const [plan] = stack.services;
    expect(plan.engine).toBe("tiny");
    expect(plan.islands[0].engines.map((e) => e.engine)).toEqual(["tiny"]);
    expect(plan.islands[0].endpoints.engines[0].url.path).toBe("/tiny");
    expect(stackPlanText(stack, "tiny.toml")).toContain(MODEL);
    const files = targetOf(plan.target).planOut(stack);
    expect(files.length).toBeGreaterThan(0);
    expect(files.some((f) => f.text.includes("vllm serve"))).toBe(true);
  });

  it("reports status through its own weight-version route", async () => {
    const stack = buildStackPlan(load(stackText()), "dev");
    const [plan] = stack.services;
    const view = viewFromPlan(plan, stack);
    expect(view.islands[0].engines[0].url).toBe(`http://127.0.0.1:${port}/tiny`);
    const report = await statusCommand(view, undefined);
    expect(report.status).toBe("READY");
    expect(report.islands[0].processes[0].weightVersion).toBe("tiny-3");
    expect(asked).toContain("/tiny/weight_version");
  });

  it("appears in the generated key reference and the stack file's JSON Schema", () => {
    expect(stackKeyReference()).toContain('"tiny"');
    expect(JSON.stringify(stackJsonSchema())).toContain('"tiny"');
    expect(fs.readFileSync(path.join(ROOT, "docs", "stack-file.md"), "utf8")).not.toContain('"tiny"');
  });

  it("no product file names it: no string `tiny` and no import of test/", () => {
    const named = productStringLiterals((s) => s === "tiny" || s.includes("fixture-engine"));
    expect(productFiles().length).toBeGreaterThan(100);
    expect(named).toEqual([]);
  });
});
