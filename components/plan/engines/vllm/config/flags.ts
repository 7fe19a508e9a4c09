import { checkFlagValue, ownedFlagMessage, type ExtraValue, type FlagOwner } from "../../../../config/flag-values";
import { type FlagSpec, NEWEST_VLLM_VERSION, VLLM_VERSIONS, vllmRelease } from "./version";
import { ConfigIssue, joinPath } from "../../../../config/issues";
import { inferenceShape } from "../../../../config/schema/inference";
import { modelTable } from "../../../../config/schema/model";
import { didYouMean } from "../../../../config/suggest";
import { checkOwnConnector } from "./own-connector";

export type { FlagSpec } from "./version";

/** `vllm serve`'s flags at a vLLM release (vllm_version); unset, the newest's. */
export const vllmFlags = (version: string = NEWEST_VLLM_VERSION): Record<string, FlagSpec> =>
  vllmRelease(version).flags;
/** Whether some supported release has the flag. */
const anyRelease = (flag: string) => VLLM_VERSIONS.some((v) => vllmFlags(v)[flag] !== undefined);

/** `max_model_len` -> `--max-model-len` (vLLM accepts either spelling; we always emit dashes). */
export function flagName(key: string): string {
  return "--" + key.replace(/_/g, "-");
}

const snakeNames = (version: string) => Object.keys(vllmFlags(version)).map((f) => f.slice(2).replace(/-/g, "_"));

/**
 * A stack-file key named like a `vllm serve` flag (an inference key, or one of [model]'s) sets that
 * flag, so vllm_extra must not: enable_dbo, model.max_model_len, ...
 */
const OWNED_BY_KEY: Record<string, { key: string }> = Object.fromEntries(
  [...Object.keys(inferenceShape).map((k) => [k, k]), ...Object.keys(modelTable.shape).map((k) => [k, `model.${k}`])]
    .filter(([k]) => anyRelease(flagName(k)))
    .map(([k, key]) => [k, { key }]),
);

/**
 * vllm_extra keys the planner owns. Setting them by hand would contradict the plan (two ports, a
 * second kv-transfer config, ...), so each points at the stack-file key that controls it: the keys
 * named like their flag, and these.
 */
export const PLANNER_OWNED: Record<string, FlagOwner> = {
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
  // vec-inf serves dense models across nodes this way (docs/vec-inf.md); the planner does not yet.
  pipeline_parallel_size: {
    why: "pipeline parallelism is not planned: an engine would need tp x pp GPUs where the planner places tp",
  },
  api_key: {
    why: "API keys are Pulumi config secrets (pulumi config set --secret apiKey ...), never stack-file values",
  },
};

/**
 * Checks `vllm_extra` against the real `vllm serve` flag manifest of `version` (the config's
 * vllm_version). Returns the entries keyed by canonical snake_case name, with JSON-flag strings
 * parsed, plus every problem found.
 */
export function checkVllmExtra(
  extra: Record<string, unknown>,
  path: string,
  userPath: (canonical: string) => string = (c) => c,
  version: string = NEWEST_VLLM_VERSION,
): { values: Record<string, ExtraValue>; issues: ConfigIssue[] } {
  const values: Record<string, ExtraValue> = {};
  const issues: ConfigIssue[] = [];
  for (const [rawKey, value] of Object.entries(extra)) {
    const key = rawKey.replace(/-/g, "_");
    const at = joinPath(path, rawKey);
    const owned = PLANNER_OWNED[key];
    if (owned) {
      issues.push({ path: at, message: ownedFlagMessage("vllm_extra", owned, userPath) });
      continue;
    }
    const spec = vllmFlags(version)[flagName(key)];
    if (!spec) {
      const elsewhere = VLLM_VERSIONS.filter((v) => vllmFlags(v)[flagName(key)]);
      const hint = elsewhere.length
        ? ` of vLLM ${version} (vLLM ${elsewhere.join(", ")} has it: set ${userPath("vllm_version")})`
        : didYouMean(key, snakeNames(version));
      issues.push({ path: at, message: `"${rawKey}" is not a \`vllm serve\` flag${hint}` });
      continue;
    }
    const checked = checkFlagValue(value, spec, "vLLM");
    if (typeof checked === "string") issues.push({ path: at, message: `${checked} (flag ${flagName(key)})` });
    else {
      // A connector of the user's own, passed as given (rules refuse it beside the planner's).
      const own = key === "kv_transfer_config" ? checkOwnConnector(checked.value, at, version) : [];
      issues.push(...own);
      if (own.length === 0) values[key] = checked.value;
    }
  }
  return { values, issues };
}
