/**
 * Every key the schema accepts reaches the canonical config. The walk below visits every leaf of
 * both layouts' schemas (every option of every `type`-discriminated table), sets a valid value that
 * is not the key's default, loads the file and checks that the canonical FleetConfig differs from
 * the same file without that value. A key that validates and is then dropped on the way to the
 * canonical config (as one missing from a hand-kept key list would be) fails here by name.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { resolve } from "../../components/config/load";
import { RL_PASSENGERS, rlLayout, standaloneLayout } from "../../components/config/schema/layouts";
import type { FleetConfig } from "../../components/config/types";

type Doc = Record<string, any>;
type Schema = z.ZodType;
const def = (s: Schema): any => (s as any)._zod.def;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "carried-test-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** A catalog overlay that changes an entry of the built-in catalog (what `model_catalog` carries). */
const overlay = path.join(tmp, "catalog.yaml");
fs.writeFileSync(overlay, 'models:\n  "Qwen/Qwen3-8B":\n    launch:\n      tp: 2\n');

/** The schema inside optional/default/prefault wrappers and transforms, with its default if any. */
function unwrap(s: Schema): { inner: Schema; dflt?: unknown } {
  let dflt: unknown;
  for (;;) {
    const d = def(s);
    if (d.type === "default" || d.type === "prefault") dflt ??= d.defaultValue;
    if (d.type === "optional" || d.type === "default" || d.type === "prefault" || d.type === "nullable")
      s = d.innerType;
    else if (d.type === "pipe") s = d.in;
    else return { inner: s, dflt };
  }
}

const STRINGS = [
  "carried",
  "/carried/path",
  "org/carried-model",
  "gpu[001-002]",
  "01:00:00",
  "gpu:4",
  "8Gi",
  "12Gi",
  "h100",
  "example.com/carried",
  "CARRIED_VAR",
  "64G",
  "90m",
];
const NUMBERS = [7, 3, 13, 2, 0.5, 60, 120, 4096, 100_000];

/** Valid values for a leaf schema, in order of preference. */
function samples(s: Schema): unknown[] {
  const { inner } = unwrap(s);
  const d = def(inner);
  const valid = (vs: unknown[]) => vs.filter((v) => inner.safeParse(v).success);
  switch (d.type) {
    case "boolean":
      return [true, false];
    case "number":
      return valid(NUMBERS);
    case "string":
      return valid(STRINGS);
    case "enum":
      return Object.values(d.entries);
    case "literal":
      return d.values;
    case "union":
      return valid(d.options.flatMap(samples));
    case "array":
      return valid(
        samples(d.element)
          .slice(0, 1)
          .map((v) => [v]),
      );
    case "object":
      return valid([
        Object.fromEntries(Object.entries(d.shape as Record<string, Schema>).map(([k, f]) => [k, samples(f)[0]])),
      ]);
    case "record": {
      const key = STRINGS.find((k) => d.keyType.safeParse(k).success)!;
      return valid(
        samples(d.valueType)
          .slice(0, 2)
          .map((v) => ({ [key]: v })),
      );
    }
    default:
      return [];
  }
}

interface Layout {
  name: "standalone" | "rl";
  schema: Schema;
  /** The smallest file of the layout: a target, and the RL layout's [inference]. */
  base: Doc;
  /** Where the inference keys sit. */
  inference: string[];
}

/**
 * Values the generic samples cannot supply: a `vllm serve` flag vLLM knows, and a model catalog
 * (with a model it changes). `with` is added to the file both with and without the value.
 */
const SPECIAL: Record<string, (l: Layout) => { values: unknown[]; with?: Doc }> = {
  vllm_extra: () => ({ values: [{ max_num_seqs: 7 }] }),
  sglang_extra: () => ({ values: [{ max_running_requests: 7 }] }),
  // A flag every vllm-router release has (config/router-flags.ts), in the default router's table.
  "deployment.router.extra": () => ({ values: [{ retry_max_retries: 7 }] }),
  // prime-rl's RL tables: accepted, never read; they reach the config as its ignored list. An
  // [inference] model keeps the file in this layout (alone, the tables would make it prime-rl's).
  ...Object.fromEntries(
    RL_PASSENGERS.map((k) => [
      k,
      () => ({ values: [{ carried: true }], with: { inference: { model: { name: "Qwen/Qwen3-8B" } } } }),
    ]),
  ),
  model_catalog: (l) => ({ values: [overlay], with: setIn({}, [...l.inference, "model"], { name: "Qwen/Qwen3-8B" }) }),
};

/** Values a table needs beyond its schema's required keys to reach the canonical config. */
const TABLE_NEEDS: Record<string, Doc> = {
  kv_cache_offload: { cpu: { num_bytes: 1_000_000 } },
};

function getIn(doc: Doc, at: string[]): any {
  return at.reduce<any>((t, k) => (t && typeof t === "object" ? t[k] : undefined), doc);
}

/** A copy of `doc` with `value` at `at`; tables on the way are created. */
function setIn(doc: Doc, at: string[], value: unknown): Doc {
  const out = structuredClone(doc);
  let t = out;
  for (const k of at.slice(0, -1)) t = t[k] ??= {};
  t[at[at.length - 1]] = value;
  return out;
}

/** Deep merge of plain tables (b wins). */
function merge(a: Doc, b: Doc): Doc {
  const out = structuredClone(a);
  for (const [k, v] of Object.entries(b))
    out[k] =
      v && typeof v === "object" && !Array.isArray(v) && out[k] && typeof out[k] === "object" ? merge(out[k], v) : v;
  return out;
}

interface Case {
  leaf: string;
  /** The file without the value, and the file with each candidate value (one must change the config). */
  without: Doc;
  with: Doc[];
  /** A `type`: every option must give a different canonical config (`without` is the first option). */
  distinct?: true;
}

const isTable = (s: Schema) => def(s).type === "object";
const isTagged = (s: Schema) => def(s).type === "union" && def(s).discriminator !== undefined;

/** A table's keys that have no default and must be present. */
function requiredKeys(table: Schema, skip?: string): Doc {
  const out: Doc = {};
  for (const [k, f] of Object.entries(def(table).shape as Record<string, Schema>)) {
    if (k !== skip && (f as any)._zod.optin === undefined) out[k] = samples(f)[0];
  }
  return out;
}

/** Every leaf under `table` (which sits at `at` in `doc`), as a case. */
function* walk(l: Layout, table: Schema, at: string[], doc: Doc, skip?: string): Generator<Case> {
  for (const [key, field] of Object.entries(def(table).shape as Record<string, Schema>)) {
    if (key === skip) continue;
    const p = [...at, key];
    const name = p.join(".");
    // A file targets one backend: the Kubernetes and local keys are walked without [slurm].
    const here =
      at.length === 0 && (key === "kubernetes" || key === "local") ? (({ slurm: _, ...rest }) => rest)(doc) : doc;
    const { inner, dflt } = unwrap(field);
    const needs = TABLE_NEEDS[p.slice(p.length - 1).join(".")] ?? {};
    if (isTable(inner)) {
      yield* walk(l, inner, p, setIn(here, p, merge({ ...getIn(here, p), ...requiredKeys(inner) }, needs)));
    } else if (isTagged(inner)) {
      const tag = def(inner).discriminator as string;
      const tables = (def(inner).options as Schema[]).map((option) => {
        const type = samples(def(option).shape[tag])[0];
        return { option, doc: setIn(here, p, merge({ [tag]: type, ...requiredKeys(option, tag) }, needs)) };
      });
      yield { leaf: `${name}.${tag}`, without: tables[0].doc, with: tables.slice(1).map((t) => t.doc), distinct: true };
      for (const { option, doc } of tables) yield* walk(l, option, p, doc, tag);
    } else {
      const inInference = l.inference.every((k, i) => p[i] === k);
      const special = SPECIAL[(inInference ? p.slice(l.inference.length) : p).join(".")]?.(l);
      const base = special?.with ? merge(here, special.with) : here;
      const values = (special?.values ?? samples(field)).filter(
        (v) => JSON.stringify(v) !== JSON.stringify(dflt) && JSON.stringify(v) !== JSON.stringify(getIn(base, p)),
      );
      yield { leaf: name, without: base, with: values.slice(0, 2).map((v) => setIn(base, p, v)) };
    }
  }
}

/** The canonical config as comparable text (keys sorted), without `explicit`, which records every key set by definition. */
function canonical(doc: Doc, l: Layout): string {
  expect(l.schema.safeParse(doc).error?.issues ?? []).toEqual([]);
  const { config } = resolve(structuredClone(doc), tmp);
  expect(config).toBeDefined();
  const { explicit: _, ...rest } = config as FleetConfig;
  return JSON.stringify(rest, (_k, v) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
}

const LAYOUTS: Layout[] = [
  { name: "standalone", schema: standaloneLayout, base: { slurm: {} }, inference: [] },
  { name: "rl", schema: rlLayout, base: { inference: {}, slurm: {} }, inference: ["inference"] },
];

describe.each(LAYOUTS)("every $name key the schema accepts reaches the canonical config", (l) => {
  const cases = [...walk(l, l.schema, [], l.base)];

  it("walks every leaf", () => {
    const leaves = cases.map((c) => c.leaf);
    const pre = l.inference.map((k) => k + ".").join("");
    for (const leaf of [
      "enable_dbo",
      "enable_prefix_caching",
      "max_lora_rank",
      "deployment.num_prefill_nodes",
      "deployment.router.policy",
      "kv_cache_offload.protocol",
      "server.port",
      "model.chat_template",
    ]) {
      expect(leaves).toContain(pre + leaf);
    }
    expect(leaves).toEqual(
      expect.arrayContaining([
        "kubernetes.startup_timeout",
        "local.gpus",
        "local.launcher.bin_dir",
        "slurm.launcher.binds",
        "slurm.pending_timeout",
        "output_dir",
        "dry_run",
        "model_catalog",
      ]),
    );
    expect(cases.length).toBeGreaterThan(100);
  });

  it.each(cases.map((c) => [c.leaf, c] as const))("%s", (_leaf, c) => {
    expect(c.with.length, "no valid non-default value to try").toBeGreaterThan(0);
    const before = canonical(c.without, l);
    const after = c.with.map((doc) => canonical(doc, l));
    if (c.distinct) {
      expect(new Set([before, ...after]).size, `two values of ${c.leaf} give the same canonical config`).toBe(
        after.length + 1,
      );
    } else {
      expect(
        after.some((a) => a !== before),
        `setting ${c.leaf} left the canonical config unchanged: the key is validated and then dropped`,
      ).toBe(true);
    }
  });
});
