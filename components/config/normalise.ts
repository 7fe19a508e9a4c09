import { type Catalog, lookupModel, type ResolvedModel } from "./catalog";
import type { ConfigIssue } from "./issues";
import { UserPaths } from "./paths";
import type { RlLayout, StandaloneLayout } from "./schema/layouts";
import type { DeploymentConfig, FleetConfig, KubernetesTarget, OffloadConfig, RouterConfig, SlurmTarget } from "./types";
import { checkVllmExtra, VLLM_FLAGS } from "./vllm-flags";

type Raw = Record<string, any>;

export const DEFAULTS = {
  gpus_per_node: 8,
  num_nodes: 2,
  server_port: 8000,
  prefill_port: 8100,
  decode_port: 8200,
  gpu_memory_utilization: 0.9,
  max_loras: 8,
  job_name: "vllm-fleet",
  pending_timeout: 3600,
  ready_timeout: 3600,
  llmd: {
    scorers: { "prefix-cache-scorer": 3.0, "active-request-scorer": 2.0 },
    prefill_scorer_overrides: { "queue-scorer": 2.0, "kv-cache-utilization-scorer": 2.0 },
    decode_scorer_overrides: {},
    non_cached_tokens: 16,
    decode_sidecar_port: 8300,
  },
  kubernetes: {
    namespace: "default",
    image: "vllm/vllm-openai:v0.28.0",
    router_image: "ghcr.io/vllm-project/router:latest",
    epp_image: "ghcr.io/llm-d/llm-d-router:v0.10.0",
    envoy_image: "envoyproxy/envoy:v1.36.0",
    mooncake_image: "vllm/vllm-openai:v0.28.0",
    sidecar_image: "ghcr.io/llm-d/llm-d-routing-sidecar:v0.10.0",
    gpu_resource: "nvidia.com/gpu",
    shm_size: "16Gi",
    disk_offload_size: "500Gi",
    startup_timeout: 2700,
  },
} as const;

/** Maps either layout onto canonical names, before defaults (so "was it set?" stays answerable). */
export function toCanonicalInput(parsed: Raw, layout: "standalone" | "rl", paths: UserPaths): Raw {
  if (layout === "standalone") {
    const s = parsed as StandaloneLayout;
    const { router, ...deployment } = (s.deployment ?? {}) as Raw;
    return dropUndefined({
      ...pickInference(s as Raw),
      model: s.model,
      deployment: s.deployment ? deployment : undefined,
      router,
      slurm: s.slurm,
      kubernetes: s.kubernetes,
      output_dir: outputDir(s as Raw, paths),
      dry_run: s.dry_run,
    });
  }
  const r = parsed as RlLayout;
  const inf = r.inference as Raw;
  const { router, ...deployment } = (inf.deployment ?? {}) as Raw;
  // The loader expanded `model = "<id>"` into a table before validation.
  let model = inf.model as Raw | undefined;
  if (!model && r.model) {
    model = { name: r.model.name };
    paths.record("model.name", "model.name");
  }
  // prime-rl's auto_setup_router_replay: the trainer's router replay forces routed experts on.
  const replay = r.trainer?.enable_router_replay === true;
  const routedExperts = replay ? true : inf.enable_return_routed_experts;
  if (replay) paths.record("enable_return_routed_experts", "trainer.enable_router_replay");
  return dropUndefined({
    ...pickInference(inf),
    model,
    deployment: inf.deployment ? deployment : undefined,
    router,
    enable_return_routed_experts: routedExperts,
    islands: r.deployment?.num_infer_replicas,
    rl_deployment: r.deployment,
    rl_model_name: inf.model !== undefined && r.model ? r.model.name : undefined,
    slurm: r.slurm,
    kubernetes: r.kubernetes,
    output_dir: outputDir(r as Raw, paths),
    dry_run: r.dry_run,
  });
}

const INFERENCE_KEYS = [
  "parallel",
  "kv_cache_offload",
  "vllm_extra",
  "env_vars",
  "server",
  "backend_port",
  "enable_expert_parallel",
  "enable_dbo",
  "enable_eplb",
  "enable_return_routed_experts",
  "enable_lora",
  "max_loras",
  "max_lora_rank",
  "gpu_memory_utilization",
  "enable_prefix_caching",
];

function pickInference(src: Raw): Raw {
  return Object.fromEntries(INFERENCE_KEYS.filter((k) => src[k] !== undefined).map((k) => [k, src[k]]));
}

function outputDir(src: Raw, paths: UserPaths): string | undefined {
  if (src.output_dir === undefined && src.slurm?.output_dir !== undefined) {
    paths.record("output_dir", "slurm.output_dir");
    return src.slurm.output_dir;
  }
  return src.output_dir;
}

function dropUndefined(o: Raw): Raw {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

/** Dotted paths of every leaf in a canonical input (tables with entries count as their leaves). */
export function explicitPaths(input: Raw, prefix = ""): Set<string> {
  const out = new Set<string>();
  for (const [k, v] of Object.entries(input)) {
    const p = prefix ? `${prefix}.${k}` : k;
    out.add(p);
    if (v && typeof v === "object" && !Array.isArray(v)) for (const q of explicitPaths(v, p)) out.add(q);
  }
  return out;
}

const strings = (env: Record<string, unknown> | undefined): Record<string, string> =>
  Object.fromEntries(Object.entries(env ?? {}).map(([k, v]) => [k, String(v)]));

/**
 * The catalog's launch defaults for every key the stack file left unset, as canonical input, and
 * the canonical paths they filled (these never count as explicit: rules keyed on "did the user set
 * it" must not fire on a catalog default).
 */
export function catalogDefaults(input: Raw, entry: ResolvedModel | undefined): { input: Raw; filled: string[] } {
  if (!entry) return { input, filled: [] };
  const l = entry.launch;
  const filled: string[] = [];
  const fill = (table: Raw | undefined, prefix: string, values: Record<string, unknown>): Raw => {
    const out = { ...table };
    for (const [key, value] of Object.entries(values)) {
      if (value === undefined || out[key] !== undefined) continue;
      out[key] = value;
      filled.push(prefix + key);
    }
    return out;
  };
  const model = fill(input.model, "model.", {
    max_model_len: l.max_model_len,
    dtype: l.dtype,
    trust_remote_code: l.trust_remote_code,
    tool_call_parser: l.tool_call_parser,
    reasoning_parser: l.reasoning_parser,
  });
  // An alias serves the real id, so trainers and /v1/models see one name.
  model.name = entry.id;
  const parallel = fill(input.parallel, "parallel.", { tp: l.tp, dp: l.dp });
  const top = fill(input, "", { enable_expert_parallel: l.enable_expert_parallel });
  return { input: { ...top, model, parallel }, filled };
}

/**
 * Applies the model catalog's launch defaults, then defaults and prime-rl's auto-setup (backend
 * port, prefix caching under offload, expert parallelism for P/D). Reports what cannot be
 * defaulted: a missing model name, a missing cpu.num_bytes, contradictory duplicates between the
 * layouts. `filled` lists the canonical keys the catalog supplied.
 */
export function applyDefaults(
  userInput: Raw,
  layout: "standalone" | "rl",
  paths: UserPaths,
  catalog?: Catalog,
): { config: FleetConfig; issues: ConfigIssue[]; filled: string[] } {
  const issues: ConfigIssue[] = [];
  const explicit = explicitPaths(userInput);
  const issue = (canonical: string, message: string) => issues.push({ path: paths.user(canonical), message });
  const notes: string[] = [];

  const named = userInput.model?.name as string | undefined;
  const entry = named && catalog ? lookupModel(catalog, named) : undefined;
  const { input, filled } = catalogDefaults(userInput, entry);
  if (entry && named !== entry.id) notes.push(`${paths.user("model.name")} = "${named}" is the model catalog's alias of ${entry.id}, which is served under that name`);
  const servedId = (name: string) => (catalog && lookupModel(catalog, name)?.id) ?? name;

  if (!input.model?.name) issue("model", layout === "rl" ? 'no model: set inference.model = "<hugging face id>"' : 'no model: add [model] with name = "<hugging face id>"');
  if (input.rl_model_name !== undefined && input.model?.name !== undefined && servedId(input.rl_model_name) !== input.model.name) {
    issues.push({ path: "model.name", message: `differs from ${paths.user("model.name")} ("${named}"); the trainer and the inference fleet must serve the same model` });
  }

  const rlDep = input.rl_deployment as Raw | undefined;
  const dep = (input.deployment ?? { type: "single_node" }) as Raw;
  let gpusPerNode = dep.gpus_per_node ?? rlDep?.gpus_per_node ?? DEFAULTS.gpus_per_node;
  if (dep.gpus_per_node !== undefined && rlDep?.gpus_per_node !== undefined && dep.gpus_per_node !== rlDep.gpus_per_node) {
    issues.push({ path: "deployment.gpus_per_node", message: `${rlDep.gpus_per_node} contradicts inference.deployment.gpus_per_node = ${dep.gpus_per_node}; set it in one place` });
    gpusPerNode = dep.gpus_per_node;
  }
  const gpu = { gpus_per_node: gpusPerNode, ...(dep.gpu_type !== undefined && { gpu_type: dep.gpu_type as string }), ...(dep.gpu_memory_gib !== undefined && { gpu_memory_gib: dep.gpu_memory_gib as number }) };
  const deployment: DeploymentConfig =
    dep.type === "multi_node"
      ? { type: "multi_node", ...gpu, num_nodes: dep.num_nodes ?? DEFAULTS.num_nodes }
      : dep.type === "disaggregated"
        ? {
            type: "disaggregated",
            ...gpu,
            num_prefill_nodes: dep.num_prefill_nodes ?? 1,
            num_decode_nodes: dep.num_decode_nodes ?? 1,
            num_prefill_replicas: dep.num_prefill_replicas ?? 1,
            num_decode_replicas: dep.num_decode_replicas ?? 1,
            prefill_env_vars: strings(dep.prefill_env_vars),
            decode_env_vars: strings(dep.decode_env_vars),
            prefill_port: dep.prefill_port ?? DEFAULTS.prefill_port,
            decode_port: dep.decode_port ?? DEFAULTS.decode_port,
          }
        : { type: "single_node", ...gpu };

  const r = (input.router ?? { type: "vllm-router" }) as Raw;
  const router: RouterConfig =
    r.type === "llm-d"
      ? {
          type: "llm-d",
          scorers: r.scorers ?? { ...DEFAULTS.llmd.scorers },
          prefill_scorer_overrides: r.prefill_scorer_overrides ?? { ...DEFAULTS.llmd.prefill_scorer_overrides },
          decode_scorer_overrides: r.decode_scorer_overrides ?? { ...DEFAULTS.llmd.decode_scorer_overrides },
          non_cached_tokens: r.non_cached_tokens ?? DEFAULTS.llmd.non_cached_tokens,
          // On Kubernetes the InferencePool has one target port: the decode sidecar takes the prefill port.
          decode_sidecar_port:
            r.decode_sidecar_port ?? (input.kubernetes && deployment.type === "disaggregated" ? deployment.prefill_port : DEFAULTS.llmd.decode_sidecar_port),
        }
      : r.type === "none"
        ? { type: "none" }
        : { type: "vllm-router", policy: r.policy ?? "consistent_hash" };

  let offload: OffloadConfig | null = null;
  const o = input.kv_cache_offload as Raw | undefined;
  if (o) {
    if (!o.cpu) {
      issue("kv_cache_offload.cpu", `a cpu tier is required: add [${paths.user("kv_cache_offload.cpu")}] num_bytes = ... (disk-only offload is not supported; the disk tier sits behind the CPU tier)`);
    } else if (o.cpu.num_bytes === undefined) {
      issue("kv_cache_offload.cpu.num_bytes", "is required: the CPU KV pool size in bytes, e.g. 128_000_000_000");
    } else {
      const disk = o.disk?.path ? { path: o.disk.path as string } : undefined;
      if (o.disk && !o.disk.path) issue("kv_cache_offload.disk.path", "is required when [kv_cache_offload.disk] is present");
      offload =
        o.type === "mooncake"
          ? { type: "mooncake", cpu: { num_bytes: o.cpu.num_bytes }, disk, device_name: o.device_name ?? "", protocol: o.protocol ?? "rdma" }
          : { type: "native", cpu: { num_bytes: o.cpu.num_bytes }, disk };
    }
  }

  const server = { host: input.server?.host as string | undefined, port: (input.server?.port as number | undefined) ?? DEFAULTS.server_port };
  const backendPort = input.backend_port ?? (router.type === "none" ? server.port : server.port + 100);

  const pd = deployment.type === "disaggregated";
  const enablePrefixCaching = input.enable_prefix_caching ?? (o ? true : undefined);

  const extra = checkVllmExtra(input.vllm_extra ?? {}, paths.user("vllm_extra"), (c) => paths.user(c));
  issues.push(...extra.issues);

  const m = (input.model ?? {}) as Raw;
  const [target, targetIssues] = resolveTarget(input, paths);
  issues.push(...targetIssues);
  const jobName = target?.kind === "slurm" ? target.job_name : DEFAULTS.job_name;

  if (rlDep?.num_train_nodes !== undefined) notes.push(`deployment.num_train_nodes = ${rlDep.num_train_nodes} is for the trainer, which this program does not deploy`);

  const config: FleetConfig = {
    layout,
    model: {
      name: m.name ?? "",
      max_model_len: m.max_model_len,
      enforce_eager: m.enforce_eager ?? false,
      dtype: m.dtype,
      trust_remote_code: m.trust_remote_code ?? false,
      chat_template: m.chat_template,
      tool_call_parser: m.tool_call_parser,
      reasoning_parser: m.reasoning_parser,
    },
    parallel: { tp: input.parallel?.tp ?? 1, dp: input.parallel?.dp ?? 1 },
    deployment,
    router,
    kv_cache_offload: offload,
    vllm_extra: extra.values,
    env_vars: strings(input.env_vars),
    server,
    backend_port: backendPort,
    enable_expert_parallel: input.enable_expert_parallel ?? pd,
    enable_dbo: input.enable_dbo ?? false,
    enable_eplb: input.enable_eplb ?? false,
    enable_return_routed_experts: input.enable_return_routed_experts ?? false,
    enable_lora: input.enable_lora ?? false,
    max_loras: input.max_loras ?? DEFAULTS.max_loras,
    max_lora_rank: roundLoraRank(input.max_lora_rank),
    gpu_memory_utilization: input.gpu_memory_utilization ?? DEFAULTS.gpu_memory_utilization,
    enable_prefix_caching: enablePrefixCaching,
    islands: input.islands ?? 1,
    target: target ?? placeholderTarget(),
    output_dir: input.output_dir ?? `vllm-fleet/${jobName}`,
    dry_run: input.dry_run ?? false,
    explicit,
    rl_deployment: rlDep ? { type: rlDep.type, num_infer_nodes: rlDep.num_infer_nodes } : undefined,
    notes,
    ...(entry && { catalog: entry }),
  };
  return { config, issues, filled };
}

/** vLLM only accepts certain LoRA ranks; prime-rl rounds up to the next one (above the largest is a rule error). */
function roundLoraRank(rank: number | undefined): number | undefined {
  if (rank === undefined) return undefined;
  const ranks = (VLLM_FLAGS["--max-lora-rank"].choices as number[]).slice().sort((a, b) => a - b);
  return ranks.find((r) => r >= rank) ?? rank;
}

function resolveTarget(input: Raw, paths: UserPaths): [SlurmTarget | KubernetesTarget | undefined, ConfigIssue[]] {
  const s = input.slurm as Raw | undefined;
  const k = input.kubernetes as Raw | undefined;
  if (s && k) return [undefined, [{ path: "kubernetes", message: "a stack file targets one backend: keep either [slurm] or [kubernetes], not both" }]];
  if (!s && !k) return [undefined, [{ path: "", message: "no target: add a [slurm] table (SLURM through a login node) or a [kubernetes] table" }]];
  if (s) {
    const l = (s.launcher ?? { type: "vllm" }) as Raw;
    const launcher =
      l.type === "venv"
        ? { type: "venv" as const, path: l.path }
        : l.type === "apptainer"
          ? { type: "apptainer" as const, image: l.image, binds: l.binds ?? [] }
          : l.type === "pyxis"
            ? { type: "pyxis" as const, image: l.image, mounts: l.mounts ?? [] }
            : { type: "vllm" as const, bin_dir: l.bin_dir };
    const issues: ConfigIssue[] = [];
    if (input.output_dir !== undefined && s.output_dir !== undefined && s.output_dir !== input.output_dir) {
      issues.push({ path: "slurm.output_dir", message: `contradicts ${paths.user("output_dir")} = "${input.output_dir}"; set it in one place` });
    }
    return [
      {
        kind: "slurm",
        job_name: s.job_name ?? DEFAULTS.job_name,
        partition: s.partition,
        account: s.account,
        qos: s.qos,
        time: s.time,
        nodelist: s.nodelist,
        exclude: s.exclude,
        constraint: s.constraint,
        exclusive: s.exclusive ?? true,
        gres: s.gres,
        pending_timeout: s.pending_timeout ?? DEFAULTS.pending_timeout,
        ready_timeout: s.ready_timeout ?? DEFAULTS.ready_timeout,
        launcher,
      },
      issues,
    ];
  }
  const d = DEFAULTS.kubernetes;
  return [
    {
      kind: "kubernetes",
      namespace: k!.namespace ?? d.namespace,
      image: k!.image ?? d.image,
      router_image: k!.router_image ?? d.router_image,
      epp_image: k!.epp_image ?? d.epp_image,
      envoy_image: k!.envoy_image ?? d.envoy_image,
      mooncake_image: k!.mooncake_image ?? d.mooncake_image,
      sidecar_image: k!.sidecar_image ?? d.sidecar_image,
      image_pull_secrets: k!.image_pull_secrets ?? [],
      service_account: k!.service_account,
      node_selector: k!.node_selector ?? {},
      tolerations: k!.tolerations ?? [],
      model_cache: k!.model_cache ? { ...k!.model_cache, mount_path: k!.model_cache.mount_path ?? "/root/.cache/huggingface" } : undefined,
      gpu_resource: k!.gpu_resource ?? d.gpu_resource,
      shm_size: k!.shm_size ?? d.shm_size,
      disk_offload_storage_class: k!.disk_offload_storage_class,
      disk_offload_size: k!.disk_offload_size ?? d.disk_offload_size,
      startup_timeout: k!.startup_timeout ?? d.startup_timeout,
    },
    [],
  ];
}

/** Stand-in used only so rules can still run while a target error is being reported. */
function placeholderTarget(): SlurmTarget {
  return { kind: "slurm", job_name: DEFAULTS.job_name, exclusive: true, pending_timeout: DEFAULTS.pending_timeout, ready_timeout: DEFAULTS.ready_timeout, launcher: { type: "vllm" } };
}
