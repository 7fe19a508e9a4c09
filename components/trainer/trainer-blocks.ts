import * as TOML from "@iarna/toml";
import { stringify as toYaml } from "yaml";
import type { Role } from "../plan/deployment-plan";
import { sharedRoutes } from "../plan/engines";
import type { TrainerBlocks, TrainerEngine } from "./contract";
import { engineNamed } from "../plan/engines";

export interface TrainerBlockInput {
  /** What every engine runs: it decides which admin routes `adminUrls` answer. */
  engine: TrainerEngine;
  model: string;
  /** Where OpenAI-style requests go, with the API path (`.../v1`), whatever the engine. */
  baseUrls: string[];
  /**
   * Each engine's admin base, where that engine takes weight updates: `http://host:port/v1` for
   * vLLM and prime-rl's server, `http://host:port` for SGLang (its `/update_weights_from_disk` and
   * the other weight-update routes sit at the root).
   */
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
function primeRl({ engine, baseUrls, adminUrls, roles }: TrainerBlockInput): string | null {
  // Engine.primeRlDrivesWeights: its admin routes are prime-rl's (or it has none the orchestrator knows).
  if (!engineNamed(engine).primeRlDrivesWeights) return null;
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
 * Engine-neutral: it sends only OpenAI requests, and `freeze_for_weight_sync` holds NexRL's own
 * rollout workers during a weight sync, not an engine.
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

/** The OpenAI SDKs read OPENAI_BASE_URL (with `/v1`) and OPENAI_API_KEY. Engine-neutral. */
function openaiEnv({ baseUrls, apiKeyRequired }: TrainerBlockInput): Record<string, string> {
  return {
    ...(baseUrls[0] !== undefined ? { OPENAI_BASE_URL: baseUrls[0] } : {}),
    // vLLM accepts any key when it has none; the SDK refuses to start without one.
    ...(apiKeyRequired ? {} : { OPENAI_API_KEY: "EMPTY" }),
  };
}

/** Where VERL's config hands environment variables to every Ray worker of a run. */
const VERL_WORKER_ENV = "ray_kwargs.ray_init.runtime_env.env_vars";

/**
 * VERL's Hydra overrides, for `python -m verl.trainer.main_ppo` (volcengine/verl b178a3cd). VERL
 * starts its rollout engines itself, as Ray actors (verl/workers/rollout/replica.py:
 * hybrid, colocated or standalone, each launching its servers), its agent loop generates through
 * those actors' handles, not URLs (verl/experimental/agent_loop/agent_loop.py), and it updates their
 * weights itself (SGLang: `/update_weights_from_tensor` with CUDA IPC handles from the colocated
 * trainer ranks, sglang_rollout/sglang_rollout.py; disaggregated: its checkpoint engine over
 * NCCL/NIXL between its own actors). `actor_rollout_ref.rollout` has no key for a server address
 * (its `agent.custom_async_server` is declared, verl/workers/config/rollout.py, but read nowhere
 * in verl/). So no block can point VERL's training rollouts at this fleet, whatever its engine.
 *
 * What VERL can do with it: the user's own code in VERL's workers (a custom reward function as a
 * judge, a tool, an agent loop) calls it through the OpenAI SDK. VERL's main_ppo.py merges
 * `ray_kwargs.ray_init.runtime_env` into `ray.init`, so the OpenAI variables set there reach every
 * worker. The key is never written there: main_ppo.py prints those kwargs.
 */
function verl(input: TrainerBlockInput): string {
  const env = openaiEnv(input);
  return (
    [
      "# VERL starts and updates its own rollout engines: actor_rollout_ref.rollout cannot use this fleet.",
      "# These give every VERL Ray worker the fleet's OpenAI endpoint, for a reward function, tool or agent loop.",
      ...(input.apiKeyRequired
        ? ["# Set OPENAI_API_KEY in the Ray nodes' environment: main_ppo.py prints ray_kwargs, so not here."]
        : []),
      // `+`: VERL's YAML does not declare runtime_env, main_ppo.py reads it (Hydra appends the key).
      ...Object.entries(env).map(([name, value]) => `+${VERL_WORKER_ENV}.${name}=${value}`),
    ].join("\n") + "\n"
  );
}

export function trainerBlocks(input: TrainerBlockInput): TrainerBlocks {
  return { primeRl: primeRl(input), nexrl: nexrl(input), verl: verl(input), openaiEnv: openaiEnv(input) };
}
