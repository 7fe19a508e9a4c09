/**
 * prime-rl 8324600's InferenceConfig keys that only prime-rl's server acts on (the environment its
 * vLLM patches read). A leaf module: the config reader and the vLLM engine's rules both name them,
 * and the engine's rules cannot import the config reader.
 */
export const PRIME_SERVER_PATCHES = [
  "fp8_ue8m0_weight_scales",
  "fp8_stochastic_weight_rounding",
  "vllm_plugins",
] as const;

/** The patch keys a table turns on: a true switch, or a non-empty plugin list. */
export const serverPatchesUsed = (table: Partial<Record<(typeof PRIME_SERVER_PATCHES)[number], unknown>>) =>
  PRIME_SERVER_PATCHES.filter((k) => table[k] === true || (Array.isArray(table[k]) && table[k].length > 0));
