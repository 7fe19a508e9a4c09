import type { ConfigIssue } from "./issues";
import type { PrimeCommit } from "./types";
import { DEFAULT_ROUTER_RELEASE, ROUTER_RELEASES } from "./schema/router";

type Raw = Record<string, unknown>;

/*
 * Which prime-rl a file was written for. vllm-fleet follows prime-rl 559b447 (2026-08-21); prime-rl
 * 8324600 (83246000acc0cc273687a73df7a24be63f2ab800, packages/prime-rl-configs/src/prime_rl/configs/inference.py)
 * changed defaults a file does not spell out: max_loras 8 -> 1, max_cpu_loras (100) gone, router
 * policy consistent_hash -> sticky_least_loaded, vllm.enable_ep_weight_filter on, output_dir from
 * $PRL_OUTPUT_DIR, and its server always hands vLLM enable_prompt_tokens_details and enable_scale_out
 * (InferenceConfig.to_namespace). A file keeps 559b447's meaning unless [vllm_fleet] prime_rl_commit
 * names the later commit, or it uses a key only the later commit has (559b447 refuses such a file,
 * so there is no older meaning to keep).
 */

/** The commits whose defaults vllm-fleet knows, oldest first. */
export const PRIME_RL_COMMITS = ["559b447", "8324600"] as const;
export const DEFAULT_PRIME_RL_COMMIT: PrimeCommit = "559b447";
/** The later commit whose defaults a file may ask for. */
export const LATER_PRIME_RL_COMMIT: PrimeCommit = "8324600";

/** InferenceConfig keys (at the inference root) that 8324600 has and 559b447 does not. */
export const LATER_INFERENCE_KEYS = [
  "renderer",
  "enable_return_sampling_mask",
  "enable_return_sampling_mask_logprobs",
  "fp8_ue8m0_weight_scales",
  "fp8_stochastic_weight_rounding",
  "vllm_plugins",
] as const;

/** VllmConfig's defaults per commit (inference.py): max_loras, and max_cpu_loras, which 8324600 dropped. */
export const PRIME_LORA_DEFAULTS: Record<PrimeCommit, { max_loras: number; max_cpu_loras?: number }> = {
  "559b447": { max_loras: 8, max_cpu_loras: 100 },
  "8324600": { max_loras: 1 },
};

/** VllmRouterConfig.policy's default per commit. */
export const PRIME_ROUTER_POLICY: Record<PrimeCommit, string> = {
  "559b447": "consistent_hash",
  "8324600": "sticky_least_loaded",
};

/** 8324600's VllmConfig.quantization (QuantizationType): the one online method it takes. */
export const PRIME_QUANTIZATION = ["fp8_per_block"];

/** The commit a file is read with, and why (for the plan's notes). */
export function primeCommitOf(file: Raw, inf: Raw, at: (k: string) => string): { commit: PrimeCommit; why?: string } {
  const named = (file.vllm_fleet as Raw | undefined)?.prime_rl_commit as PrimeCommit | undefined;
  if (named) return { commit: named };
  const later = LATER_INFERENCE_KEYS.filter((k) => inf[k] !== undefined);
  if (!later.length) return { commit: DEFAULT_PRIME_RL_COMMIT };
  return {
    commit: LATER_PRIME_RL_COMMIT,
    why: `${later.map(at).join(", ")} ${later.length === 1 ? "exists" : "exist"} only since prime-rl 8324600: the file is read with that commit's defaults ([vllm_fleet] prime_rl_commit = "8324600" says so explicitly)`,
  };
}

/** A key only the later commit has, in a file that names 559b447: refused as 559b447 refuses it. */
export function laterKeyIssues(commit: PrimeCommit, inf: Raw, at: (k: string) => string): ConfigIssue[] {
  if (commit !== "559b447") return [];
  return LATER_INFERENCE_KEYS.filter((k) => inf[k] !== undefined).map((k) => ({
    path: at(k),
    message: `is not a key of prime-rl 559b447 ([vllm_fleet] prime_rl_commit = "559b447"); it exists since prime-rl 8324600: set prime_rl_commit = "8324600"`,
  }));
}

/**
 * A vllm-router policy only one router build serves, with no release named: plan with that build and
 * say so (prime-rl installs PrimeIntellect's router v0.2.1 itself, the one build with
 * sticky_least_loaded). A named release is kept, and refused by the rule "the router release serves
 * the policy" when it lacks the policy.
 */
export function impliedRouterRelease(policy: string | undefined): { release: string; note: string } | undefined {
  if (policy === undefined) return undefined;
  const serving = Object.entries(ROUTER_RELEASES).filter(([, r]) => r.policies.includes(policy));
  if (serving.length !== 1 || serving[0][0] === DEFAULT_ROUTER_RELEASE) return undefined;
  const [release, build] = serving[0];
  return {
    release,
    note: `router policy "${policy}" is served only by ${build.title}: planning with [vllm_fleet] router_release = "${release}", as prime-rl installs that router itself; install ${build.install} where the launcher finds vllm-router`,
  };
}
