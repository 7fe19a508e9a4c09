import type { ConfigIssue } from "./issues";
import { isSftFile, OLDER_ONLY, PRIME_MARKERS, PRIME_RL_IGNORED_TABLES, primeVllmShape } from "./schema/prime";
import type { TomlTable } from "./toml";

/*
 * Which layout a stack file is written in: the standalone or the RL one, and prime-rl's current
 * layout or the older one, read from the keys only one of them has.
 */

export type Layout = "standalone" | "rl";

export const isTable = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** An RL config nests inference under [inference]; anything else is the standalone layout. */
export function detectLayout(raw: TomlTable): Layout {
  return "inference" in raw ? "rl" : "standalone";
}

/**
 * Whether the file has a key only prime-rl's current layout has (packages/prime-rl-configs/src/
 * prime_rl/configs/inference.py since PR #3202): at the inference root ([vllm], [router], ...), or
 * in an RL file without an older-layout key at its inference root, a table of prime-rl's RLConfig.
 */
export function hasPrimeMarker(raw: TomlTable, layout: Layout): boolean {
  const holder = layout === "rl" ? raw.inference : raw;
  if (isTable(holder) && PRIME_MARKERS.some((k) => k in holder)) return true;
  if (layout !== "rl") return false;
  if (isSftFile(raw)) return true; // prime-rl's SFT file: its [inference] serves online evals
  // [inference] model = "..." or [inference.parallel] is the older layout's: prime-rl's RL tables
  // beside it are a whole RL file in that layout (as prime-rl's docs/inference.md wrote one), not prime-rl's current one.
  if (hasOlderMarker(raw, layout)) return false;
  // Not [trainer]: the older RL layout has one too (RLConfig requires [orchestrator], which it lacks).
  const rlOnly = [...PRIME_RL_IGNORED_TABLES, "env_vars"].filter((k) => k !== "trainer");
  if (rlOnly.some((k) => k in raw)) return true;
  return isTable(raw.deployment) && ("num_train_gpus" in raw.deployment || "num_infer_gpus" in raw.deployment);
}

/** Whether the file has a key only the older layout has: [model], [parallel], vllm_extra, ... at the inference root, or model_catalog. */
export function hasOlderMarker(raw: TomlTable, layout: Layout): boolean {
  const holder = layout === "rl" ? raw.inference : raw;
  return "model_catalog" in raw || (isTable(holder) && OLDER_ONLY.some((k) => k in holder));
}

/** Where the current layout keeps each of the older layout's inference keys. */
export function currentName(key: string): string {
  if (key === "model") return "vllm.model (and the other [model] keys under [vllm])";
  if (key === "parallel") return "vllm.tensor_parallel_size / vllm.data_parallel_size";
  if (key === "vllm_extra") return "extra keys of [vllm]";
  return `vllm.${key}`;
}

/** A file mixing prime-rl's current layout with the older one: one issue per older key, naming both. */
export function mixedLayout(raw: TomlTable, layout: Layout): ConfigIssue[] {
  const holder = layout === "rl" ? raw.inference : raw;
  if (!isTable(holder)) return [];
  const at = (k: string) => (layout === "rl" ? `inference.${k}` : k);
  const marker = PRIME_MARKERS.find((k) => k in holder);
  const current = marker ? at(marker) : "prime-rl's RL tables";
  return OLDER_ONLY.filter((k) => k in holder).map((k) => ({
    path: at(k),
    message: `Extra inputs are not permitted: this file uses prime-rl's current layout (${current}), where "${k}" is a key of the older layout; use ${at(currentName(k))} instead, and do not mix the two`,
  }));
}

/**
 * prime-rl reads [vllm]'s keys kebab or snake, and JSON-parses the string values of its extra keys
 * (VllmConfig's before-validator); done here so the schema and vllm_extra see one spelling.
 */
export function normaliseVllmKeys(data: TomlTable, layout: Layout): ConfigIssue[] {
  const holder = layout === "rl" ? data.inference : data;
  if (!isTable(holder) || !isTable(holder.vllm)) return [];
  const issues: ConfigIssue[] = [];
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(holder.vllm)) {
    const snake = key.replace(/-/g, "_");
    if (snake in out)
      issues.push({
        path: `${layout === "rl" ? "inference." : ""}vllm.${key}`,
        message: `is given twice (also as ${snake === key ? key.replace(/_/g, "-") : snake})`,
      });
    let v = value;
    if (typeof v === "string" && !(snake in primeVllmShape)) {
      try {
        v = JSON.parse(v);
      } catch {
        // not JSON: the string itself
      }
    }
    out[snake] = v;
  }
  holder.vllm = out;
  return issues;
}
