import { z } from "zod";
import { TARGETS } from "../config/target-registry";
import { ROLES } from "../plan/roles";

/*
 * The trainer contract: the `endpoints` output every stack exports. Defined once, here: the
 * TypeScript types are inferred from it, readFleet validates a StackReference with it, and
 * `npm run schema` writes it as schema/endpoints.schema.json (the descriptions are its docs).
 */

export const roleSchema = z
  .enum(ROLES)
  .describe("what the engine does: a whole replica, or the prefill or decode side of P/D");

const urls = (what: string) => z.array(z.string()).describe(what);

/**
 * What serves the fleet, as a trainer must know it: which admin routes the admin URLs answer
 * (docs/trainer.md). "prime-rl" is prime-rl's server around vLLM; "vllm" plain `vllm serve`;
 * "sglang" `python -m sglang.launch_server`.
 */
export const TRAINER_ENGINES = ["vllm", "prime-rl", "sglang"] as const;

export const engineSchema = z
  .enum(TRAINER_ENGINES)
  .describe(
    'what every engine runs: "vllm" (`vllm serve`), "prime-rl" (prime-rl\'s server around vLLM) or "sglang" (`sglang.launch_server`); it decides which admin routes the admin URLs answer',
  );

export const trainerBlocksSchema = z
  .object({
    primeRl: z
      .string()
      .nullable()
      .describe(
        "prime-rl's `[orchestrator.model.client]` as TOML: `base_url` (a list; prime-rl round-robins it) and `admin_base_url`; P/D adds `inference_metrics_roles`. Null for engine = \"sglang\": prime-rl's orchestrator updates weights through prime-rl's own admin routes, which SGLang's server does not serve",
      ),
    nexrl: z
      .string()
      .describe(
        "NexRL's `inference_service` as YAML (its client appends `/v1` itself; the key is read with `${oc.env:VLLM_API_KEY}`)",
      ),
    verl: z
      .string()
      .describe(
        "VERL's Hydra overrides (lines for `python -m verl.trainer.main_ppo`; `#` lines are comments): VERL starts and owns its rollout engines, so its rollout cannot use this fleet; the overrides give every VERL Ray worker `OPENAI_BASE_URL` for the user's own code (a custom reward function as a judge, a tool, an agent loop)",
      ),
    openaiEnv: z
      .record(z.string(), z.string())
      .describe(
        "the OpenAI SDK's environment: `OPENAI_BASE_URL` (and `OPENAI_API_KEY=EMPTY` when the fleet has no key); the key itself is the secret `apiKey` output, never in this block",
      ),
  })
  .describe("ready-made client settings for the trainers our users run, as text they paste or template in");

/** The routers an island may have (router.type, less "none"). */
export const ROUTER_KINDS = ["vllm-router", "sglang-router", "llm-d"] as const;

export const islandRouterSchema = z
  .object({
    kind: z
      .enum(ROUTER_KINDS)
      .describe(
        'which router fronts the island: "vllm-router", "sglang-router" (SGLang engines) or "llm-d" (EPP + Envoy)',
      ),
    policy: z
      .string()
      .nullable()
      .describe(
        "the router's load-balancing policy (`--policy`), e.g. `sticky_least_loaded`; null for llm-d, whose EPP scores by plugins",
      ),
    release: z
      .string()
      .nullable()
      .describe(
        'vllm-router: which build runs (`router.release`): "vllm-router-0.1.17" (the pinned upstream) or "primeintellect-v0.2.1" (PrimeIntellect\'s fork); null for the other routers',
      ),
    finishSession: z
      .boolean()
      .describe(
        "whether the router serves `POST <router>/finish_session?session_id=<id>` (the router URL without `/v1`), which releases a session `sticky_least_loaded` holds on an engine; prime-rl's orchestrator calls it when a rollout ends. False: do not call it (vllm-router 0.1.17 would pass the unknown path to one engine)",
      ),
    sessionHeader: z
      .string()
      .nullable()
      .describe(
        "the request header that keeps a session's requests on one engine under this policy (vllm-router's consistent_hash and sticky_least_loaded: `X-Session-ID`, as prime-rl sends its trajectory id; sglang-router's manual: `X-SMG-Routing-Key`), or null when the policy pins no session",
      ),
  })
  .describe("the island's router, as a client needs to know it to keep sessions together and release them");

export const islandEndpointsSchema = z
  .object({
    island: z.number().int().describe("the island's index"),
    model: z.string().describe("the served model id (what `/v1/models` lists)"),
    routerUrl: z
      .string()
      .nullable()
      .describe("the island's router (`.../v1`), or null when engines are addressed directly"),
    adminUrls: urls(
      "every engine's admin base (vLLM and prime-rl: `.../v1`; SGLang: `http://host:port`, where its weight-update routes live) in the planner's order: node-major, rank-minor; P/D prefill first. Weight updates go here, never through a router",
    ),
    roles: z.array(roleSchema).describe("the role of each admin URL, position by position"),
    engineCount: z.number().int().describe("how many admin URLs"),
    // Optional: endpoints written before it existed still validate.
    router: islandRouterSchema
      .nullable()
      .optional()
      .describe("the island's router (see its fields), or null when engines are addressed directly"),
    trainers: trainerBlocksSchema,
  })
  .describe("one island as a trainer sees it: where to send rollouts, and every engine for weight updates");

export const fleetEndpointsSchema = z
  .object({
    model: z.string().describe("the served model id (what `/v1/models` lists)"),
    target: z.enum(TARGETS).describe("where the fleet runs"),
    engine: engineSchema,
    baseUrls: urls(
      "where OpenAI-style requests go: each island's router (`.../v1`), or each engine of a router-less island",
    ),
    adminUrls: urls(
      "every engine's admin base (vLLM and prime-rl: `.../v1`; SGLang: `http://host:port`), island by island in the planner's order",
    ),
    roles: z.array(roleSchema).describe("the role of each admin URL, position by position"),
    engineCount: z.number().int().describe("how many admin URLs"),
    apiKeyRequired: z
      .boolean()
      .describe("whether the engines require `Authorization: Bearer <apiKey>` (the key is the secret `apiKey` output)"),
    islands: z.array(islandEndpointsSchema).describe("the same per island, in island order"),
    trainers: trainerBlocksSchema,
  })
  .describe("the vllm-fleet trainer contract: the `endpoints` stack output");

export const stackEndpointsSchema = z
  .object({
    target: z.enum(TARGETS).describe("where the fleet runs"),
    apiKeyRequired: z
      .boolean()
      .describe("whether the engines require `Authorization: Bearer <apiKey>` (the key is the secret `apiKey` output)"),
    engineCount: z.number().int().describe("how many engines the stack's services have in all"),
    services: z
      .record(z.string(), fleetEndpointsSchema)
      .describe("each service (`[services.<name>]`) as a trainer contract of its own, by name in the file's order"),
  })
  .describe(
    "the `endpoints` output of a stack with several services: each service's trainer contract by name (readFleet's `service` picks one)",
  );

/** The `endpoints` output: one service's contract, or a stack of several services. */
export const endpointsOutputSchema = z.union([fleetEndpointsSchema, stackEndpointsSchema]);

export type TrainerEngine = z.infer<typeof engineSchema>;
export type TrainerBlocks = z.infer<typeof trainerBlocksSchema>;
export type StackEndpoints = z.infer<typeof stackEndpointsSchema>;
export type EndpointsOutput = z.infer<typeof endpointsOutputSchema>;
export type IslandEndpoints = z.infer<typeof islandEndpointsSchema>;
export type IslandRouter = z.infer<typeof islandRouterSchema>;
export type FleetEndpoints = z.infer<typeof fleetEndpointsSchema>;
