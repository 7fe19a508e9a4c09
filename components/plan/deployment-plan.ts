import type { CachePlan } from "./cache";
import type { Shape } from "../config/types";
import type { GpuMemoryPlan } from "./gpu-memory";
import type { Role } from "./roles";
import type { TargetSettings } from "./target-settings";
import type { Value } from "./values";

export type { Role } from "./roles";
export type { KubernetesSettings, LocalSettings, SlurmSettings, TargetSettings } from "./target-settings";

import type { EngineName } from "./engine-names";

export type { EngineName } from "./engine-names";

/** What an engine process needs from its host beyond its GPUs, for the target to grant. */
export interface EngineNeeds {
  /**
   * The keys (as the stack file spells them) that make it pin host memory: offloaded KV blocks,
   * NIXL/RDMA registration (P/D), or DeepEP's NVSHMEM buffers when its replica spans nodes
   * (registration is bounded by RLIMIT_MEMLOCK). Empty: it pins none. A target that grants the
   * right to pin (Kubernetes' IPC_LOCK) names them where that costs something (a Pod Security level).
   */
  pinsMemory: string[];
}

/** The fleet's KV cache tiers beyond GPU memory, for the target to provide memory and volumes for. */
export interface KvTiers {
  /**
   * native: the engine holds the CPU tier in its own process; mooncake: a store client per node
   * does; lmcache: an LMCache server per node does.
   */
  store: "native" | "mooncake" | "lmcache";
  /** The CPU tier in bytes: per engine instance (native) or per node (mooncake, lmcache). */
  cpuBytes: number;
  /** The disk tier's directory on every node, when there is one. */
  diskPath?: string;
}

/**
 * One engine process (`vllm serve`, prime-rl's `inference` or SGLang's server): one per node serving
 * all the node's DP ranks (internal or hybrid load balancing), or with engine_processes = "per_rank"
 * one per DP rank (vLLM's external load balancing).
 */
export interface EngineProcess {
  /** The engine it runs (engines.ts), whose routes and metrics the targets and the fleet CLI read. */
  engine: EngineName;
  /** Stable id, e.g. `i0-prefill1-n0`: island, role, replica of that role, node within the replica. */
  id: string;
  island: number;
  /**
   * The processes that restart together when one of them exits (host targets' keeper): a replica's
   * every node and DP rank, as LeaderWorkerSet's RecreateGroupOnPodRestart recreates a group; a
   * per-rank engine outside a DP group alone.
   */
  group: string;
  role: Role;
  /** Replica index within its role. */
  replica: number;
  /** Node index within the island (0 is the island head). */
  node: number;
  /** Node index within this replica. */
  nodeInReplica: number;
  /** GPU indices on the node. */
  gpus: number[];
  tp: number;
  /**
   * Data parallelism of the replica this process belongs to; undefined when dp = 1. `startRank` is
   * the first DP rank the process serves; in "external" mode (one process per rank, its own API
   * server) the only one, and `local` is 1.
   */
  dp?: {
    size: number;
    local: number;
    startRank: number;
    address: Value;
    rpcPort: number;
    mode: "internal" | "hybrid" | "external";
  };
  /** API port; undefined for a headless process (it serves no HTTP). */
  port?: number;
  apiServerCount: number;
  headless: boolean;
  /** Environment in export order: defaults, env_vars, role env, then per-process values. */
  env: [string, Value][];
  /** Full command line, starting with the engine's program (`vllm serve <model>`, ...). */
  argv: Value[];
  /** vLLM's KV connector (P/D over NIXL, offload tiers). */
  kvTransferConfig?: Record<string, unknown>;
  /** NIXL side-channel ports this process uses (one per local DP rank): vLLM's P/D. */
  nixlPorts?: number[];
  /** SGLang's P/D: how KV moves, and the bootstrap port a prefill server hands its KV out from. */
  disaggregation?: { transferBackend: "nixl" | "mooncake"; bootstrapPort?: number };
  needs: EngineNeeds;
}

export interface NodePlan {
  /** Index within the island. */
  index: number;
  /** Symbolic name used in plans and logs: i<island>-n<index>. */
  name: string;
  role: Role;
  replica: number;
  gpusUsed: number;
  engines: string[];
  /** Auxiliary processes on this node: router, llm-d pieces, Mooncake. */
  services: string[];
}

/** The routers that are one HTTP process in front of the engines: vllm-router, or sglang-router for SGLang. */
export type HttpRouterKind = "vllm-router" | "sglang-router";

export interface HttpRouterPlan {
  kind: HttpRouterKind;
  /**
   * It holds the fleet's API key (--api-key): sglang-router discovers keyed workers only with it,
   * and then demands it of clients. vllm-router holds none: it passes the client's header through.
   */
  holdsApiKey: boolean;
  node: number;
  port: number;
  metricsPort: number;
  pd: boolean;
  /** How it starts when told its workers at start (--worker-urls, or --prefill/--decode in P/D mode). */
  argv: Value[];
  /**
   * Its follower: what keeps it to the engines that serve current weights at run time (a restarted
   * engine taken out, told again once current), where the router can be told its workers then
   * (see followOf in router-plan.ts).
   */
  follow?: RouterFollow;
  /**
   * How a host starts it before its engines serve and tells it each engine as that engine answers
   * /health, where the router serves POST /add_worker (see followOf in router-plan.ts).
   */
  lateWorkers?: LateWorkers;
}

/**
 * How a router is told, at run time, to take a worker out and in again:
 * - "query": POST /remove_worker?url=... and /add_worker?url=... (vllm-router 0.1.17);
 * - "workers": DELETE /workers/<id> (its id from GET /workers) and POST /workers {"url": ...}
 *   (sglang-router 0.3.2, measured with the pinned build: docs/restarts.md);
 * - "file": its endpoints file rewritten without the worker's entry, and with it again (llm-d's EPP
 *   with file-discovery and watchFile, which reloads on a change and deletes the endpoints a new load
 *   lacks: llm-d-router v0.10.0, pkg/epp/framework/plugins/datalayer/discovery/file).
 */
export type WorkerRoutes = "query" | "workers" | "file";

/** What the router's follower needs: the router, its routes, each worker and the engines' version route. */
export interface RouterFollow {
  routes: WorkerRoutes;
  /** Its own address, for the calls from its node (routes "file": its endpoints file). */
  url: Value;
  /** The worker URLs it follows. */
  urls: Value[];
  /** Each URL's engine, in the order of urls: its restart group and node (the follower sees its restarts). */
  origins: { group: string; node: number }[];
  /** The engines' weight-version route (Engine.routes.weightVersion): a restarted one must match the others'. */
  weightVersion: string;
}

/** A router started without workers, then told each one (POST /add_worker, at follow.url) as it comes up. */
export interface LateWorkers {
  /** Its start, without --worker-urls. */
  argv: Value[];
  /** Workers it lists once every URL is added: a URL behind --intra-node-data-parallel-size counts once per rank. */
  count: number;
}

export interface LlmdPlan {
  kind: "llm-d";
  node: number;
  /** Envoy's listener: the client-facing port. */
  port: number;
  pd: boolean;
  epp: { argv: Value[]; config: Record<string, unknown>; grpcPort: number; healthPort: number; metricsPort: number };
  /** file-discovery entries; addresses must be IPs at run time. `worker`: the URL of the engine behind it. */
  endpoints: { name: string; address: Value; port: number; role?: "prefill" | "decode"; worker: Value }[];
  envoy: { argv: Value[]; config: Record<string, unknown>; adminPort: number };
  sidecars: { node: number; port: number; vllmPort: number; argv: Value[] }[];
  /** Its follower on a host, through its endpoints file (file discovery; on Kubernetes the EPP follows Ready). */
  follow?: RouterFollow;
}

export type RouterPlan = HttpRouterPlan | LlmdPlan;

export interface MooncakePlan {
  headNode: number;
  masterPort: number;
  metadataPort: number;
  clientPort: number;
  /** How long a node waits for its client to listen before it starts the client again (host/processes.ts). */
  clientListenS: number;
  master: { argv: Value[] };
  clients: { node: number; argv: Value[] }[];
  /** Contents of MOONCAKE_CONFIG_PATH for the engines on every node. */
  engineConfig: Record<string, Value | number | boolean>;
  diskPath?: string;
}

/** LMCache's server on every node of an island, which that node's engines reach over LMCacheMPConnector. */
export interface LmcachePlan {
  /** Its ZMQ port (the connector's lmcache.mp.port) and HTTP frontend. */
  port: number;
  httpPort: number;
  /** How long a node waits for its server to listen before starting it again (host/processes.ts). */
  listenS: number;
  servers: { node: number; argv: Value[] }[];
}

/** A URL whose host is a node of an island. */
export interface NodeUrl {
  node: number;
  port: number;
  path: string;
}

/** Where an island's router and engines will listen, as node URLs (hosts are known only at run time). */
export interface EndpointsPlan {
  island: number;
  /** Where clients send requests (`.../v1`); undefined without a router (then the single engine). */
  router?: NodeUrl;
  /** Every engine's admin base URL, in the deterministic order trainers rely on. */
  engines: { id: string; role: Role; url: NodeUrl }[];
}

export interface IslandPlan {
  index: number;
  name: string;
  nodes: NodePlan[];
  engines: EngineProcess[];
  router?: RouterPlan;
  mooncake?: MooncakePlan;
  lmcache?: LmcachePlan;
  /** Its folder in the fleet's compile and model cache, less the engine version the host adds (cache.ts). */
  cache: CachePlan;
  endpoints: EndpointsPlan;
  /** What its activity monitor scrapes, and its idle release (host targets: templates/host/activity.sh). */
  activity: ActivityPlan;
}

/**
 * An island's activity monitor: every serving engine's /metrics (requests running, waiting and
 * finished, by its engine's metric names) and pause route, and `idle_release_after` in seconds (null: off).
 */
export interface ActivityPlan {
  idleReleaseAfterS: number | null;
  engines: {
    id: string;
    node: number;
    port: number;
    metrics: string;
    running: string;
    waiting: string;
    /** The counter of finished requests: one that grew since the last scrape was served. */
    finished: string;
    /** Its engine's pausedRoute; null where it has none. */
    paused: string | null;
  }[];
}

export interface DeploymentPlan {
  stack: string;
  /** What serves the model (`engine`): every engine process of the plan runs it. */
  engine: EngineName;
  /** The service of the stack this plan deploys; undefined for a stack's one service (naming.ts). */
  service?: string;
  model: string;
  shape: Shape;
  target: TargetSettings["kind"];
  islands: IslandPlan[];
  totals: { nodes: number; gpus: number; gpusAllocated: number; routers: number; engines: number };
  /** Per GPU: weights, KV cache and its capacity; undefined when the catalog has no arch facts for the model. */
  memory?: GpuMemoryPlan;
  warnings: string[];
  notes: string[];
  /** The target's own settings: everything a target reads besides the topology above. */
  settings: TargetSettings;
  /** GPUs per node (`deployment.gpus_per_node`): what a whole node offers. */
  gpusPerNode: number;
  /** `output_dir`: the fleet's folder on the cluster, when the stack file names one. */
  outputDir?: string;
  /** `dry_run`: render and upload the job script without submitting it. */
  dryRun: boolean;
  /** KV cache offload beyond GPU memory; null without. */
  kvTiers: KvTiers | null;
  /**
   * The user's own KV connector (vllm_extra.kv_transfer_config; `key` as the file spells it), passed
   * to vLLM unchanged: the fleet does not run or manage its store. null when the planner builds it.
   */
  ownKvConnector: { key: string } | null;
  /** Every island's router as configured (router-plan.ts routerSettings); null without one. */
  routerSettings: RouterSettings | null;
  /** What a host target does when one of an island's processes exits (`restart`). */
  restart: RestartPlan;
  /** `cost.gpu_hour_price`: what `fleet cost` prices a GPU-hour at; unset, it reports hours only. */
  gpuHourPrice?: number;
}

/**
 * `restart` in the units a launch script computes with: whole seconds for the window (bash
 * arithmetic is integer) and tenths of a second for the waits.
 */
export interface RestartPlan {
  /** Restarts a group may have within windowS before the island fails; 0: the first exit fails it. */
  maxRestarts: number;
  windowS: number;
  /** Wait before a restart: backoffDs x 2^(restarts within the window so far), at most maxBackoffDs. */
  backoffDs: number;
  maxBackoffDs: number;
}

/** What the trainer contract says of an island's router is derived from these (trainer/router-contract.ts). */
export interface RouterSettings {
  kind: RouterPlan["kind"];
  /** `--policy`; null for llm-d. */
  policy: string | null;
  /** vllm-router's router.release; null for the others. */
  release: string | null;
}
