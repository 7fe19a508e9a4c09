/** The inference engines a plan can run (engines.ts): vLLM, prime-rl's server around it, and SGLang. */
export const ENGINE_NAMES = ["vllm", "prime-rl", "sglang"] as const;

export type EngineName = (typeof ENGINE_NAMES)[number];
