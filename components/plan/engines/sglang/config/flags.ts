import { checkFlagValue, ownedFlagMessage, type FlagOwner } from "../../../../config/flag-values";
import { ConfigIssue, joinPath } from "../../../../config/issues";
import { didYouMean } from "../../../../config/suggest";
import type { ExtraValue } from "../../../../config/flag-values";

/** A `python -m sglang.launch_server` flag as components/upstream/sglang-server.json describes it. */
export interface SglangFlagSpec {
  type: "bool" | "int" | "float" | "str" | "json" | "list";
  choices?: (string | number)[];
  negatable?: boolean;
  negative_form?: string;
  nargs?: string | number;
  item_type?: string;
  aliases?: string[];
  /** SGLang still accepts it, with a warning naming `replacement`. */
  deprecated?: boolean;
  replacement?: string;
}

/*
 * The manifest (79 KB) is read on first use, not at load: every stack file passes through
 * checkSglangExtra, but only one with sglang_extra needs the table (docs/benchmarks.md, cli-start).
 */
type SglangManifest = typeof import("../../../../upstream/sglang-server.json");
// eslint-disable-next-line @typescript-eslint/no-require-imports
const manifest = (): SglangManifest => require("../../../../upstream/sglang-server.json");

/** Every SGLang server flag by its own spelling (`--tp-size`), from the vendored manifest. */
export const sglangFlags = () => manifest().flags as Record<string, SglangFlagSpec>;
/** The pinned SGLang release the manifest describes ("sglang 0.5.23"). */
export const sglangSource = () => /^\S+ \S+/.exec(manifest().source)![0];

const snake = (flag: string) => flag.replace(/^-+/, "").replace(/-/g, "_");

/** `tp_size` -> `--tp-size`: the spelling an sglang_extra key is emitted as. */
export function sglangFlagName(key: string): string {
  return "--" + key.replace(/_/g, "-");
}

/**
 * Every snake_case spelling SGLang accepts, to the flag's own snake_case name: the flag itself and its
 * aliases (`tensor_parallel_size` and `tp_size` are one flag). The `--no-` forms are apart (NEGATIONS).
 * Built on the first sglang_extra key.
 */
let spellings: { SPELLINGS: Map<string, string>; NEGATIONS: Map<string, string>; NAMES: string[] } | undefined;
function spellingTables() {
  if (!spellings) {
    const SPELLINGS = new Map<string, string>();
    const NEGATIONS = new Map<string, string>();
    for (const [flag, spec] of Object.entries(sglangFlags())) {
      SPELLINGS.set(snake(flag), snake(flag));
      for (const alias of spec.aliases ?? []) if (alias.startsWith("--")) SPELLINGS.set(snake(alias), snake(flag));
      if (spec.negative_form) NEGATIONS.set(snake(spec.negative_form), snake(flag));
    }
    spellings = { SPELLINGS, NEGATIONS, NAMES: [...SPELLINGS.keys()] };
  }
  return spellings;
}

/** Who controls a flag instead of sglang_extra. */
export type Owner = FlagOwner;

const DEPLOYMENT = "computed by the planner from the deployment";

/**
 * The `python -m sglang.launch_server` flags the SGLang planner emits, by snake_case name (the flag
 * without `--`), each with the stack-file key that controls it (canonical path; checkSglangExtra's
 * userPath spells it as the file does) or why no key does. An alias of one of them (`tensor_parallel_size`)
 * is refused as the flag itself. Edit this table as the planner learns or drops a flag.
 */
export const SGLANG_PLANNER_OWNED: Record<string, Owner> = {
  model_path: { key: "model.name" },
  served_model_name: { key: "model.name", why: "the served name is the model name, which trainers rely on" },
  host: { key: "server.host" },
  port: { key: "server.port", why: "ports are planned from the server port and the deployment" },
  tp_size: { key: "parallel.tp" },
  dp_size: { key: "parallel.dp" },
  ep_size: { key: "enable_expert_parallel", why: "expert parallelism is planned from the parallel sizes" },
  enable_dp_attention: {
    key: "enable_expert_parallel",
    why: "data-parallel attention is planned with expert parallelism",
  },
  // SGLang 0.5.23's own spelling of data-parallel attention (--enable-dp-attention is deprecated for it).
  attn_dp_size: { key: "enable_expert_parallel", why: "data-parallel attention is planned with expert parallelism" },
  mem_fraction_static: {
    key: "gpu_memory_utilization",
    why: "the planner turns it into SGLang's static memory fraction",
  },
  context_length: { key: "model.max_model_len" },
  nnodes: { why: DEPLOYMENT },
  node_rank: { why: DEPLOYMENT },
  dist_init_addr: { why: DEPLOYMENT },
  tool_call_parser: { key: "model.tool_call_parser" },
  reasoning_parser: { key: "model.reasoning_parser" },
  enable_lora: { key: "enable_lora" },
  lora_paths: { key: "enable_lora", why: "the planner emits the adapters it serves" },
  max_loras_per_batch: { key: "max_loras" },
  api_key: {
    why: "API keys are Pulumi config secrets (pulumi config set --secret apiKey ...), never stack-file values",
  },
  disaggregation_mode: {
    key: "deployment.type",
    why: "prefill and decode roles are planned for disaggregated deployments",
  },
  disaggregation_transfer_backend: { key: "deployment.transfer_backend" },
  max_lora_rank: { key: "max_lora_rank" },
  disable_radix_cache: { key: "enable_prefix_caching", why: "SGLang's radix cache is its prefix cache" },
  enable_eplb: { key: "enable_eplb" },
  disaggregation_bootstrap_port: { why: "bootstrap ports are planned per prefill engine" },
  enable_metrics: { why: "always on: the fleet CLI and monitors read /metrics" },
  trust_remote_code: { key: "model.trust_remote_code" },
  chat_template: { key: "model.chat_template" },
  dtype: { key: "model.dtype" },
  // Not flags of the plan, but no pass-through either:
  help: { why: "it prints the help and exits; the engine would never serve" },
  config: { why: "it reads more flags from a YAML file that no check sees; set them here one by one" },
};

/**
 * Checks `sglang_extra` (snake_case keys: `python -m sglang.launch_server` flags without `--`, as
 * vllm_extra's are `vllm serve`'s) against the vendored SGLang manifest: unknown keys are refused
 * with a did-you-mean, values checked against the flag's type and choices, and the flags the planner
 * owns (`owned`, by default SGLANG_PLANNER_OWNED) refused naming the key that controls them. An alias
 * is read as its flag. Returns the entries keyed by the flag's own snake_case name (JSON strings
 * parsed), plus every problem found (`path`: the table's path as the user wrote it).
 */
export function checkSglangExtra(
  extra: Record<string, unknown>,
  path: string,
  userPath: (canonical: string) => string = (c) => c,
  owned: Record<string, Owner> = SGLANG_PLANNER_OWNED,
): { values: Record<string, ExtraValue>; issues: ConfigIssue[] } {
  const values: Record<string, ExtraValue> = {};
  const issues: ConfigIssue[] = [];
  const seen = new Map<string, string>();
  for (const [rawKey, value] of Object.entries(extra)) {
    const { SPELLINGS, NEGATIONS, NAMES } = spellingTables();
    const written = rawKey.replace(/-/g, "_");
    const at = joinPath(path, rawKey);
    const negated = NEGATIONS.get(written);
    if (negated) {
      issues.push({ path: at, message: `write ${negated} = false instead of the --no- form` });
      continue;
    }
    const key = SPELLINGS.get(written);
    const owner = owned[key ?? written];
    if (owner) {
      const as = key && key !== written ? ` (an alias of ${sglangFlagName(key)})` : "";
      issues.push({ path: at, message: ownedFlagMessage(`sglang_extra${as}`, owner, userPath) });
      continue;
    }
    if (!key) {
      issues.push({
        path: at,
        message: `"${rawKey}" is not a \`python -m sglang.launch_server\` flag of ${sglangSource()}${didYouMean(written, NAMES)}`,
      });
      continue;
    }
    const first = seen.get(key);
    if (first !== undefined) {
      issues.push({ path: at, message: `sets ${sglangFlagName(key)} again (${first} already does)` });
      continue;
    }
    seen.set(key, rawKey);
    const spec = sglangFlags()[sglangFlagName(key)];
    if (spec.deprecated) {
      const use = spec.replacement ? `: use ${spec.replacement} instead` : "";
      issues.push({ path: at, message: `${sglangFlagName(key)} is deprecated in ${sglangSource()}${use}` });
      continue;
    }
    const checked = checkFlagValue(value, spec, "SGLang");
    if (typeof checked === "string") issues.push({ path: at, message: `${checked} (flag ${sglangFlagName(key)})` });
    else values[key] = checked.value;
  }
  return { values, issues };
}
