/**
 * Derives the flag subsets the program needs at run time from the upstream manifests in
 * ../shared/upstream (which a user's clone does not have) into components/upstream/*.json.
 * `npm run sync-upstream` regenerates them; test/upstream-sync.test.ts fails when they drift.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { PACKAGE_ROOT, packagePath } from "../components/package-root";

type Json = Record<string, any>;

export const upstreamDir = process.env.FLEET_UPSTREAM_DIR ?? path.resolve(PACKAGE_ROOT, "..", "shared", "upstream");
export const vendoredDir = packagePath("components", "upstream");

function read(name: string): Json {
  return JSON.parse(fs.readFileSync(path.join(upstreamDir, name), "utf8"));
}

function pickFlag(f: Json): Json {
  const out: Json = { type: f.type };
  for (const key of ["choices", "negatable", "negative_form", "nargs", "aliases", "takes_value", "value_optional", "item_type"]) {
    if (f[key] !== undefined && f[key] !== false) out[key] = f[key];
  }
  return out;
}

function pickFlags(flags: Json): Json {
  return Object.fromEntries(Object.entries(flags).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, pickFlag(v)]));
}

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
  fs.mkdirSync(vendoredDir, { recursive: true });
  for (const [file, data] of Object.entries(derive())) {
    fs.writeFileSync(path.join(vendoredDir, file), JSON.stringify(data, null, 1) + "\n");
    console.log(`wrote components/upstream/${file}`);
  }
}
