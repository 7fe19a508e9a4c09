import type { ConfigView } from "./fleet-config";
import { fail, type Rule } from "./rule";

/*
 * What the stack file's environment tables may set: nothing the launcher sets per process, no
 * credential, and vLLM's compile cache only in the format several writers can share.
 */

/**
 * Set by the launcher per process, or by prime-rl's launcher (its PROTECTED_ENV_VARS, in
 * prime-rl's packages/prime-rl-configs/src/prime_rl/configs/shared.py).
 */
export const PROTECTED_ENV = [
  "CUDA_VISIBLE_DEVICES",
  "PRL_RUN_ID",
  "PRL_RUN_NAME",
  "WANDB_RUN_ID",
  "WANDB_SHARED_MODE",
  "WANDB_SHARED_LABEL",
  "WANDB_SHARED_PRIMARY",
  "WANDB_SHARED_FINISHER",
  "VLLM_NIXL_SIDE_CHANNEL_HOST",
  "VLLM_NIXL_SIDE_CHANNEL_PORT",
  "VLLM_RPC_BASE_PATH",
  "MOONCAKE_CONFIG_PATH",
];

/** vLLM's compile cache format: "binary" is safe with several writers, "unpacked" is not (vllm envs.py). */
const COMPILE_FORMAT = "VLLM_COMPILE_CACHE_SAVE_FORMAT";

/** Credentials never belong in a stack file: they would land in scripts, logs and state. */
export const SECRET_ENV = /(^|_)(TOKEN|SECRET|PASSWORD|API_KEY|APIKEY)$|^HF_TOKEN$|^HUGGING_FACE_HUB_TOKEN$/i;

const envRule =
  (canonical: string, pick: (cfg: ConfigView) => Record<string, string> | undefined): Rule =>
  (cfg) =>
    Object.keys(pick(cfg) ?? {}).flatMap((name) => {
      const at = `${canonical}.${name}`;
      if (PROTECTED_ENV.includes(name))
        return fail(at, `${name} is set by the launcher per process and cannot be overridden`);
      if (SECRET_ENV.test(name)) {
        return fail(
          at,
          `${name} looks like a credential; secrets come from Pulumi config (pulumi config set --secret hfToken|apiKey ...), never from the stack file`,
        );
      }
      return [];
    });

const pdEnv = (key: "prefill_env_vars" | "decode_env_vars") => (cfg: ConfigView) =>
  cfg.deployment.type === "disaggregated" ? cfg.deployment[key] : undefined;

/** The rules over env_vars and the P/D roles' env tables (rules.ts RULES). */
export const ENV_RULES: Record<string, Rule> = {
  "the shared compile cache is written in the binary format": (cfg) =>
    (
      [
        ["env_vars", cfg.env_vars],
        ["deployment.prefill_env_vars", pdEnv("prefill_env_vars")(cfg)],
        ["deployment.decode_env_vars", pdEnv("decode_env_vars")(cfg)],
      ] as const
    ).flatMap(([key, env]) => {
      const v = env?.[COMPILE_FORMAT];
      return v !== undefined && v !== "binary"
        ? fail(
            `${key}.${COMPILE_FORMAT}`,
            `${COMPILE_FORMAT} = "${v}": engines share one compile cache folder (slurm.cache_dir, local.cache_dir, kubernetes.compile_cache), and vLLM's "unpacked" format is not safe with several processes writing it; only "binary" (vLLM's default) is; remove the key`,
          )
        : [];
    }),
  "protected env vars": envRule("env_vars", (cfg) => cfg.env_vars),
  "protected prefill env vars": envRule("deployment.prefill_env_vars", pdEnv("prefill_env_vars")),
  "protected decode env vars": envRule("deployment.decode_env_vars", pdEnv("decode_env_vars")),
};
