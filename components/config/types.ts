import type { CatalogEntry } from "./schema/catalog";
import type { ExtraValue } from "./vllm-flags";

/** The canonical, fully defaulted stack configuration both layouts normalise into. */
export interface FleetConfig {
  /** Which stack-file layout the user wrote; error paths are reported in that layout's terms. */
  layout: "standalone" | "rl";
  model: ModelConfig;
  parallel: { tp: number; dp: number };
  deployment: DeploymentConfig;
  router: RouterConfig;
  kv_cache_offload: OffloadConfig | null;
  vllm_extra: Record<string, ExtraValue>;
  env_vars: Record<string, string>;
  server: { host?: string; port: number };
  /** Engine port when a router listens on server.port. */
  backend_port: number;
  enable_expert_parallel: boolean;
  enable_dbo: boolean;
  enable_eplb: boolean;
  enable_return_routed_experts: boolean;
  enable_lora: boolean;
  max_loras: number;
  /** Rounded up to a rank vLLM accepts. */
  max_lora_rank?: number;
  gpu_memory_utilization: number;
  /** undefined = vLLM's default. */
  enable_prefix_caching?: boolean;
  /** Copies of the whole inference island, each behind its own router (RL num_infer_replicas). */
  islands: number;
  target: SlurmTarget | KubernetesTarget;
  output_dir: string;
  dry_run: boolean;
  /** Canonical dotted paths of every key the user set (auto-setup rules depend on it). */
  explicit: ReadonlySet<string>;
  /** The RL layout's top-level [deployment] keys that constrain the island (checked, not deployed). */
  rl_deployment?: { type?: string; num_infer_nodes?: number };
  /** Facts worth telling the user that are not errors. */
  notes: string[];
  /**
   * The served model's catalog entry, for planners (GPU memory from `arch`, a `list` verb). Its
   * `launch` holds the catalog's defaults; the values in effect are `model`, `parallel`, ...
   */
  catalog?: CatalogEntry & { id: string };
}

export interface ModelConfig {
  name: string;
  max_model_len?: number;
  enforce_eager: boolean;
  dtype?: string;
  trust_remote_code: boolean;
  chat_template?: string;
  tool_call_parser?: string;
  reasoning_parser?: string;
}

/** What the GPU-memory planner knows about the boards (components/plan/gpu-memory.ts). */
export interface GpuFacts {
  gpus_per_node: number;
  gpu_type?: string;
  gpu_memory_gib?: number;
}

export type DeploymentConfig =
  | ({ type: "single_node" } & GpuFacts)
  | ({ type: "multi_node"; num_nodes: number } & GpuFacts)
  | ({
      type: "disaggregated";
      num_prefill_nodes: number;
      num_decode_nodes: number;
      num_prefill_replicas: number;
      num_decode_replicas: number;
      prefill_env_vars: Record<string, string>;
      decode_env_vars: Record<string, string>;
      prefill_port: number;
      decode_port: number;
    } & GpuFacts);

export type RouterConfig =
  | { type: "vllm-router"; policy: string }
  | {
      type: "llm-d";
      scorers: Record<string, number>;
      prefill_scorer_overrides: Record<string, number>;
      decode_scorer_overrides: Record<string, number>;
      non_cached_tokens: number;
      decode_sidecar_port: number;
    }
  | { type: "none" };

export type OffloadConfig =
  | { type: "native"; cpu: { num_bytes: number }; disk?: { path: string } }
  | { type: "mooncake"; cpu: { num_bytes: number }; disk?: { path: string }; device_name: string; protocol: string };

export type Launcher =
  | { type: "vllm"; bin_dir?: string }
  | { type: "venv"; path: string }
  | { type: "apptainer"; image: string; binds: string[] }
  | { type: "pyxis"; image: string; mounts: string[] };

export interface SlurmTarget {
  kind: "slurm";
  job_name: string;
  partition?: string;
  account?: string;
  qos?: string;
  time?: string;
  nodelist?: string;
  exclude?: string;
  constraint?: string;
  exclusive: boolean;
  gres?: string;
  pending_timeout: number;
  ready_timeout: number;
  launcher: Launcher;
}

export interface KubernetesTarget {
  kind: "kubernetes";
  namespace: string;
  image: string;
  router_image: string;
  epp_image: string;
  envoy_image: string;
  mooncake_image: string;
  sidecar_image: string;
  image_pull_secrets: string[];
  service_account?: string;
  node_selector: Record<string, string>;
  tolerations: { key?: string; operator?: string; value?: string; effect?: string }[];
  model_cache?: { pvc?: string; host_path?: string; mount_path: string };
  gpu_resource: string;
  shm_size: string;
  disk_offload_storage_class?: string;
  disk_offload_size: string;
  startup_timeout: number;
}

/** The four deployment shapes of seed 001. */
export type Shape = "single_node" | "multi_replica" | "wide_ep" | "disaggregated";

export function shapeOf(cfg: Pick<FleetConfig, "deployment" | "enable_expert_parallel">): Shape {
  switch (cfg.deployment.type) {
    case "single_node":
      return "single_node";
    case "multi_node":
      return cfg.enable_expert_parallel ? "wide_ep" : "multi_replica";
    case "disaggregated":
      return "disaggregated";
  }
}
