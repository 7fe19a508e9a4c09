import vllmManifest from "../upstream/vllm-serve.json";
import { ConfigIssue, joinPath } from "./issues";
import { inferenceShape } from "./schema/inference";
import { modelTable } from "./schema/model";
import { didYouMean } from "./suggest";

export interface FlagSpec {
  type: "bool" | "int" | "float" | "str" | "json" | "list";
  choices?: (string | number)[];
  negatable?: boolean;
  negative_form?: string;
  nargs?: string;
  item_type?: string;
}

export const VLLM_FLAGS = vllmManifest.flags as Record<string, FlagSpec>;
export const VLLM_KV_CONNECTORS: readonly string[] = vllmManifest.kv_connectors;
export const VLLM_KV_TRANSFER_FIELDS: readonly string[] = vllmManifest.kv_transfer_config_fields;

/** `max_model_len` -> `--max-model-len` (vLLM accepts either spelling; we always emit dashes). */
export function flagName(key: string): string {
  return "--" + key.replace(/_/g, "-");
}

const SNAKE_NAMES = Object.keys(VLLM_FLAGS).map((f) => f.slice(2).replace(/-/g, "_"));

/**
 * A stack-file key named like a `vllm serve` flag (an inference key, or one of [model]'s) sets that
 * flag, so vllm_extra must not: enable_dbo, model.max_model_len, ...
 */
const OWNED_BY_KEY: Record<string, { key: string }> = Object.fromEntries(
  [...Object.keys(inferenceShape).map((k) => [k, k]), ...Object.keys(modelTable.shape).map((k) => [k, `model.${k}`])]
    .filter(([k]) => VLLM_FLAGS[flagName(k)])
    .map(([k, key]) => [k, { key }]),
);

/**
 * vllm_extra keys the planner owns. Setting them by hand would contradict the plan (two ports, a
 * second kv-transfer config, ...), so each points at the stack-file key that controls it: the keys
 * named like their flag, and these.
 */
export const PLANNER_OWNED: Record<string, { key?: string; why?: string }> = {
  ...OWNED_BY_KEY,
  model: { key: "model.name" },
  model_tag: { key: "model.name" },
  served_model_name: { key: "model.name", why: "the served name is the model name, which trainers rely on" },
  host: { key: "server.host" },
  port: { key: "server.port", why: "ports are planned from the server port and the deployment" },
  tensor_parallel_size: { key: "parallel.tp" },
  data_parallel_size: { key: "parallel.dp" },
  data_parallel_size_local: { why: "computed by the planner from the deployment" },
  data_parallel_rank: { why: "computed by the planner from the deployment" },
  data_parallel_start_rank: { why: "computed by the planner from the deployment" },
  data_parallel_address: { why: "computed by the planner from the deployment" },
  data_parallel_rpc_port: { why: "computed by the planner from the deployment" },
  data_parallel_hybrid_lb: { why: "computed by the planner from the deployment" },
  data_parallel_external_lb: { why: "computed by the planner from the deployment" },
  api_server_count: { why: "computed by the planner (dp-local API servers, 1 with LoRA)" },
  kv_transfer_config: {
    key: "kv_cache_offload",
    why: "the planner builds the connector JSON from kv_cache_offload and the deployment",
  },
  // vec-inf serves dense models across nodes this way (docs/vec-inf.md); the planner does not yet.
  pipeline_parallel_size: {
    why: "pipeline parallelism is not planned: an engine would need tp x pp GPUs where the planner places tp",
  },
  api_key: {
    why: "API keys are Pulumi config secrets (pulumi config set --secret apiKey ...), never stack-file values",
  },
};

export type ExtraValue = boolean | number | string | (string | number)[] | Record<string, unknown>;

/** A numeric vllm_extra entry (`max_num_seqs`, `kv_cache_memory_bytes`, ...), or undefined when unset or not a number. */
export const extraNumber = (extra: Record<string, ExtraValue>, key: string): number | undefined =>
  typeof extra[key] === "number" ? (extra[key] as number) : undefined;

/**
 * Checks `vllm_extra` against the real `vllm serve` flag manifest. Returns the entries keyed by
 * canonical snake_case name, with JSON-flag strings parsed, plus every problem found.
 */
export function checkVllmExtra(
  extra: Record<string, unknown>,
  path: string,
  userPath: (canonical: string) => string = (c) => c,
): { values: Record<string, ExtraValue>; issues: ConfigIssue[] } {
  const values: Record<string, ExtraValue> = {};
  const issues: ConfigIssue[] = [];
  for (const [rawKey, value] of Object.entries(extra)) {
    const key = rawKey.replace(/-/g, "_");
    const at = joinPath(path, rawKey);
    const owned = PLANNER_OWNED[key];
    if (owned) {
      const use = owned.key ? `set ${userPath(owned.key)} instead` : "";
      issues.push({ path: at, message: `cannot be set in vllm_extra: ${[owned.why, use].filter(Boolean).join("; ")}` });
      continue;
    }
    const spec = VLLM_FLAGS[flagName(key)];
    if (!spec) {
      issues.push({ path: at, message: `"${rawKey}" is not a \`vllm serve\` flag${didYouMean(key, SNAKE_NAMES)}` });
      continue;
    }
    const checked = checkValue(value, spec);
    if (typeof checked === "string") issues.push({ path: at, message: `${checked} (flag ${flagName(key)})` });
    else values[key] = checked.value;
  }
  return { values, issues };
}

const DASH = "must not start with '-' (vLLM would read it as an option, not as this flag's value)";

function checkValue(value: unknown, spec: FlagSpec): { value: ExtraValue } | string {
  const choices = spec.choices;
  const inChoices = (v: string | number) => !choices || choices.includes(v);
  switch (spec.type) {
    case "bool":
      if (typeof value !== "boolean") return `expects true or false, got ${describe(value)}`;
      if (value === false && !spec.negatable)
        return "is a switch without a --no- form: remove the key instead of setting false";
      return { value };
    case "int":
      if (typeof value !== "number" || !Number.isInteger(value))
        return `expects a whole number, got ${describe(value)}`;
      if (!inChoices(value)) return `must be one of ${choices!.join(", ")}`;
      return { value };
    case "float":
      if (typeof value !== "number") return `expects a number, got ${describe(value)}`;
      return { value };
    case "str":
      if (typeof value !== "string" || value.length === 0) return `expects a non-empty string, got ${describe(value)}`;
      if (value.includes("\0")) return "must not contain a NUL byte";
      // The value is its own argv word after the flag: argparse would read "-x" as an option.
      if (value.startsWith("-")) return DASH;
      if (!inChoices(value)) return `must be one of ${choices!.join(", ")}`;
      return { value };
    case "json": {
      if (typeof value === "string") {
        try {
          const parsed = JSON.parse(value);
          if (parsed === null || typeof parsed !== "object") return "expects a JSON object or array";
          return { value: parsed };
        } catch {
          return "expects a table, an array or a JSON string, and this string is not valid JSON";
        }
      }
      if (value !== null && typeof value === "object") return { value: value as Record<string, unknown> };
      return `expects a table or JSON, got ${describe(value)}`;
    }
    case "list": {
      const items = Array.isArray(value) ? value : [value];
      if (items.length === 0) return "expects at least one value";
      for (const item of items) {
        if ((typeof item !== "string" && typeof item !== "number") || item === "")
          return `expects strings or numbers, got ${describe(item)}`;
        if (typeof item === "string" && item.includes("\0")) return "must not contain a NUL byte";
        if (typeof item === "string" && item.startsWith("-")) return DASH;
        if (spec.item_type === "int" && !Number.isInteger(typeof item === "string" ? Number(item) : item))
          return `expects whole numbers, got ${describe(item)}`;
        if (!inChoices(item)) return `items must be one of ${choices!.join(", ")}, got ${describe(item)}`;
      }
      return { value: items as (string | number)[] };
    }
  }
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  if (value === null) return "null";
  if (typeof value === "object") return "a table";
  return `${typeof value} ${JSON.stringify(value)}`;
}
