import type { FleetConfig } from "../config/types";
import type { Program } from "../upstream/check";
import type { EngineName, EngineProcess, Role } from "./deployment-plan";
import type { ReserveEstimate } from "./memory-reserve";
import type { ParserTable } from "./parser-detection";
import type { Value } from "./values";

/*
 * What an inference engine is to the rest of the program: how it is started and checked, and how
 * it answers. The planner asks the config's engine (engines.ts) for the command line, environment,
 * parsers and memory reserve; the targets and the fleet CLI read its routes and metric names.
 * vLLM is one implementation (engines/vllm/engine.ts), with prime-rl's server as a variant of it
 * (engines/vllm/prime-rl.ts); SGLang is the other (engines/sglang/engine.ts).
 */

/** The layout facts an engine's command line is built from. */
export type EngineLayout = Pick<
  EngineProcess,
  "role" | "port" | "tp" | "dp" | "apiServerCount" | "headless" | "kvTransferConfig" | "disaggregation"
>;

/** HTTP paths on an engine's API port. */
export interface EngineRoutes {
  /** 200 once the engine serves (liveness, readiness). */
  health: string;
  /** Lists the served model: the model is loaded and routable. */
  models: string;
  /** Prometheus exposition. */
  metrics: string;
  /** The OpenAI-compatible API base. */
  api: string;
  /** The base of the engine's own routes (weight updates, LoRA, cache flush): each engine's admin URL. */
  admin: string;
  /**
   * GET: `{"weight_version": ...}`, the weights the engine serves ("default" before any update):
   * a restarted engine is told to its router only once it serves the fleet's (host/processes.ts).
   */
  weightVersion: string;
}

/** The Prometheus series `fleet metrics` reads. */
export interface EngineMetricNames {
  /** Gauge: requests being generated now. */
  running: string;
  /** Gauge: requests queued for a slot. */
  waiting: string;
  /** Gauge: the share of the KV cache in use (0 to 1). */
  kvUsage: string;
  /** Counter: prompt tokens processed. */
  promptTokens: string;
  /** Counter: tokens generated. */
  generationTokens: string;
  /** Counter: prompt tokens looked up in the prefix cache. */
  prefixQueries: string;
  /** Counter: prompt tokens found in the prefix cache. */
  prefixHits: string;
  /** Counter: requests finished. */
  requests: string;
  /** Counter: requests preempted (vLLM) or retracted (SGLang) for lack of KV cache. */
  preemptions: string;
}

export interface Engine {
  /** Its name in the registry (engines.ts) and on each process it runs (`EngineProcess.engine`). */
  name: EngineName;
  /**
   * How a replica spanning nodes serves: "head" when only its head node runs the API and the other
   * nodes join its process group (SGLang's --nnodes); "layout" when the DP layout decides (vLLM:
   * every node serves its ranks, or the head alone with headless nodes).
   */
  spanningApi: "head" | "layout";
  /**
   * How prefill hands KV to decode: through a KV connector in the engine's config (vLLM's
   * NixlConnector, with a side channel per rank), or a bootstrap server on each prefill server that
   * the router names in every request (SGLang).
   */
  pdTransport: "kv-connector" | "bootstrap";
  /**
   * The weight version an engine reports (routes.weightVersion) before any update: a restarted
   * engine reports it again, serving the base model (Kubernetes' weights readiness check).
   */
  baseWeightVersion: string;
  /**
   * Whether prime-rl's orchestrator can update its weights through `admin_base_url`: it posts to
   * prime-rl's admin routes (`/update_weights`, `/init_broadcaster`, `/pause`, `/resume`), which
   * prime-rl's server has and `vllm serve` has in dev mode (docs/trainer.md); the trainer blocks
   * give prime-rl an `[orchestrator]` only for such an engine (trainer/trainer-blocks.ts).
   */
  primeRlDrivesWeights: boolean;
  /**
   * How its command line spells a server flag named as its upstream server spells it: as is, or,
   * for prime-rl's server, `--vllm.<name>` (the targets add --api-key and find the group-rank flag).
   */
  spellFlag(flag: string): string;
  /**
   * The name its server's process runs under, which a SLURM node's pre-launch cleanup kills by exact
   * name (pgrep -x) before the job starts its own.
   * @default undefined: it runs under an interpreter (python3 -m ...) no name tells apart
   */
  processName?: string;
  /**
   * The flag by which a node of a group spanning nodes learns its place, and its value per node index
   * for a group of `dpLocal` ranks per node: a LeaderWorkerSet worker template sets it at run time.
   */
  groupRank: { flag: string; perNode: (dpLocal: number) => number };
  /**
   * Flags a Kubernetes engine pod adds to a serving process's command line: quiet probe endpoints
   * and a drain of `drainSeconds` on SIGTERM, where the engine has them and the plan does not set them.
   */
  podFlags(e: Pick<EngineProcess, "argv">, drainSeconds: number): string[];
  /**
   * The full command line of one engine process. `gpuBytes`: one GPU's memory as the memory plan
   * knows it (undefined without arch facts), for an engine that sizes its memory pool itself.
   */
  argv(cfg: FleetConfig, layout: EngineLayout, gpuBytes?: number): Value[];
  /** Its container's name in a Kubernetes engine pod. */
  container: string;
  /**
   * The Python package whose installed version is the engine's version where it runs: it keys the
   * fleet's compile cache folder on a host (plan/cache.ts, host/cache.ts).
   */
  pythonPackage: string;
  /**
   * The environment variable it reads its API key from when --api-key is unset.
   * @default undefined (the flag only, or `apiKeyConfig`)
   */
  apiKeyEnv?: string;
  /**
   * Without such a variable: a config file of flags it reads (`flag FILE`), where the key can go as
   * `key: ...` instead of on the command line.
   * @default undefined (the flag only)
   */
  apiKeyConfig?: { flag: string; key: string };
  /** The upstream flag manifest its command lines are checked against (components/upstream/check.ts). */
  manifest: Program;
  /**
   * Which release of that manifest the config names (vLLM's vllm_version), where it has several.
   * @default undefined: the manifest's only (or newest) release
   */
  manifestVariant?(cfg: FleetConfig): string;
  /** The arguments of `argv` that manifest checks, at the release `variant` (manifestVariant). */
  manifestArgs(argv: Value[], variant?: string): Value[];
  /** The environment in export order, `perProcess` last but for what the engine sets in-process. */
  env(cfg: FleetConfig, role: Role, perProcess: [string, Value][]): [string, Value][];
  /** The tables `tool_call_parser = "auto"` and `reasoning_parser = "auto"` pick from. */
  parsers(cfg: FleetConfig): { tool: ParserTable; reasoning: ParserTable };
  /** What the engine keeps on each GPU outside weights and KV cache. */
  memoryReserve: ReserveEstimate;
  /** Its HTTP paths (health, models, metrics, API and admin bases, weight version): the targets, the fleet CLI and the Python client read them. */
  routes: EngineRoutes;
  /** The Prometheus series `fleet metrics` and the Python client's metrics() read. */
  metrics: EngineMetricNames;
  /**
   * GET: `{"is_paused": true}` while a trainer has paused it for a weight update: the island's
   * activity monitor counts it paused, not idle (templates/host/activity.sh.mustache).
   * @default undefined: it has no such route, and a pause shows only as requests waiting
   */
  pausedRoute?: string;
  /**
   * The flags that start it behind the restart gate (templates/host/restart_gate.py, an ASGI
   * middleware): on a host, an engine that restarts where no router's follower keeps it out answers
   * 503 to everything but its weights' routes, /health too, until it serves the fleet's weights
   * (helpers.sh fleet_gate_close, fleet_catch_up). Unset: it may take requests while it loads them.
   * @default undefined (no gate)
   */
  restartGate?: string[];
  /**
   * How a restart can start it on the fleet's weights themselves, where the island's weights record
   * is a single update from a checkpoint folder (helpers.sh fleet_resume_prepare): the record call's
   * path and the body's key that names the folder, the flags that start it on that folder and
   * report the record's version, and `keep`: flags that keep what the base model's name also
   * decided (the served name, the tokenizer), unless `argv` sets them. For an engine without a
   * restart gate, so a restart no router's follower watches never serves the base weights.
   * @default undefined (it starts on the base model and replays the record)
   */
  startOnRecord?: {
    call: string;
    dirKey: string;
    dirFlag: string;
    versionFlag: string;
    keep(argv: Value[]): Value[];
  };
}
