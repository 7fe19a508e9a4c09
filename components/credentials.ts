/**
 * The credentials a fleet can carry. Each comes only from a Pulumi config secret (its name here is
 * the config key); engines read it as `env`; on SLURM it travels in a 0600 file named `file` in the
 * island's secrets directory, never inside a script.
 */
export const SECRETS = {
  hfToken: { env: "HF_TOKEN", file: "hf_token" },
  apiKey: { env: "VLLM_API_KEY", file: "api_key" },
} as const;

export type SecretName = keyof typeof SECRETS;

/** Configured secrets in a stable order, so rendered text does not depend on config order. */
export const secretOrder = (names: readonly SecretName[]): SecretName[] =>
  (Object.keys(SECRETS) as SecretName[]).filter((n) => names.includes(n));

/**
 * Why a credential's value cannot be used, or undefined: it must be one non-empty line of text. A
 * newline would split the files' payload (SLURM) and the readiness probes' `Authorization` header
 * line (every target); a NUL cannot pass through bash.
 */
export function secretValueProblem(value: string): string | undefined {
  if (value === "") return "no characters";
  if (/[\n\r\0]/.test(value)) return "a line break or NUL byte";
  return undefined;
}
