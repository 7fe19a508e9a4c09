import routerReleases from "./vllm-router-releases.json";

/** vllm-serve.json: one `vllm serve` manifest per vLLM release (major.minor), `newest` the default. */
interface VllmServeManifests {
  newest: string;
  versions: Record<string, { flags: Record<string, Spec> }>;
}

interface Spec {
  type: string;
  negatable?: boolean;
  negative_form?: string;
  nargs?: string | number;
  choices?: (string | number)[];
  aliases?: string[];
  value_optional?: boolean;
  item_type?: string;
}

/**
 * The programs whose command lines are checked, each by what follows it: `vllm serve`, `vllm-router`,
 * `python3 -m sglang.launch_server` ("sglang"), `python3 -m sglang_router.launch_router`
 * ("sglang-router"), the EPP, the Mooncake binaries, `lmcache server` ("lmcache"), sbatch and srun.
 */
export type Program =
  | "vllm"
  | "vllm-router"
  | "sglang"
  | "sglang-router"
  | "epp"
  | "mooncake_master"
  | "mooncake_client"
  | "lmcache"
  | "sbatch"
  | "srun";

/*
 * Each program's manifest is read on its first check, not at start: a vLLM stack never reads
 * SGLang's (79 KB) or Mooncake's (docs/benchmarks.md, cli-start). `require` caches the JSON.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
const TABLES: Record<Program, () => Record<string, Spec>> = {
  vllm: () => vllmServe().versions[vllmServe().newest].flags,
  "vllm-router": () => (require("./vllm-router.json") as typeof import("./vllm-router.json")).flags,
  sglang: () => (require("./sglang-server.json") as typeof import("./sglang-server.json")).flags,
  "sglang-router": () => (require("./sglang-router.json") as typeof import("./sglang-router.json")).flags,
  epp: () => (require("./llm-d-epp.json") as typeof import("./llm-d-epp.json")).flags,
  mooncake_master: () => (require("./mooncake.json") as typeof import("./mooncake.json")).master_flags,
  mooncake_client: () => (require("./mooncake.json") as typeof import("./mooncake.json")).client_flags,
  lmcache: () => (require("./lmcache.json") as typeof import("./lmcache.json")).flags,
  sbatch: () => (require("./slurm.json") as typeof import("./slurm.json")).sbatch_flags,
  srun: () => (require("./slurm.json") as typeof import("./slurm.json")).srun_flags,
};
/* eslint-enable @typescript-eslint/no-require-imports */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const vllmServe = () => require("./vllm-serve.json") as VllmServeManifests;

/** Flags that take several values until the next flag (clap num_args / argparse nargs). */
const MULTI = (s: Spec) => s.type === "list" && (s.nargs === "+" || s.nargs === "*" || s.nargs === "0..");

/** argparse programs without positional arguments: a stray word is an error ("unrecognized arguments"). */
const NO_POSITIONAL = new Set<Program>(["sglang", "sglang-router", "lmcache"]);

/**
 * Each program's flags by every spelling its parser accepts: the manifest's key, its aliases
 * (SGLang's `--tensor-parallel-size` for `--tp-size`, ...) and its `--no-` form.
 */
const SPELLINGS = new Map<string, Map<string, { spec: Spec; negation: boolean }>>();

function spellingsOf(program: Program): Map<string, { spec: Spec; negation: boolean }> {
  if (!SPELLINGS.has(program)) SPELLINGS.set(program, spellingsFrom(TABLES[program]()));
  return SPELLINGS.get(program)!;
}

function spellingsFrom(flags: Record<string, Spec>): Map<string, { spec: Spec; negation: boolean }> {
  const names = new Map<string, { spec: Spec; negation: boolean }>();
  for (const [name, spec] of Object.entries(flags)) {
    names.set(name, { spec, negation: false });
    for (const alias of spec.aliases ?? []) names.set(alias, { spec, negation: false });
    if (spec.negative_form) names.set(spec.negative_form, { spec, negation: true });
  }
  return names;
}

/**
 * Checks a generated command line against the upstream flag manifest: every flag exists, takes a
 * value when it must, and values match choices and numeric types. Returns the problems found. It
 * reads `--flag value` and `--flag=value`; gflags programs use `--name=value` as we emit them.
 * `variant`: for vllm-router, the router release (its policies); for vllm, the vLLM release
 * (major.minor: vllm_version; unset, the newest).
 */
export function checkArgv(program: Program, args: string[], variant?: string): string[] {
  const spellings =
    // not an engine: the `vllm serve` program, whose manifest has one release per vLLM version
    program === "vllm" && variant !== undefined
      ? vllmSpellings(variant)
      : withReleasePolicies(program, spellingsOf(program), variant);
  const problems: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith("-") || arg === "-") {
      // positional (vLLM's model, a script path); SGLang's parsers take none, argparse refuses them
      if (NO_POSITIONAL.has(program)) problems.push(`${program}: unexpected argument ${arg} (it takes no positional)`);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    const known = spellings.get(name);
    if (!known) {
      problems.push(`${program}: unknown flag ${name}`);
      // Its value(s), if any, are part of the same mistake.
      while (eq < 0 && i + 1 < args.length && !args[i + 1].startsWith("-")) i++;
      continue;
    }
    const spec = known.spec;
    if (known.negation || spec.type === "bool") {
      if (eq > 0 && !["mooncake_master", "mooncake_client", "epp"].includes(program))
        problems.push(`${program}: ${name} takes no value`);
      continue;
    }
    if (eq > 0) {
      problems.push(...checkValue(program, name, spec, arg.slice(eq + 1)));
      continue;
    }
    if (spec.value_optional) {
      // argparse nargs="?" takes the next word unless it looks like an option; getopt's
      // optional_argument (sbatch, srun) only ever --flag=value. The bare flag is valid alone.
      const next = args[i + 1];
      if (spec.nargs === "?" && next !== undefined && !next.startsWith("-"))
        problems.push(...checkValue(program, name, spec, args[++i]));
      continue;
    }
    const value = args[i + 1];
    // argparse nargs="*" (SGLang's --lora-paths, the router's --worker-urls): no value is a value.
    if (spec.nargs === "*" && (value === undefined || value.startsWith("--"))) continue;
    if (value === undefined || (value.startsWith("--") && spec.type !== "str")) {
      problems.push(`${program}: ${name} needs a value`);
      continue;
    }
    i++;
    problems.push(...checkValue(program, name, spec, value));
    if (MULTI(spec))
      while (i + 1 < args.length && !args[i + 1].startsWith("--"))
        problems.push(...checkValue(program, name, spec, args[++i]));
  }
  return problems;
}

/** `vllm serve`'s spellings at one vLLM release. */
function vllmSpellings(version: string): Map<string, { spec: Spec; negation: boolean }> {
  const release = vllmServe().versions[version];
  if (!release) throw new Error(`no vllm serve manifest for vLLM ${version}`);
  const key = `vllm@${version}`;
  if (!SPELLINGS.has(key)) SPELLINGS.set(key, spellingsFrom(release.flags));
  return SPELLINGS.get(key)!;
}

/**
 * vllm-router's --policy as a given build accepts it (vllm-router-releases.json): the flag manifest
 * is the pinned 0.1.17's, whose parser lacks PrimeIntellect's policies.
 */
function withReleasePolicies(
  program: Program,
  spellings: Map<string, { spec: Spec; negation: boolean }>,
  release?: string,
) {
  if (program !== "vllm-router" || release === undefined) return spellings;
  const build = (routerReleases.releases as Record<string, { policies: string[] }>)[release];
  if (!build) throw new Error(`unknown vllm-router release ${release}`);
  const policy = spellings.get("--policy")!;
  return new Map(spellings).set("--policy", { ...policy, spec: { ...policy.spec, choices: build.policies } });
}

/** One value (one item of a list flag): its choices and its type (a list's item type). */
function checkValue(program: Program, name: string, spec: Spec, value: string): string[] {
  if (spec.choices && !spec.choices.map(String).includes(value))
    return [`${program}: ${name} ${value} is not one of ${spec.choices.join(", ")}`];
  const type = spec.type === "list" ? spec.item_type : spec.type;
  if (type === "int" && !/^-?\d+$/.test(value)) return [`${program}: ${name} expects an integer, got ${value}`];
  if (type === "float" && (value.trim() === "" || Number.isNaN(Number(value))))
    return [`${program}: ${name} expects a number, got ${value}`];
  if (spec.type === "json") {
    try {
      JSON.parse(value);
    } catch {
      return [`${program}: ${name} expects JSON, got ${value}`];
    }
  }
  return [];
}
