import Ajv2020 from "ajv/dist/2020";
import * as TOML from "@iarna/toml";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { endpointsJsonSchema, stackJsonSchema, stackKeyReference } from "../../bin/schema";
import { loadConfigFile } from "../../components/config";
import { fleetEndpoints, plannedOutputs } from "../../components/outputs";
import { buildPlan } from "../../components/plan/plan";
import { resolveStackFile } from "../../components/stack-file";
import { ROOT, STACK_NAMES, stackText } from "../helpers";

const validate = new Ajv2020({ strict: false, allErrors: true }).compile(stackJsonSchema());
const plain = (text: string) => JSON.parse(JSON.stringify(TOML.parse(text)));

describe("JSON Schema for editors", () => {
  it.each(STACK_NAMES)("accepts %s", (name) => {
    expect(validate(plain(stackText(name))), JSON.stringify(validate.errors)).toBe(true);
  });

  it("rejects unknown keys and wrong types, as the loader does", () => {
    expect(validate(plain(`[model]\nname = "m"\n[slurm]\npartiton = "x"`))).toBe(false);
    expect(validate(plain(`[inference]\nmodel = "m"\n[inference.parallel]\ntp = "2"`))).toBe(false);
  });

  it('offers model = "<id>" only where the loader expands it', () => {
    expect(validate(plain(`model = "m"\n[slurm]\njob_name = "t"`))).toBe(true);
    expect(validate(plain(`[inference]\nmodel = "m"\n[slurm]\njob_name = "t"`))).toBe(true);
    // The RL layout's top-level [model] is a table; the loader rejects a string there.
    expect(validate(plain(`model = "m"\n[inference]\nmodel = "m"\n[slurm]\njob_name = "t"`))).toBe(false);
  });

  it("lets the tables whose type has a default omit it", () => {
    expect(
      validate(
        plain(
          `[model]\nname = "m"\n[deployment]\ngpus_per_node = 4\n[deployment.router]\npolicy = "round_robin"\n[slurm.launcher]\nbin_dir = "/opt/vllm/bin"`,
        ),
      ),
    ).toBe(true);
  });

  it("schema/stack.schema.json is up to date (npm run schema)", () => {
    const committed = JSON.parse(fs.readFileSync(path.join(ROOT, "schema", "stack.schema.json"), "utf8"));
    expect(committed).toEqual(stackJsonSchema());
  });

  it("docs/stack-file.md is up to date (npm run schema)", () => {
    const committed = fs.readFileSync(path.join(ROOT, "docs", "stack-file.md"), "utf8");
    expect(committed).toBe(stackKeyReference());
  });
});

describe("JSON Schema of the trainer contract", () => {
  const validateEndpoints = new Ajv2020({ strict: false, allErrors: true }).compile(endpointsJsonSchema());

  it("schema/endpoints.schema.json is up to date (npm run schema)", () => {
    const committed = JSON.parse(fs.readFileSync(path.join(ROOT, "schema", "endpoints.schema.json"), "utf8"));
    expect(committed).toEqual(endpointsJsonSchema());
  });

  it.each(STACK_NAMES)("describes what %s exports as endpoints", (name) => {
    const plan = buildPlan(loadConfigFile(resolveStackFile(name).file), name);
    const endpoints = fleetEndpoints(plan, plannedOutputs(plan).islands, true);
    expect(validateEndpoints(JSON.parse(JSON.stringify(endpoints))), JSON.stringify(validateEndpoints.errors)).toBe(
      true,
    );
  });

  it("says what each field is", () => {
    const schema = endpointsJsonSchema() as { properties: Record<string, { description?: string }> };
    for (const [field, s] of Object.entries(schema.properties)) expect(s.description, field).toBeTruthy();
  });
});
