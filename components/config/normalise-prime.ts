import type { ConfigIssue } from "./issues";
import type { UserPaths } from "./paths";
import type { PrimeCommit, PrimeEngineConfig, PrimeEngineKind, WeightBroadcastType } from "./types";
import {
  isSftFile,
  PRIME_RL_IGNORED_TABLES,
  PRIME_SFT_IGNORED_TABLES,
  VLLM_CANONICAL_KEYS,
  vllmFleetTable,
} from "./schema/prime";
import type { ExtraValue } from "./flag-values";
// prime-rl's [vllm] table is `vllm serve`'s flags: its extra keys are checked as vllm_extra.
import { checkVllmExtra } from "../plan/engines/vllm/config/flags";
import { TARGET_PARTS } from "./target-registry";
import { foldRlMultiNode, foldSft } from "./prime-deployment";
import {
  impliedRouterRelease,
  laterKeyIssues,
  PRIME_LORA_DEFAULTS,
  PRIME_QUANTIZATION,
  PRIME_ROUTER_POLICY,
  primeCommitOf,
} from "./prime-commit";
import { serverPatchesUsed } from "./prime-server-patches";

type Raw = Record<string, any>;

/** VllmConfig's default model (packages/prime-rl-configs/src/prime_rl/configs/inference.py). */
export const PRIME_DEFAULT_MODEL = "Qwen/Qwen3-0.6B";

/** [vllm] keys that are the canonical [model] keys of the same name. */
export const MODEL_KEYS = new Set([
  "dtype",
  "max_model_len",
  "enforce_eager",
  "trust_remote_code",
  "chat_template",
  "tool_call_parser",
  "reasoning_parser",
]);

/**
 * [vllm] keys prime-rl's launcher overwrites per rank (templates/_launch_rank.sh.j2); vllm-fleet's
 * planner computes them from the deployment, so the file's values are accepted and not used.
 */
const PLANNED_KEYS = new Set(["data_parallel_size_local", "data_parallel_rpc_port", "api_server_count"]);

/** Inference-level keys prime-rl uses for its own server, which vllm-fleet does not act on. */
const IGNORED_INFERENCE_KEYS = ["log", "use_pd_kv_transfer"];

/** Top-level RL [deployment] keys that size the trainer, which vllm-fleet does not deploy. */
const RL_TRAINER_KEYS = ["num_train_nodes", "nodes_per_fsdp_group", "orchestrator_on_inference"];

/**
 * [vllm] keys a per-role override (prefill_vllm_overrides / decode_vllm_overrides) may set for that
 * role's engines, as prime-rl merges the overrides into [vllm] per rank: switches that are only a
 * `vllm serve` flag here (no rule or planner reads them). The other typed keys stay refused there.
 */
const ROLE_SWITCHES = new Set(["enable_dbo"]);

/** prime-rl's trainer LoRA rank default (configs/trainer.py LoRAConfig), which sizes inference's max_lora_rank. */
const PRIME_LORA_RANK = 16;

export interface PrimeCanonical {
  /** Canonical input, as normalise.ts toCanonicalInput gives it for the older layout. */
  input: Raw;
  /** Keys and tables accepted and not acted on, as the user wrote them. */
  ignored: string[];
  issues: ConfigIssue[];
  notes: string[];
}

const defined = (o: Raw): Raw => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/**
 * Maps a validated file in prime-rl's current layout onto the canonical input: [vllm]'s declared
 * fields onto [model], [parallel] and the inference keys, its other keys onto vllm_extra, the
 * deployment's prime-rl names onto ours, and an RL file's top-level [model], [deployment],
 * [slurm] and env_vars as prime-rl propagates them (rl.py, utils/validation.py
 * propagate_shared_fields). An SFT file (sft.py: [inference] serves its online evals) is read like
 * an RL one, with SFTConfig's [deployment]. Records where each canonical key came from in `paths`.
 */
export function primeToCanonicalInput(file: Raw, layout: "standalone" | "rl", paths: UserPaths): PrimeCanonical {
  const rl = layout === "rl";
  const sft = rl && isSftFile(file);
  const inf: Raw = rl ? (file.inference ?? {}) : file;
  const at = (p: string) => (rl ? `inference.${p}` : p);
  const ignored: string[] = [];
  const issues: ConfigIssue[] = [];
  const notes: string[] = [];
  // Which prime-rl's defaults fill what the file leaves out (config/prime-commit.ts).
  const { commit, why } = primeCommitOf(file, inf, at);
  if (why) notes.push(why);
  issues.push(...laterKeyIssues(commit, inf, at));
  const later = commit !== "559b447";

  const model: Raw = {};
  const parallel: Raw = {};
  const flat: Raw = {};
  const extra: Raw = {};
  for (const [key, value] of Object.entries((inf.vllm ?? {}) as Raw)) {
    if (key === "model") model.name = value;
    else if (MODEL_KEYS.has(key)) model[key] = value;
    else if (key === "tensor_parallel_size") parallel.tp = value;
    else if (key === "data_parallel_size") parallel.dp = value;
    else if (VLLM_CANONICAL_KEYS.has(key)) flat[key] = value;
    else if (PLANNED_KEYS.has(key)) ignored.push(at(`vllm.${key}`));
    else extra[key] = value;
  }

  if (later) {
    // 8324600's VllmConfig: EP weight filtering on, quantization limited to fp8_per_block.
    extra.enable_ep_weight_filter ??= true;
    if (extra.quantization !== undefined && !PRIME_QUANTIZATION.includes(extra.quantization))
      issues.push({
        path: at("vllm.quantization"),
        message: `prime-rl ${commit} takes only ${PRIME_QUANTIZATION.map((q) => JSON.stringify(q)).join(", ")}`,
      });
  }

  // VllmConfig's parser defaults are "auto": picked from the model name (plan/parser-detection.ts).
  for (const key of ["tool_call_parser", "reasoning_parser"]) model[key] ??= "auto";

  // RL: [model] name is propagated to inference.vllm.model (a different explicit value is refused).
  let rlModelName: string | undefined;
  if (rl && file.model?.name !== undefined) {
    if (model.name === undefined) {
      model.name = file.model.name;
      paths.record("model.name", "model.name");
    } else rlModelName = file.model.name;
  }
  if (rl && !sft && file.model?.vlm !== undefined) ignored.push("model.vlm");
  // SFT: [model] is the trainer's model config; only its name (and LoRA, below) reach inference.
  if (sft) for (const k of Object.keys(file.model ?? {})) if (k !== "name" && k !== "lora") ignored.push(`model.${k}`);
  if (model.name === undefined) {
    model.name = PRIME_DEFAULT_MODEL;
    notes.push(`${paths.user("model.name")} is unset: serving prime-rl's default model ${PRIME_DEFAULT_MODEL}`);
  }
  // RL: [tokenizer] / [trainer.tokenizer] chat_template cascades into inference.vllm.chat_template.
  const chatTemplate =
    rl && !sft ? (file.tokenizer?.chat_template ?? file.trainer?.tokenizer?.chat_template) : undefined;
  if (chatTemplate !== undefined && model.chat_template === undefined) {
    model.chat_template = chatTemplate;
    paths.record(
      "model.chat_template",
      file.tokenizer?.chat_template !== undefined ? "tokenizer.chat_template" : "trainer.tokenizer.chat_template",
    );
  }

  // RL: the trainer's router replay forces routed experts on (rl.py auto_setup_router_replay).
  if (rl && file.trainer?.enable_router_replay === true) {
    flat.enable_return_routed_experts = true;
    paths.record("enable_return_routed_experts", "trainer.enable_router_replay");
  }

  // The trainer's LoRA serves adapters: prime-rl turns LoRA on for inference at the trainer's rank
  // (rl.py auto_setup_lora; sft.py auto_setup_online_eval), over [vllm]'s own values.
  const loraFrom = sft ? "model.lora" : "trainer.model.lora";
  const lora = (sft ? file.model?.lora : rl ? file.trainer?.model?.lora : undefined) as Raw | undefined;
  if (lora != null) {
    flat.enable_lora = true;
    flat.max_lora_rank = lora.rank ?? PRIME_LORA_RANK;
    paths.record("enable_lora", loraFrom);
    paths.record("max_lora_rank", lora.rank !== undefined ? `${loraFrom}.rank` : loraFrom);
  }

  // 8324600's VllmConfig serves one LoRA slot (it reloads its one adapter in place); 559b447's default is the canonical 8.
  if (later && flat.enable_lora === true) flat.max_loras ??= PRIME_LORA_DEFAULTS[commit].max_loras;

  // Environment: RL env_vars for every component, the inference table's over them.
  let env: Raw | undefined;
  if (rl && file.env_vars) {
    env = { ...file.env_vars };
    for (const k of Object.keys(file.env_vars))
      if (!(k in (inf.env_vars ?? {}))) paths.record(`env_vars.${k}`, `env_vars.${k}`);
  }
  if (inf.env_vars) env = { ...env, ...inf.env_vars };

  // Engine settings prime-rl's server derives (configs/inference.py to_namespace, inference/server.py
  // setup_vllm_env), with its defaults; the planner turns them into flags and environment.
  // A renderer and the sampling-mask logprobs patch exist only in prime-rl's server: it is the default with them.
  const needsPrimeServer =
    inf.renderer !== undefined ||
    inf.enable_return_sampling_mask_logprobs === true ||
    serverPatchesUsed(inf).length > 0;
  const engine: PrimeEngineKind = file.vllm_fleet?.engine ?? (rl || needsPrimeServer ? "prime-rl" : "vllm");
  const primeEngine: PrimeEngineConfig = defined({
    enable_fp32_lm_head: inf.enable_fp32_lm_head ?? true,
    enable_fp32_router_logits: inf.enable_fp32_router_logits ?? true,
    use_deep_gemm: inf.use_deep_gemm ?? false,
    engine,
    weight_broadcast: weightBroadcastType(file, inf, rl, lora != null),
    // Only what the file sets (559b447's files keep their plan byte for byte).
    commit: later ? commit : undefined,
    renderer: inf.renderer,
    enable_return_sampling_mask: inf.enable_return_sampling_mask,
    enable_return_sampling_mask_logprobs: inf.enable_return_sampling_mask_logprobs,
    fp8_ue8m0_weight_scales: inf.fp8_ue8m0_weight_scales,
    fp8_stochastic_weight_rounding: inf.fp8_stochastic_weight_rounding,
    vllm_plugins: inf.vllm_plugins,
  }) as PrimeEngineConfig;

  for (const key of IGNORED_INFERENCE_KEYS) if (inf[key] !== undefined) ignored.push(at(key));
  // weight_broadcast picks prime-rl's worker extension: it acts only when engines run prime-rl's server.
  // not an engine: [vllm_fleet] engine, which of the vLLM engine's two servers runs (stock vllm serve or prime-rl's)
  if (engine === "vllm" && inf.weight_broadcast !== undefined) ignored.push(at("weight_broadcast"));
  const { liveness_timeout_seconds, ...server } = (inf.server ?? {}) as Raw;
  if (liveness_timeout_seconds !== undefined) ignored.push(at("server.liveness_timeout_seconds"));

  // Deployment: prime-rl's disaggregated names onto ours; per-role vLLM overrides checked like [vllm]'s extras.
  let deployment: Raw | undefined;
  const roleExtra: Raw = {};
  if (inf.deployment) {
    const {
      prefill_nodes_per_replica,
      decode_nodes_per_replica,
      prefill_vllm_overrides,
      decode_vllm_overrides,
      ...rest
    } = inf.deployment as Raw;
    deployment = defined({
      ...rest,
      num_prefill_nodes: prefill_nodes_per_replica,
      num_decode_nodes: decode_nodes_per_replica,
    });
    for (const [role, overrides] of [
      ["prefill", prefill_vllm_overrides],
      ["decode", decode_vllm_overrides],
    ] as const) {
      if (!overrides || !Object.keys(overrides).length) continue;
      const where = at(`deployment.${role}_vllm_overrides`);
      const { switches, rest } = roleSwitches(overrides as Raw, flat, where);
      issues.push(...switches.issues);
      const checked = checkVllmExtra(rest, where, (c) => paths.user(c), file.vllm_fleet?.vllm_version);
      issues.push(...checked.issues);
      roleExtra[role] = { ...(checked.values as Record<string, ExtraValue>), ...switches.values };
      // Rules name these keys (all2all_backend, an own kv_transfer_config) as the file spells them.
      for (const key of Object.keys(roleExtra[role])) paths.record(`role_vllm_extra.${role}.${key}`, `${where}.${key}`);
      if (!Object.keys(roleExtra[role]).length) delete roleExtra[role];
    }
  }

  // RL top-level [deployment] (rl.py): single_node splits one node's GPUs, multi_node counts inference nodes.
  let rlDeployment: Raw | undefined;
  let islands: number | undefined;
  if (sft) {
    const sftDeployment = foldSft(file, inf, deployment, at);
    ({ rlDeployment, deployment } = sftDeployment);
    issues.push(...sftDeployment.issues);
    ignored.push(...sftDeployment.ignored);
    for (const key of PRIME_SFT_IGNORED_TABLES) {
      // not an engine: [vllm_fleet] engine, which of the vLLM engine's two servers runs
      if (key === "weight_broadcast" && engine === "prime-rl") continue;
      if (file[key] !== undefined) ignored.push(key);
    }
  } else if (rl) {
    const d = (file.deployment ?? {}) as Raw;
    // prime-rl 8324600's examples/extra/dynamo: with it, `rl` starts no inference; the orchestrator
    // finds an external Dynamo deployment by its RL discovery endpoint. Planning engines for it would
    // hold GPUs nobody calls.
    if ((file.orchestrator as Raw | undefined)?.model?.client?.dynamo?.enabled === true)
      issues.push({
        path: "orchestrator.model.client.dynamo.enabled",
        message:
          "prime-rl runs this file against an external Dynamo deployment it does not launch (its frontend and worker start by hand; the orchestrator finds them through Dynamo's RL discovery endpoint), and vllm-fleet does not deploy Dynamo: set enabled = false (or remove the table) for the fleet to serve the orchestrator",
      });
    for (const key of RL_TRAINER_KEYS) if (d[key] !== undefined) ignored.push(`deployment.${key}`);
    if (d.type === "multi_node") {
      rlDeployment = defined({ type: "multi_node", gpus_per_node: d.gpus_per_node });
      const folded = foldRlMultiNode(
        d,
        deployment,
        flat.enable_expert_parallel === true,
        (inf.router as Raw | undefined)?.type,
        at,
        paths,
      );
      deployment = folded.deployment;
      islands = folded.islands;
      issues.push(...folded.issues);
      notes.push(...folded.notes);
    } else {
      // prime-rl's defaults: one trainer GPU and one inference GPU on an 8-GPU node.
      rlDeployment = defined({
        type: "single_node",
        num_train_gpus: d.num_train_gpus ?? 1,
        num_infer_gpus: d.num_infer_gpus ?? 1,
        gpus_per_node: d.gpus_per_node,
      });
    }
    for (const key of PRIME_RL_IGNORED_TABLES) {
      // Its type picks the worker extension of prime-rl's server; the rest configures the trainer.
      // not an engine: [vllm_fleet] engine, which of the vLLM engine's two servers runs
      if (key === "weight_broadcast" && engine === "prime-rl") continue;
      if (file[key] !== undefined) ignored.push(key);
    }
  }

  const targets = primeTargets(file, inf, rl, at, paths, ignored);
  let outputDir = inf.output_dir;
  if (rl && outputDir === undefined && file.output_dir !== undefined) outputDir = file.output_dir;
  else if (rl && outputDir !== undefined) paths.record("output_dir", "inference.output_dir");
  // 8324600: output_dir defaults to $PRL_OUTPUT_DIR (utils/config.py default_output_dir), read where the plan is made.
  if (later && outputDir === undefined && process.env.PRL_OUTPUT_DIR) {
    outputDir = process.env.PRL_OUTPUT_DIR;
    notes.push(`${at("output_dir")} is unset: $PRL_OUTPUT_DIR (${outputDir}), as prime-rl ${commit} reads it`);
  }
  let dryRun = inf.dry_run;
  if (rl && dryRun === undefined) dryRun = file.dry_run;
  else if (rl && dryRun !== undefined) paths.record("dry_run", "inference.dry_run");

  const input = defined({
    model,
    parallel: Object.keys(parallel).length ? parallel : undefined,
    ...flat,
    deployment,
    router: primeRouter(inf.router, file.vllm_fleet?.router_release, commit, notes),
    kv_cache_offload: inf.kv_cache_offload,
    vllm_version: file.vllm_fleet?.vllm_version,
    vllm_extra: Object.keys(extra).length ? extra : undefined,
    env_vars: env,
    server: Object.keys(server).length ? server : undefined,
    backend_port: inf.backend_port,
    islands,
    rl_deployment: rlDeployment,
    rl_model_name: rlModelName,
    role_vllm_extra: Object.keys(roleExtra).length ? roleExtra : undefined,
    prime_engine: primeEngine,
    engine_processes: vllmFleetTable.parse(file.vllm_fleet ?? {}).engine_processes,
    restart: file.vllm_fleet?.restart,
    idle_release_after: file.vllm_fleet?.idle_release_after,
    cost: file.vllm_fleet?.cost,
    ...targets,
    output_dir: outputDir,
    dry_run: dryRun,
  });
  return { input, ignored, issues, notes };
}

/**
 * The canonical router: prime-rl's [router] with the commit's default policy, and [vllm_fleet]
 * router_release as router.release (prime-rl's [router] has no such key); unnamed, the one release
 * serving the policy when only one does (prime-commit.ts impliedRouterRelease), with a note.
 */
function primeRouter(router: Raw | undefined, release: string | undefined, commit: PrimeCommit, notes: string[]) {
  const isVllmRouter = (router?.type ?? "vllm-router") === "vllm-router";
  if (!isVllmRouter) return release === undefined ? router : { ...router, release };
  const policy = router?.policy ?? (commit === "559b447" ? undefined : PRIME_ROUTER_POLICY[commit]);
  const out: Raw | undefined = policy === router?.policy ? router : { ...router, policy };
  if (release !== undefined) return { ...out, release };
  const implied = impliedRouterRelease(policy);
  if (!implied) return out;
  notes.push(implied.note);
  return { ...out, release: implied.release };
}

/**
 * weight_broadcast.type as prime-rl resolves it. Standalone: [weight_broadcast], default filesystem
 * (configs/inference.py). RL and SFT: the top-level [weight_broadcast] overwrites
 * inference.weight_broadcast; its default is nccl, or filesystem when the trainer trains LoRA
 * (configs/rl.py auto_setup_weight_broadcast, configs/sft.py auto_setup_online_eval).
 */
function weightBroadcastType(file: Raw, inf: Raw, rl: boolean, lora: boolean): WeightBroadcastType {
  if (!rl) return inf.weight_broadcast?.type ?? "filesystem";
  return file.weight_broadcast?.type ?? (lora ? "filesystem" : "nccl");
}

/**
 * A per-role override's ROLE_SWITCHES (booleans, passed as that role's `vllm serve` flag unless
 * [vllm] already sets the same value), apart from the keys checked like vllm_extra.
 */
function roleSwitches(overrides: Raw, flat: Raw, where: string) {
  const values: Record<string, ExtraValue> = {};
  const issues: ConfigIssue[] = [];
  const rest: Raw = {};
  for (const [key, value] of Object.entries(overrides)) {
    const snake = key.replace(/-/g, "_");
    if (!ROLE_SWITCHES.has(snake)) rest[key] = value;
    else if (typeof value !== "boolean") issues.push({ path: `${where}.${key}`, message: "expects true or false" });
    else if (value !== (flat[snake] ?? false)) values[snake] = value;
  }
  return { switches: { values, issues }, rest };
}

/**
 * The target tables of a prime-rl file, by kind. A target prime-rl has a table of the same name for
 * (its [slurm]; target-part.ts primeFleetTable) reads the keys it shares with prime-rl's (primeOwnKeys;
 * the rest, for prime-rl's own sbatch templates, is ignored), an RL file's top-level one propagated to
 * inference.<kind> as prime-rl fills it (only if absent), then [vllm_fleet.<kind>] over them. Every
 * other target's table is the file's own, as written.
 */
function primeTargets(
  file: Raw,
  inf: Raw,
  rl: boolean,
  at: (key: string) => string,
  paths: UserPaths,
  ignored: string[],
): Raw {
  const out: Raw = {};
  for (const part of TARGET_PARTS) {
    const kind = part.kind;
    if (!part.primeFleetTable) {
      out[kind] = file[kind];
      continue;
    }
    const mapped: readonly string[] = part.primeOwnKeys ?? [];
    const from = rl && file[kind] !== undefined ? kind : at(kind);
    const theirs = (rl && file[kind] !== undefined ? file[kind] : inf[kind]) as Raw | undefined;
    let table: Raw | undefined;
    if (theirs) {
      table = defined(Object.fromEntries(mapped.map((k) => [k, theirs[k]])));
      for (const k of Object.keys(theirs)) {
        if (!mapped.includes(k)) ignored.push(`${from}.${k}`);
        // Read from an RL file's [inference.<kind>]: errors name it there.
        else if (rl && file[kind] === undefined) paths.record(`${kind}.${k}`, `${from}.${k}`);
      }
    }
    // [vllm_fleet.<kind>]: our keys prime-rl's table has no place for (launcher, timeouts, ...).
    const ours = file.vllm_fleet?.[kind] as Raw | undefined;
    if (ours) {
      if (!table) paths.record(kind, `vllm_fleet.${kind}`);
      table = { ...table, ...ours };
      for (const k of Object.keys(ours)) paths.record(`${kind}.${k}`, `vllm_fleet.${kind}.${k}`);
    }
    out[kind] = table;
  }
  return out;
}
