import * as TOML from "@iarna/toml";
import { stringify as toYaml } from "yaml";
import type { Role } from "../plan/deployment-plan";
import { sharedRoutes } from "../plan/engines";
import type { TrainerBlocks } from "./contract";

export interface TrainerBlockInput {
  model: string;
  baseUrls: string[];
  adminUrls: string[];
  roles: Role[];
  apiKeyRequired: boolean;
}

/**
 * prime-rl's ClientConfig takes `base_url` as a list (requests round-robin across it) and
 * `admin_base_url` as one URL per engine, so weight updates reach every engine, never a router.
 * Its `api_key_var` (default VLLM_API_KEY) names the env var holding the key: nothing secret here.
 * `inference_metrics_roles` pairs each admin URL with its role and exists only for P/D.
 */
function primeRl({ baseUrls, adminUrls, roles }: TrainerBlockInput): string {
  const pd = roles.some((r) => r !== "replica");
  const orchestrator: TOML.JsonMap = {
    ...(pd ? { inference_metrics_roles: roles } : {}),
    model: { client: { base_url: baseUrls, admin_base_url: adminUrls } },
  };
  return TOML.stringify({ orchestrator });
}

/** A base URL without the engines' API path (`/v1`), for clients that append it themselves. */
function withoutApiPath(url: string): string {
  const { api } = sharedRoutes();
  return url.endsWith(api) ? url.slice(0, -api.length) : url;
}

/**
 * NexRL's OpenAI client appends `/v1` to `base_url` itself and takes one server. Its config is
 * OmegaConf, so the key is read from the environment by interpolation rather than written here.
 */
function nexrl({ model, baseUrls, apiKeyRequired }: TrainerBlockInput): string {
  const base = baseUrls[0];
  return toYaml({
    inference_service: {
      api_key: apiKeyRequired ? "${oc.env:VLLM_API_KEY}" : "EMPTY",
      base_url: base === undefined ? null : withoutApiPath(base),
      model,
      tokenizer: model,
      freeze_for_weight_sync: true,
    },
  });
}

/** The OpenAI SDKs read OPENAI_BASE_URL (with `/v1`) and OPENAI_API_KEY. */
function openaiEnv({ baseUrls, apiKeyRequired }: TrainerBlockInput): Record<string, string> {
  return {
    ...(baseUrls[0] !== undefined ? { OPENAI_BASE_URL: baseUrls[0] } : {}),
    // vLLM accepts any key when it has none; the SDK refuses to start without one.
    ...(apiKeyRequired ? {} : { OPENAI_API_KEY: "EMPTY" }),
  };
}

export function trainerBlocks(input: TrainerBlockInput): TrainerBlocks {
  return { primeRl: primeRl(input), nexrl: nexrl(input), openaiEnv: openaiEnv(input) };
}
