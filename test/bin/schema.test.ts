import { engineFacts } from "../../components/plan/engines";
import { ENGINE_NAMES } from "../../components/plan/engine-names";
import Ajv2020 from "ajv/dist/2020";
import * as TOML from "@iarna/toml";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import {
  endpointsJsonSchema,
  islandJsonSchema,
  primeJsonSchema,
  stackJsonSchema,
  stackKeyReference,
} from "../../bin/schema";
import { readsAsPrime } from "../../components/config";
import { plannedOutputs, stackEndpoints } from "../../components/outputs";
import { ROOT, STACK_NAMES, stackPlanOf, stackText } from "../helpers";

const validate = new Ajv2020({ strict: false, allErrors: true }).compile(stackJsonSchema());
const plain = (text: string) => JSON.parse(JSON.stringify(TOML.parse(text)));

describe("JSON Schema for editors", () => {
  const validatePrimeStack = new Ajv2020({ strict: false, allErrors: true }).compile(primeJsonSchema());
  it.each(STACK_NAMES)("accepts %s (the schema of the layout it is read in)", (name) => {
    const doc = plain(stackText(name));
    // A stack of services is in the stack schema's services layout (its services in the older layout).
    const check = !("services" in doc) && readsAsPrime(doc, path.join(ROOT, "stacks")) ? validatePrimeStack : validate;
    expect(check(doc), JSON.stringify(check.errors)).toBe(true);
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

describe("JSON Schema of prime-rl's layout", () => {
  const prime = primeJsonSchema() as Record<string, any>;
  const validatePrime = new Ajv2020({ strict: false, allErrors: true }).compile(prime);
  const dir = path.join(ROOT, "test", "fixtures", "prime-rl");
  const accepted = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".toml") && !f.startsWith("refuse-"))
    .sort();

  it("schema/prime-rl.schema.json is up to date (npm run schema)", () => {
    const committed = JSON.parse(fs.readFileSync(path.join(ROOT, "schema", "prime-rl.schema.json"), "utf8"));
    expect(committed).toEqual(prime);
  });

  it.each(accepted)("accepts %s", (name) => {
    const doc = plain(fs.readFileSync(path.join(dir, name), "utf8"));
    expect(validatePrime(doc), JSON.stringify(validatePrime.errors)).toBe(true);
  });

  it("rejects unknown keys outside [vllm], and accepts any key inside it", () => {
    expect(validatePrime(plain(`[deployment]\ntype = "multi_node"\nnodes = 2`))).toBe(false);
    expect(validatePrime(plain(`[vllm]\nmodel = "m"\nmax_num_seqs = 64`))).toBe(true);
    // The older layout's keys are not prime-rl's.
    expect(validatePrime(plain(`[model]\nname = "m"\n[slurm]\njob_name = "t"`))).toBe(false);
  });

  /** Every key of every table (a discriminated table's variants merged), by dotted path. */
  function keys(node: Record<string, any>, at = ""): [string, Record<string, any>][] {
    const out: [string, Record<string, any>][] = [];
    for (const v of [node, ...(node.anyOf ?? []), ...(node.oneOf ?? [])]) {
      for (const [k, s] of Object.entries((v.properties ?? {}) as Record<string, any>)) {
        const p = at ? `${at}.${k}` : k;
        out.push([p, s], ...keys(s, p));
        if (s.items) out.push(...keys(s.items, `${p}[]`));
      }
    }
    return out;
  }

  it("describes every key, with prime-rl's default where vllm-fleet applies it", () => {
    const all = keys(prime);
    // `type` of a table of several kinds is described by the key reference itself (it selects the kind).
    const undescribed = all.filter(([p, s]) => !s.description && !/(^|\.)type$/.test(p)).map(([p]) => p);
    // The older layout's [kubernetes] as it is (the key reference points there).
    expect(undescribed.filter((p) => !/^kubernetes(\.|$)/.test(p))).toEqual([]);
    const at = (p: string) => all.filter(([k]) => k === p).map(([, s]) => s);
    expect(at("vllm.model")[0].default).toBe("Qwen/Qwen3-0.6B");
    expect(at("vllm.tool_call_parser")[0].default).toBe("auto");
    expect(at("deployment.num_nodes")[0].default).toBe(2);
    expect(at("inference.deployment.prefill_port")[0].default).toBe(8100);
    expect(at("deployment.num_infer_replicas")[0].default).toBe(1);
    // Where vllm-fleet's default is not prime-rl's, the description says both, and no default is declared.
    const jobName = at("slurm.job_name")[0];
    expect(jobName.default).toBeUndefined();
    expect(jobName.description).toContain('prime-rl default "prime-rl"');
  });

  it("the stack file's schema describes every key that holds a value (issue 42: a table is a section of its own)", () => {
    const isTable = (s: Record<string, any>) =>
      [s, ...(s.anyOf ?? []), ...(s.oneOf ?? [])].some((v) => v.type === "object" && v.properties);
    const all = keys(stackJsonSchema() as Record<string, any>);
    expect(all.length).toBeGreaterThan(200);
    const undescribed = all.filter(([p, s]) => !s.description && !isTable(s) && !/(^|\.)type$/.test(p)).map(([p]) => p);
    expect(undescribed).toEqual([]);
  });

  it("the older layout's schema is not changed by prime-rl's descriptions", () => {
    const seed = JSON.stringify(stackJsonSchema());
    expect(seed).not.toContain("prime-rl default");
    expect(seed).not.toContain("Qwen/Qwen3-0.6B");
  });
});

describe("the engines' facts the Python client reads (schema/engines.json)", () => {
  it("is up to date (npm run schema): every registered engine's routes, metric names and base weight version", () => {
    const committed = JSON.parse(fs.readFileSync(path.join(ROOT, "schema", "engines.json"), "utf8"));
    expect(committed).toEqual(engineFacts());
    expect(Object.keys(committed.engines)).toEqual([...ENGINE_NAMES]);
  });
});

describe("JSON Schema of a running island's endpoints.json", () => {
  it("schema/island.schema.json is up to date (npm run schema)", () => {
    const committed = JSON.parse(fs.readFileSync(path.join(ROOT, "schema", "island.schema.json"), "utf8"));
    expect(committed).toEqual(islandJsonSchema());
  });

  it("the Python client vendors both contracts' schemas and the engines' facts byte for byte (clients/python/src/vllm_fleet/)", () => {
    for (const name of ["endpoints.schema.json", "island.schema.json", "engines.json"])
      expect(
        fs.readFileSync(path.join(ROOT, "clients", "python", "src", "vllm_fleet", name), "utf8"),
        `cp schema/${name} clients/python/src/vllm_fleet/`,
      ).toBe(fs.readFileSync(path.join(ROOT, "schema", name), "utf8"));
  });

  it("accepts what a job writes and refuses a result without its engines", () => {
    const validate = new Ajv2020({ strict: false, allErrors: true }).compile(islandJsonSchema());
    const written = {
      format: "vllm-fleet/island/v1",
      dryRun: false,
      stack: "dev",
      island: 0,
      jobName: "j",
      jobId: "12",
      adopted: false,
      model: "m",
      nodes: [{ name: "i0-n0", host: "node1", addr: "10.0.0.1" }],
      routerUrl: null,
      engines: [{ id: "e", role: "replica", replica: 0, url: "http://10.0.0.1:8000/v1" }],
      adminUrls: ["http://10.0.0.1:8000/v1"],
      roles: ["replica"],
      mooncake: null,
      timing: { submittedAt: 1, runningAt: 2, readyAt: 3 },
    };
    expect(validate(written), JSON.stringify(validate.errors)).toBe(true);
    const { engines: _e, ...without } = written;
    expect(validate(without)).toBe(false);
  });
});

describe("JSON Schema of the trainer contract", () => {
  const validateEndpoints = new Ajv2020({ strict: false, allErrors: true }).compile(endpointsJsonSchema());

  it("schema/endpoints.schema.json is up to date (npm run schema)", () => {
    const committed = JSON.parse(fs.readFileSync(path.join(ROOT, "schema", "endpoints.schema.json"), "utf8"));
    expect(committed).toEqual(endpointsJsonSchema());
  });

  it.each(STACK_NAMES)("describes what %s exports as endpoints", (name) => {
    // A stack of services exports each service's contract under services.<name>.
    const stack = stackPlanOf(name);
    const endpoints = stackEndpoints(
      stack,
      stack.services.map((p) => plannedOutputs(p).islands),
      true,
    );
    expect(validateEndpoints(JSON.parse(JSON.stringify(endpoints))), JSON.stringify(validateEndpoints.errors)).toBe(
      true,
    );
  });

  it("says what each field is", () => {
    // One service's contract, or a stack of several services (each one's contract by name).
    const schema = endpointsJsonSchema() as { anyOf: { properties: Record<string, { description?: string }> }[] };
    expect(schema.anyOf).toHaveLength(2);
    for (const shape of schema.anyOf)
      for (const [field, s] of Object.entries(shape.properties)) expect(s.description, field).toBeTruthy();
  });
});
