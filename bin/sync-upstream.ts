/**
 * `npm run sync-upstream`: refreshes the vendored upstream manifests and derives what the program
 * needs from them.
 *
 * 1. When an upstream manifest folder is available (FLEET_UPSTREAM_DIR, else the project's shared
 *    folder beside the clone, ../shared/upstream, which a user's clone does not have), copy its
 *    flag manifests into test/fixtures/upstream/ and its CRDs, without their prose descriptions,
 *    into test/fixtures/upstream/crds/. Tests and stand-ins read only those vendored copies.
 * 2. Derive the flag subsets the program reads at run time into components/upstream/*.json.
 *
 * test/upstream/sync.test.ts fails when either step would change a file.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import YAML from "yaml";
import { PACKAGE_ROOT, packagePath } from "../components/package-root";

type Json = Record<string, any>;

export const sourceDir = process.env.FLEET_UPSTREAM_DIR ?? path.resolve(PACKAGE_ROOT, "..", "shared", "upstream");
/** The full upstream manifests, vendored: what the tests and stand-ins enforce. */
export const fixturesDir = packagePath("test", "fixtures", "upstream");
/** The subsets the program itself reads. */
export const vendoredDir = packagePath("components", "upstream");

export const MANIFESTS = [
  "vllm-serve.json",
  "vllm-router.json",
  "mooncake.json",
  "llm-d-epp.json",
  "slurm-sbatch.json",
];
/** The custom resources we render (DisaggregatedSet is not one of them), by the vendored file name. */
export const CRDS: Record<string, string> = {
  "leaderworkersets.json": "leaderworkerset.x-k8s.io_leaderworkersets.yaml",
  "inferencepools.json": "inference.networking.k8s.io_inferencepools.yaml",
};

export function sourceAvailable(): boolean {
  return fs.existsSync(path.join(sourceDir, "vllm-serve.json"));
}

/** A CRD without its `description` prose (90% of its bytes); the schema's structure is unchanged. */
export function withoutDescriptions(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutDescriptions);
  if (!v || typeof v !== "object") return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([k, x]) => !(k === "description" && typeof x === "string"))
      .map(([k, x]) => [k, withoutDescriptions(x)]),
  );
}

/** What the vendored fixtures should hold, read from the upstream source folder (file name → text). */
export function fixturesFromSource(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of MANIFESTS) out[name] = fs.readFileSync(path.join(sourceDir, name), "utf8");
  for (const [vendored, upstream] of Object.entries(CRDS)) {
    const crd = YAML.parse(fs.readFileSync(path.join(sourceDir, "crds", upstream), "utf8"));
    out[path.join("crds", vendored)] = JSON.stringify(withoutDescriptions(crd), null, 1) + "\n";
  }
  return out;
}

function read(name: string): Json {
  return JSON.parse(fs.readFileSync(path.join(fixturesDir, name), "utf8"));
}

function pickFlag(f: Json): Json {
  const out: Json = { type: f.type };
  for (const key of [
    "choices",
    "negatable",
    "negative_form",
    "nargs",
    "aliases",
    "takes_value",
    "value_optional",
    "item_type",
  ]) {
    if (f[key] !== undefined && f[key] !== false) out[key] = f[key];
  }
  return out;
}

function pickFlags(flags: Json): Json {
  return Object.fromEntries(
    Object.entries(flags)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => [k, pickFlag(v)]),
  );
}

/** The program's subsets, derived from the vendored fixtures (file name → JSON). */
export function derive(): Record<string, Json> {
  const vllm = read("vllm-serve.json");
  const router = read("vllm-router.json");
  const epp = read("llm-d-epp.json");
  const mooncake = read("mooncake.json");
  const slurm = read("slurm-sbatch.json");
  const allVariants = new Set<string>(router.option_strings_in_all_variants);
  const policySets: string[][] = Object.entries(router.policies)
    .filter(([k]) => k !== "note" && !k.endsWith("_pd_stage"))
    .map(([, v]) => v as string[]);
  return {
    "vllm-serve.json": {
      source: vllm.source,
      flags: pickFlags(vllm.flags),
      kv_connectors: Object.keys(vllm.kv_connectors).sort(),
      kv_transfer_config_fields: Object.keys(vllm.kv_transfer_config_fields).sort(),
    },
    "vllm-router.json": {
      source: router.source,
      note: "Only the option strings every router variant accepts (upstream and PrimeIntellect, Rust and Python).",
      flags: pickFlags(Object.fromEntries(Object.entries(router.flags).filter(([k]) => allVariants.has(k)))),
      policies: policySets.reduce((acc, s) => acc.filter((p) => s.includes(p))).sort(),
    },
    "llm-d-epp.json": {
      source: epp.source,
      flags: pickFlags(epp.flags),
      plugin_types: Object.keys(epp.plugin_types).sort(),
    },
    "mooncake.json": {
      source: mooncake.source,
      master_flags: pickFlags(mooncake.flags),
      client_flags: pickFlags(mooncake.other_programs.mooncake_client.flags),
      known_protocols: mooncake.client_config.known_protocols,
      store_config_file_keys: mooncake.vllm_side.MooncakeStoreConnector_config_file_keys,
    },
    "slurm.json": {
      source: slurm.source,
      sbatch_flags: pickFlags(slurm.flags),
      srun_flags: pickFlags(slurm.srun.flags),
    },
  };
}

if (require.main === module) {
  if (sourceAvailable()) {
    for (const [file, text] of Object.entries(fixturesFromSource())) {
      fs.mkdirSync(path.dirname(path.join(fixturesDir, file)), { recursive: true });
      fs.writeFileSync(path.join(fixturesDir, file), text);
      console.log(`wrote test/fixtures/upstream/${file}`);
    }
  } else {
    console.log(`no upstream manifests at ${sourceDir} (set FLEET_UPSTREAM_DIR): kept test/fixtures/upstream as it is`);
  }
  fs.mkdirSync(vendoredDir, { recursive: true });
  for (const [file, data] of Object.entries(derive())) {
    fs.writeFileSync(path.join(vendoredDir, file), JSON.stringify(data, null, 1) + "\n");
    console.log(`wrote components/upstream/${file}`);
  }
}
