import { DEFAULT_ROUTER_RELEASE, KNOWN_SCORERS, ROUTER_RELEASES } from "./schema/router";
import { FleetConfig, shapeOf } from "./types";
import { VLLM_FLAGS } from "./vllm-flags";
import { FIXED_PORTS } from "./fixed-ports";
import { settingsFor } from "./target-kinds";
import { deepEpAcrossNodes, islandNodes, localRanks, perRankEngines } from "./topology";
import { fail, type Rule, type RuleIssue } from "./rule";
import { SGLANG_RULES } from "./sglang-rules";
import { SGLANG_ROUTER_POLICIES } from "./schema/router";
import { BUILT_IN_NAMESPACES, SGLANG_IMAGE } from "./schema/kubernetes";

export type { RuleIssue } from "./rule";

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
const SECRET_ENV = /(^|_)(TOKEN|SECRET|PASSWORD|API_KEY|APIKEY)$|^HF_TOKEN$|^HUGGING_FACE_HUB_TOKEN$/i;

const envRule =
  (canonical: string, pick: (cfg: FleetConfig) => Record<string, string> | undefined): Rule =>
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

const pdEnv = (key: "prefill_env_vars" | "decode_env_vars") => (cfg: FleetConfig) =>
  cfg.deployment.type === "disaggregated" ? cfg.deployment[key] : undefined;

/** What an auto-setup rule reads besides the config. */
export interface SetupContext {
  /** Whether the stack file (or the model catalog) gave a canonical key a value, so the schema's default is not in effect. */
  given: (canonical: string) => boolean;
  /** The RL layout's top-level [deployment], which also sizes the island. */
  rlDeployment?: { gpus_per_node?: number };
  /** A canonical key as the stack file spells it (for notes). */
  paths: (canonical: string) => string;
}

/**
 * prime-rl's auto_setup_* validators: the values that follow from other keys, applied in this order
 * to the canonical config once the model catalog's launch values and the schema's defaults are in
 * (normalise.ts). The schema names the rule beside each key it derives. The RL layout's other
 * spellings of a key (slurm.output_dir, [model] name, trainer.enable_router_replay) are mapped in
 * normalise.ts toCanonicalInput, and count as set.
 */
export const AUTO_SETUP: Record<string, (cfg: FleetConfig, ctx: SetupContext) => void> = {
  "RL [deployment] gpus_per_node sizes the island's nodes": (cfg, { given, rlDeployment }) => {
    if (!given("deployment.gpus_per_node") && rlDeployment?.gpus_per_node !== undefined)
      cfg.deployment.gpus_per_node = rlDeployment.gpus_per_node;
  },
  // prime-rl's layout only: rl.py auto_setup_deployment fills the inference GPUs of a single-node RL run with DP ranks.
  "RL single node: inference takes num_infer_gpus": (cfg) => {
    const n = cfg.rl_deployment?.num_infer_gpus;
    if (cfg.rl_deployment?.type !== "single_node" || n === undefined) return;
    const { tp, dp } = cfg.parallel;
    if (n !== tp * dp && n % tp === 0) cfg.parallel.dp = n / tp;
  },
  // prime-rl's layout only: every node of a multi-node deployment runs gpus_per_node / tp engines
  // (templates/inference.sbatch.j2 DP_PER_NODE; rl.py auto_setup_deployment sets dp when it is 1).
  // An expert-parallel replica spans the nodes, so its DP group is all of them (multi_node_rl.sbatch.j2
  // INFER_GROUP_DP = NODES_PER_INFER_REPLICA x DP_PER_NODE).
  "prime-rl fills each multi_node node with gpus_per_node / tp ranks": (cfg, { given }) => {
    if (!cfg.prime_rl || given("parallel.dp") || cfg.deployment.type !== "multi_node") return;
    const perNode = Math.max(1, Math.floor(cfg.deployment.gpus_per_node / cfg.parallel.tp));
    cfg.parallel.dp = cfg.enable_expert_parallel ? perNode * cfg.deployment.num_nodes : perNode;
  },
  // One container per pod (a LeaderWorkerSet group spans the nodes of a replica); prime-rl's own
  // Kubernetes chart also runs one server per pod. Per-rank processes are a SLURM launch layout.
  "Kubernetes runs one engine process per node": (cfg, { paths }) => {
    if (!settingsFor(cfg, "kubernetes") || cfg.engine_processes !== "per_rank") return;
    cfg.engine_processes = "per_node";
    if (cfg.deployment.type !== "single_node" || cfg.rl_deployment?.type === "multi_node")
      cfg.notes.push(
        `${paths("engine_processes")} is "per_rank", which applies on SLURM only: on Kubernetes every engine pod runs one vLLM process for all the DP ranks of its node (one container per pod), so this fleet runs one engine per node`,
      );
  },
  // The keeper (templates/host/keeper.sh.mustache) runs in the host targets' launch scripts; a pod's
  // containers are the kubelet's to restart.
  "the kubelet restarts containers on Kubernetes": (cfg, { given, paths }) => {
    if (!settingsFor(cfg, "kubernetes") || !Object.keys(cfg.restart).some((k) => given(`restart.${k}`))) return;
    cfg.notes.push(
      `${paths("restart")} applies on SLURM and the local target: on Kubernetes the kubelet restarts a crashed engine container with its own back-off (10 s, doubling up to 5 min) and no budget, and its readiness probe keeps it out of the pool until it serves`,
    );
  },
  // SGLang's engines speak SGLang's P/D bootstrap and metrics, which vllm-router and llm-d do not.
  "SGLang engines sit behind sglang-router": (cfg, { given }) => {
    if (cfg.engine !== "sglang" || given("router.type") || cfg.router.type !== "vllm-router") return;
    const policy = given("router.policy") ? cfg.router.policy : "cache_aware";
    cfg.router = { type: "sglang-router", policy: policy as (typeof SGLANG_ROUTER_POLICIES)[number] };
  },
  "SGLang on Kubernetes runs SGLang's image": (cfg, { given }) => {
    const kube = settingsFor(cfg, "kubernetes");
    if (kube && cfg.engine === "sglang" && !given("kubernetes.image")) kube.image = SGLANG_IMAGE;
  },
  "engines behind a router listen on server.port + 100": (cfg, { given }) => {
    if (!given("backend_port")) cfg.backend_port = cfg.router.type === "none" ? cfg.server.port : cfg.server.port + 100;
  },
  "KV offload turns on prefix caching": (cfg, { given }) => {
    if (!given("enable_prefix_caching") && given("kv_cache_offload")) cfg.enable_prefix_caching = true;
  },
  "P/D turns on expert parallelism": (cfg, { given }) => {
    // prime-rl's P/D layout; SGLang's P/D serves dense models without it.
    if (!given("enable_expert_parallel") && cfg.deployment.type === "disaggregated" && cfg.engine !== "sglang")
      cfg.enable_expert_parallel = true;
  },
  // The InferencePool has one target port for prefill and decode pods: in llm-d's P/D guide
  // (github.com/llm-d/llm-d, guides/pd-disaggregation) prefill vLLM and the decode sidecar share it.
  "llm-d P/D on Kubernetes: the decode sidecar takes the prefill port": (cfg, { given }) => {
    if (
      cfg.router.type === "llm-d" &&
      cfg.deployment.type === "disaggregated" &&
      given("kubernetes") &&
      !given("router.decode_sidecar_port")
    )
      cfg.router.decode_sidecar_port = cfg.deployment.prefill_port;
  },
  // prime-rl rounds up to the next rank vLLM accepts; above the largest is a rule error ("LoRA rank vLLM accepts").
  "LoRA rank rounds up to one vLLM accepts": (cfg) => {
    if (cfg.max_lora_rank === undefined) return;
    const ranks = (VLLM_FLAGS["--max-lora-rank"].choices as number[]).slice().sort((a, b) => a - b);
    cfg.max_lora_rank = ranks.find((r) => r >= cfg.max_lora_rank!) ?? cfg.max_lora_rank;
  },
};

// ---------------------------------------------------------------------------------------------
// [kubernetes] fabric (issue 20): extra_resources, pod_annotations, pod_labels, capabilities, env.

/** Engine-pod labels the fleet (and LeaderWorkerSet, StatefulSet) set and select on: pod_labels cannot replace them. */
const FLEET_LABELS =
  /^(app\.kubernetes\.io\/(name|instance|component|managed-by)|vllm-fleet\/.+|llm-d\.ai\/role|leaderworkerset\.sigs\.k8s\.io\/.+|statefulset\.kubernetes\.io\/pod-name|apps\.kubernetes\.io\/pod-index|controller-revision-hash)$/;
/** Engine-pod annotations the fleet (config-hash, secrets-digest) and LeaderWorkerSet set. */
const FLEET_ANNOTATIONS = /^(vllm-fleet\/.+|leaderworkerset\.sigs\.k8s\.io\/.+)$/;
/** Resources the fleet requests itself: kubernetes.gpu_resource is checked beside these. */
const FLEET_RESOURCES = ["cpu", "memory", "ephemeral-storage"];
/**
 * Engine env the fleet sets on Kubernetes, or that belongs to another key: vLLM's own settings and
 * the Hugging Face ones (env_vars), the launcher defaults of plan/env.ts (DEFAULT_ENV,
 * PRIME_DEFAULT_ENV; test/kubernetes/fabric.test.ts checks every name they set is refused here), the
 * pod's POD_IP and caches (kubernetes/engine-pod.ts), Mooncake's config path, and what
 * LeaderWorkerSet injects (LWS_LEADER_ADDRESS, LWS_GROUP_SIZE, LWS_WORKER_INDEX).
 */
const FLEET_ENV_PREFIX = /^(VLLM_|HF_|LWS_|MOONCAKE_|HUGGING_FACE_)/;
const FLEET_ENV = new Set([
  "POD_IP",
  "PYTHONHASHSEED",
  "CUDA_DEVICE_ORDER",
  "PYTHONUNBUFFERED",
  "OMP_NUM_THREADS",
  "PYTORCH_CUDA_ALLOC_CONF",
  "GIT_LFS_SKIP_SMUDGE",
  "UCX_TLS",
  ...PROTECTED_ENV,
]);

const FABRIC_HINT =
  'set {key:kubernetes.extra_resources} to your RDMA device plugin\'s resource, e.g. extra_resources = { "rdma/ib" = "1" }, and as llm-d\'s wide-EP guide does {key:kubernetes.capabilities} = ["SYS_RAWIO"] (the fleet adds IPC_LOCK to these pods itself, for pinned memory) and {key:kubernetes.env} for the fabric, e.g. { NCCL_SOCKET_IFNAME = "eth0", GLOO_SOCKET_IFNAME = "eth0", NVSHMEM_HCA_PREFIX = "ibp" }';

const FABRIC_RULES: Record<string, Rule> = {
  "cross-pod DeepEP on Kubernetes needs the RDMA fabric": (cfg) => {
    const kube = settingsFor(cfg, "kubernetes");
    if (!kube || Object.keys(kube.extra_resources).length) return [];
    const found = deepEpAcrossNodes(cfg);
    if (!found.length) return [];
    const which = found.map(
      ({ what, backend, key }) =>
        `${what} runs ${backend} (${key === "deployment.type" ? "the P/D default" : `{key:${key}}`})`,
    );
    return fail(
      "kubernetes.extra_resources",
      `${which.join(" and ")}: a replica spanning pods is a LeaderWorkerSet, and DeepEP's kernels reach the other pods' GPUs over RDMA (NVSHMEM), but the engine pods get no RDMA device: ${FABRIC_HINT}; or choose another all2all backend`,
      ...found.map((f) => f.key),
      "kubernetes.capabilities",
    );
  },
  "Mooncake over RDMA on Kubernetes needs the RDMA fabric": (cfg) => {
    const kube = settingsFor(cfg, "kubernetes");
    return kube &&
      cfg.kv_cache_offload?.type === "mooncake" &&
      cfg.kv_cache_offload.protocol === "rdma" &&
      !Object.keys(kube.extra_resources).length
      ? fail(
          "kubernetes.extra_resources",
          `Mooncake's {key:kv_cache_offload.protocol} = "rdma" needs an RDMA device in the engine pods, but they get none: ${FABRIC_HINT}; or set protocol = "tcp"`,
          "kv_cache_offload.protocol",
          "kubernetes.capabilities",
        )
      : [];
  },
  "kubernetes.pod_labels cannot replace the fleet's labels": (cfg) => {
    const kube = settingsFor(cfg, "kubernetes");
    return !kube
      ? []
      : Object.keys(kube.pod_labels)
          .filter((k) => FLEET_LABELS.test(k))
          .flatMap((k) =>
            fail(
              `kubernetes.pod_labels.${k}`,
              `${k} is a label the fleet (or LeaderWorkerSet, or the StatefulSet controller) sets on engine pods and selects them by; choose another label key`,
            ),
          );
  },
  "kubernetes.pod_annotations cannot replace the fleet's annotations": (cfg) => {
    const kube = settingsFor(cfg, "kubernetes");
    return !kube
      ? []
      : Object.keys(kube.pod_annotations)
          .filter((k) => FLEET_ANNOTATIONS.test(k))
          .flatMap((k) =>
            fail(
              `kubernetes.pod_annotations.${k}`,
              `${k} is an annotation the fleet (or LeaderWorkerSet) sets on engine pods; choose another key`,
            ),
          );
  },
  "kubernetes.extra_resources adds resources the fleet does not request": (cfg) => {
    const kube = settingsFor(cfg, "kubernetes");
    if (!kube) return [];
    const own = [...FLEET_RESOURCES, kube.gpu_resource];
    return Object.keys(kube.extra_resources)
      .filter((k) => own.includes(k))
      .flatMap((k) =>
        fail(
          `kubernetes.extra_resources.${k}`,
          !FLEET_RESOURCES.includes(k)
            ? `${k} is the GPU resource ({key:kubernetes.gpu_resource}), which the fleet requests per engine from the plan; remove it here`
            : `the fleet requests ${k} itself (cpu_per_gpu, memory_per_gpu, the cache sizes); set those instead`,
          "kubernetes.gpu_resource",
        ),
      );
  },
  "kubernetes.env sets only what the fleet does not": (cfg) => {
    const kube = settingsFor(cfg, "kubernetes");
    if (!kube) return [];
    const d = cfg.deployment;
    const elsewhere: [string, Record<string, string>][] = [
      ["env_vars", cfg.env_vars],
      ...(d.type === "disaggregated"
        ? ([
            ["deployment.prefill_env_vars", d.prefill_env_vars],
            ["deployment.decode_env_vars", d.decode_env_vars],
          ] as [string, Record<string, string>][])
        : []),
    ];
    return Object.keys(kube.env).flatMap((name) => {
      const at = `kubernetes.env.${name}`;
      if (FLEET_ENV_PREFIX.test(name) || FLEET_ENV.has(name))
        return fail(
          at,
          `${name} is set by the fleet (or LeaderWorkerSet) in engine pods, or is a vLLM or Hugging Face setting, which belongs in {key:env_vars}; kubernetes.env is for the cluster's fabric (NCCL_*, GLOO_*, NVSHMEM_*, UCX_* ...)`,
          "env_vars",
        );
      if (SECRET_ENV.test(name))
        return fail(
          at,
          `${name} looks like a credential; secrets come from Pulumi config (pulumi config set --secret hfToken|apiKey ...), never from the stack file`,
        );
      const other = elsewhere.find(([, env]) => name in env);
      return other
        ? fail(at, `${name} is also set in {key:${other[0]}.${name}}; set it in one place`, `${other[0]}.${name}`)
        : [];
    });
  },
};

/**
 * One row per rule the deployment shapes need or prime-rl enforces (its validators in
 * packages/prime-rl-configs/src/prime_rl/configs/inference.py and rl.py); docs/shapes.md lists them.
 */
export const RULES: Record<string, Rule> = {
  "llm-d cannot return routed experts": (cfg) =>
    cfg.router.type === "llm-d" && cfg.enable_return_routed_experts
      ? fail(
          "router.type",
          "llm-d does not support enable_return_routed_experts (router replay); use the vllm-router router or turn router replay off",
          "enable_return_routed_experts",
        )
      : [],
  "router replay excludes KV offload": (cfg) =>
    cfg.enable_return_routed_experts && cfg.kv_cache_offload
      ? fail(
          "enable_return_routed_experts",
          "router replay cannot be combined with kv_cache_offload: external KV cache hits carry no routed-expert decisions; drop one of them",
          "kv_cache_offload",
        )
      : [],
  "llm-d needs a multi-node shape": (cfg) =>
    cfg.router.type === "llm-d" && cfg.deployment.type === "single_node"
      ? fail(
          "router.type",
          "llm-d fronts multi-node and disaggregated deployments only; use vllm-router (or none) for single_node",
          "deployment.type",
        )
      : [],
  "multi-node needs a router": (cfg) =>
    cfg.router.type === "none" && cfg.deployment.type !== "single_node"
      ? fail(
          "router.type",
          `a ${cfg.deployment.type} deployment needs a router in front of its engines: use "vllm-router" or "llm-d"`,
          "deployment.type",
        )
      : [],
  // The schema takes a policy any build has; which build runs is router.release's to say.
  "the router release serves the policy": (cfg) => {
    if (cfg.router.type !== "vllm-router") return [];
    const { policy, release } = cfg.router;
    if (ROUTER_RELEASES[release].policies.includes(policy)) return [];
    const [needed, build] = Object.entries(ROUTER_RELEASES).find(([, r]) => r.policies.includes(policy))!;
    return fail(
      "router.policy",
      `"${policy}" is not a policy of ${ROUTER_RELEASES[release].title} ({key:router.release} = "${release}"${release === DEFAULT_ROUTER_RELEASE ? ", the default" : ""}); it needs ${build.title}: install ${build.install} where the launcher finds vllm-router (on SLURM ${cfg.prime_rl ? "vllm_fleet.slurm.launcher" : "slurm.launcher"}: its bin_dir, venv or container image; on Kubernetes an image in kubernetes.router_image; locally local.launcher's bin_dir or venv), then set {key:router.release} = "${needed}"`,
      "router.release",
    );
  },
  "known llm-d scorers": (cfg) => {
    if (cfg.router.type !== "llm-d") return [];
    // Read here, on an llm-d stack only: the other stacks never load the EPP's manifest.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const eppManifest = require("../upstream/llm-d-epp.json") as typeof import("../upstream/llm-d-epp.json");
    const plugins = new Set(eppManifest.plugin_types);
    const out: RuleIssue[] = [];
    for (const key of ["scorers", "prefill_scorer_overrides", "decode_scorer_overrides"] as const) {
      for (const name of Object.keys(cfg.router[key])) {
        if (!(KNOWN_SCORERS as readonly string[]).includes(name) || !plugins.has(name)) {
          out.push(
            ...fail(
              `router.${key}.${name}`,
              `unknown llm-d scorer "${name}"; known scorers: ${KNOWN_SCORERS.join(", ")}`,
            ),
          );
        }
      }
    }
    return out;
  },
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
  "tensor parallelism fits a node": (cfg) =>
    cfg.parallel.tp > cfg.deployment.gpus_per_node
      ? fail(
          "parallel.tp",
          `tp = ${cfg.parallel.tp} exceeds {key:deployment.gpus_per_node} = ${cfg.deployment.gpus_per_node}; tensor parallelism does not span nodes`,
          "deployment.gpus_per_node",
        )
      : [],
  // vLLM's ModelConfig.verify_with_parallel_config (the query heads split evenly over the TP ranks)
  // and QKVParallelLinear (the KV heads split evenly, or each replicated on tp / kv_heads ranks).
  "tensor parallelism divides the attention heads": (cfg) => {
    const a = cfg.catalog?.arch;
    if (!a) return [];
    const tp = cfg.parallel.tp;
    const headsFit = (t: number) => a.attention_heads === undefined || a.attention_heads % t === 0;
    const kvFit = (t: number) =>
      a.attention !== "gqa" || a.kv_heads === undefined || (t >= a.kv_heads ? t % a.kv_heads : a.kv_heads % t) === 0;
    if (headsFit(tp) && kvFit(tp)) return [];
    const fits = Array.from({ length: Math.max(tp * 2, 8) }, (_, i) => i + 1).filter((t) => headsFit(t) && kvFit(t));
    const hint = [fits.filter((t) => t < tp).pop(), fits.find((t) => t > tp)].filter((t) => t !== undefined);
    const why = !headsFit(tp)
      ? `the ${a.attention_heads} attention heads of ${cfg.catalog!.id}: vLLM splits them evenly over the tensor-parallel ranks`
      : `the ${a.kv_heads} KV heads of ${cfg.catalog!.id}: vLLM splits them evenly over the tensor-parallel ranks, or gives each to tp / ${a.kv_heads} ranks, so tp must divide ${a.kv_heads} or be a multiple of it`;
    return fail(
      "parallel.tp",
      `tp = ${tp} does not fit ${why} (try {key:parallel.tp} = ${hint.join(" or ")})`,
      "model.name",
    );
  },
  "tp x dp fits a node": (cfg) => {
    const shape = shapeOf(cfg);
    const { tp, dp } = cfg.parallel;
    const gpn = cfg.deployment.gpus_per_node;
    if (shape === "wide_ep" || tp > gpn) return [];
    if (shape === "disaggregated" && !cfg.explicit.has("parallel.dp")) return [];
    if (tp * dp <= gpn) return [];
    const hint =
      shape === "single_node"
        ? "use a multi_node deployment for more GPUs"
        : shape === "multi_replica"
          ? "each replica lives on one node; set enable_expert_parallel = true for one replica spanning nodes"
          : "in a disaggregated deployment parallel.dp is per node";
    return fail(
      "parallel.dp",
      `tp x dp = ${tp} x ${dp} = ${tp * dp} GPUs exceeds {key:deployment.gpus_per_node} = ${gpn}: ${hint}`,
      "parallel.tp",
      "deployment.gpus_per_node",
    );
  },
  // prime-rl's rl.py (multi-node expert-parallel inference): gpus_per_node must divide by tp, and
  // dp x tp must equal every inference GPU; each node runs gpus_per_node / tp ranks.
  "wide-EP fills every GPU of its nodes": (cfg) => {
    if (shapeOf(cfg) !== "wide_ep" || cfg.deployment.type !== "multi_node") return [];
    const { tp, dp } = cfg.parallel;
    const n = cfg.deployment.num_nodes;
    const gpn = cfg.deployment.gpus_per_node;
    if (tp > gpn) return []; // "tensor parallelism fits a node"
    if (gpn % tp !== 0) {
      const divisors = Array.from({ length: gpn }, (_, i) => i + 1).filter((d) => gpn % d === 0);
      const below = divisors.filter((d) => d < tp).pop();
      const above = divisors.find((d) => d > tp);
      const hint = [below, above].filter((d) => d !== undefined).join(" or ");
      return fail(
        "parallel.tp",
        `wide-EP runs {key:deployment.gpus_per_node} / tp ranks on every node, but tp = ${tp} does not divide gpus_per_node = ${gpn} (try {key:parallel.tp} = ${hint})`,
        "deployment.gpus_per_node",
      );
    }
    const total = n * gpn;
    if (tp * dp === total) return [];
    return fail(
      "parallel.dp",
      `wide-EP puts one rank on every GPU of its nodes, so tp x dp must equal {key:deployment.num_nodes} x {key:deployment.gpus_per_node} = ${n} x ${gpn} = ${total} GPUs, but tp x dp = ${tp} x ${dp} = ${tp * dp} (try {key:parallel.dp} = ${total / tp})`,
      "parallel.tp",
      "deployment.num_nodes",
      "deployment.gpus_per_node",
    );
  },
  "offload forces prefix caching": (cfg) =>
    cfg.kv_cache_offload && cfg.explicit.has("enable_prefix_caching") && cfg.enable_prefix_caching === false
      ? fail(
          "enable_prefix_caching",
          "KV cache offload requires prefix caching: remove enable_prefix_caching = false (offload turns it on)",
          "kv_cache_offload",
        )
      : [],
  "llm-d P/D on Kubernetes shares one target port": (cfg) => {
    // The InferencePool lists one set of target ports for every pod: prefill engines and decode
    // sidecars must listen on the same one (as in llm-d's P/D guide), or the EPP picks dead endpoints.
    const d = cfg.deployment;
    if (!settingsFor(cfg, "kubernetes") || cfg.router.type !== "llm-d" || d.type !== "disaggregated") return [];
    return cfg.router.decode_sidecar_port !== d.prefill_port
      ? fail(
          "router.decode_sidecar_port",
          `on Kubernetes the decode sidecar must listen on the prefill port ({key:deployment.prefill_port} = ${d.prefill_port}), because the InferencePool has one target port for prefill and decode pods; remove decode_sidecar_port to use it`,
          "deployment.prefill_port",
          "kubernetes",
        )
      : [];
  },
  // vllm-project/router publishes no container image (its docs build one, or pip install vllm-router):
  // there is no reference to default to, so a Kubernetes fleet with vllm-router must name its own.
  "vllm-router on Kubernetes needs a router image": (cfg) => {
    const kube = settingsFor(cfg, "kubernetes");
    return kube && cfg.router.type === "vllm-router" && kube.router_image === undefined
      ? fail(
          "kubernetes.router_image",
          "vllm-router on Kubernetes needs kubernetes.router_image: vllm-project/router publishes no container image, so build one (its Dockerfile, or pip install vllm-router on a Python base), push it, and set kubernetes.router_image to it pinned by tag or digest",
          "router.type",
        )
      : [];
  },
  // Nor is there a pinned sglang-router image matching the manifest's 0.3.2.
  "sglang-router on Kubernetes needs a router image": (cfg) => {
    const kube = settingsFor(cfg, "kubernetes");
    return kube && cfg.router.type === "sglang-router" && kube.router_image === undefined
      ? fail(
          "kubernetes.router_image",
          "sglang-router on Kubernetes needs kubernetes.router_image: build one (pip install sglang-router==0.3.2 on a Python base; it runs as python3 -m sglang_router.launch_router), push it, and set kubernetes.router_image to it pinned by tag or digest",
          "router.type",
          "engine",
        )
      : [];
  },
  // Issue 31: a namespace the fleet creates is empty until `pulumi up` makes it, and `pulumi destroy`
  // deletes it with everything in it. What the pods name but the fleet does not create (a PVC, pull
  // Secrets, a ServiceAccount) could never be there in time, and a PVC's data would go with it.
  "a namespace the fleet creates holds nothing it does not create": (cfg) => {
    const kube = settingsFor(cfg, "kubernetes");
    if (!kube?.create_namespace || (kube.namespace !== undefined && BUILT_IN_NAMESPACES.includes(kube.namespace)))
      return [];
    const where =
      kube.namespace === undefined
        ? "the fleet's own namespace (kubernetes.namespace is unset: one named after the Pulumi stack)"
        : `namespace "${kube.namespace}"`;
    const created = `{key:kubernetes.create_namespace} = true (the default) makes the fleet create ${where}, so nothing can be in it before the pods start (they would stay Pending), and pulumi destroy deletes it with everything in it`;
    const fix = (what: string) =>
      `set create_namespace = false and {key:kubernetes.namespace} to the namespace that holds ${what}`;
    const refused = (key: string, what: string, extra = "") =>
      fail(
        key,
        `${what} must exist before the fleet's pods start, but ${created}${extra}: ${fix(what)}`,
        "kubernetes.create_namespace",
        "kubernetes.namespace",
      );
    const c = kube.model_cache;
    const cc = kube.compile_cache;
    return [
      ...(c?.pvc !== undefined
        ? refused(
            "kubernetes.model_cache.pvc",
            `the PersistentVolumeClaim "${c.pvc}"`,
            ", the claim and its cached models included",
          )
        : []),
      ...(cc?.pvc !== undefined
        ? refused(
            "kubernetes.compile_cache.pvc",
            `the PersistentVolumeClaim "${cc.pvc}"`,
            ", the claim and its compile cache included",
          )
        : []),
      ...(kube.image_pull_secrets.length
        ? refused(
            "kubernetes.image_pull_secrets",
            `the image pull Secret${kube.image_pull_secrets.length > 1 ? "s" : ""} ${kube.image_pull_secrets.map((s) => `"${s}"`).join(", ")}`,
          )
        : []),
      ...(kube.service_account !== undefined
        ? refused("kubernetes.service_account", `the ServiceAccount "${kube.service_account}"`)
        : []),
    ];
  },
  // The labels go only on the PodMonitors, which exist only with monitoring on: set alone they would do nothing.
  "monitoring labels need monitoring": (cfg) => {
    const kube = settingsFor(cfg, "kubernetes");
    return kube && !kube.monitoring && Object.keys(kube.monitoring_labels).length > 0
      ? fail(
          "kubernetes.monitoring_labels",
          "kubernetes.monitoring_labels label the PodMonitors, which only kubernetes.monitoring = true creates: set monitoring = true, or remove monitoring_labels",
          "kubernetes.monitoring",
        )
      : [];
  },
  "dry_run is a SLURM notion": (cfg) =>
    cfg.dry_run && settingsFor(cfg, "kubernetes")
      ? fail(
          "dry_run",
          "dry_run uploads an sbatch script without submitting it; for Kubernetes use `pulumi preview` or `npm run plan -- <stack> --out <dir>`",
          "kubernetes",
        )
      : [],
  "per-rank engines each serve their API": (cfg) =>
    cfg.vllm_extra.headless === true && perRankEngines(cfg)
      ? fail(
          "vllm_extra.headless",
          'per-rank engines each serve their own API on their own port (external load balancing), so none runs headless; remove headless, or set {key:engine_processes} = "per_node" for one engine per node with the head serving for every rank',
          "engine_processes",
        )
      : [],
  "headless only for wide-EP": (cfg) =>
    cfg.vllm_extra.headless === true && shapeOf(cfg) !== "wide_ep"
      ? fail(
          "vllm_extra.headless",
          "headless engines serve no API; it only applies to wide-EP (multi_node with enable_expert_parallel), where the head node then serves for all ranks",
          "deployment.type",
          "enable_expert_parallel",
        )
      : [],
  "P/D sets all2all per role": (cfg) =>
    cfg.deployment.type === "disaggregated" && cfg.vllm_extra.all2all_backend !== undefined
      ? fail(
          "vllm_extra.all2all_backend",
          "disaggregated deployments set all2all_backend per role (prefill deepep_high_throughput, decode deepep_low_latency); remove it",
          "deployment.type",
        )
      : [],
  "EPLB needs expert parallelism": (cfg) =>
    cfg.enable_eplb && !cfg.enable_expert_parallel
      ? fail(
          "enable_eplb",
          "EPLB balances experts across expert-parallel ranks: set enable_expert_parallel = true or drop enable_eplb",
          "enable_expert_parallel",
        )
      : [],
  "LoRA rank vLLM accepts": (cfg) => {
    const ranks = (VLLM_FLAGS["--max-lora-rank"].choices as number[]) ?? [];
    const max = Math.max(...ranks);
    return cfg.max_lora_rank !== undefined && cfg.max_lora_rank > max
      ? fail("max_lora_rank", `must be at most ${max} (vLLM accepts ${ranks.join(", ")})`)
      : [];
  },
  "LoRA keys need enable_lora": (cfg) =>
    !cfg.enable_lora && (cfg.explicit.has("max_loras") || cfg.explicit.has("max_lora_rank"))
      ? fail(
          cfg.explicit.has("max_loras") ? "max_loras" : "max_lora_rank",
          "has no effect without enable_lora = true",
          "enable_lora",
        )
      : [],
  "RL island size matches": (cfg) => {
    const n = rlInferNodes(cfg);
    if (n === undefined) return [];
    const island = islandNodes(cfg);
    return n !== island
      ? fail(
          "rl_deployment.num_infer_nodes",
          `is ${n}, but [inference.deployment] describes an island of ${island} node(s); drop num_infer_nodes or make them agree`,
          "deployment",
        )
      : [];
  },
  "RL single node holds one island": (cfg) =>
    rlType(cfg) === "single_node" && (cfg.deployment.type !== "single_node" || cfg.islands > 1)
      ? fail(
          "rl_deployment.type",
          'an RL single_node deployment runs one single-node inference server; use type = "multi_node" for more',
          "deployment.type",
          "islands",
        )
      : [],
  // rl.py SingleNodeDeploymentConfig.validate_gpu_count (prime-rl's layout gives these keys).
  "RL single node: trainer and inference GPUs fit the node": (cfg) => {
    const d = cfg.rl_deployment;
    if (d?.type !== "single_node" || d.num_infer_gpus === undefined || d.num_train_gpus === undefined) return [];
    const gpn = d.gpus_per_node ?? 8;
    const total = d.num_train_gpus + d.num_infer_gpus;
    return total > gpn
      ? fail(
          "rl_deployment.num_infer_gpus",
          `Total GPU count (${total} = ${d.num_train_gpus} train + ${d.num_infer_gpus} infer) exceeds {key:rl_deployment.gpus_per_node} (${gpn})`,
          "rl_deployment.num_train_gpus",
          "rl_deployment.gpus_per_node",
        )
      : [];
  },
  // rl.py auto_setup_deployment: the inference GPUs are split into tp-sized DP ranks.
  "RL single node: inference GPUs divide by tp": (cfg) => {
    const d = cfg.rl_deployment;
    if (d?.type !== "single_node" || d.num_infer_gpus === undefined || d.num_infer_gpus % cfg.parallel.tp === 0)
      return [];
    return fail(
      "rl_deployment.num_infer_gpus",
      `${d.num_infer_gpus} inference GPUs must be divisible by the tensor parallel size {key:parallel.tp} = ${cfg.parallel.tp}`,
      "parallel.tp",
    );
  },
  "ports do not collide": portCollisions,
  ...FABRIC_RULES,
  ...SGLANG_RULES,
};

const rlInferNodes = (cfg: FleetConfig) => cfg.rl_deployment?.num_infer_nodes;
const rlType = (cfg: FleetConfig) => cfg.rl_deployment?.type;

/** Every port a node kind binds, with the stack-file key that chose it; duplicates on one node are errors. */
function portCollisions(cfg: FleetConfig): RuleIssue[] {
  /** `fixed`: a port the planner reserves; a collision is then the user's port's fault. */
  type Use = { port: number; what: string; key: string; fixed?: boolean };
  const shape = shapeOf(cfg);
  const d = cfg.deployment;
  const head: Use[] = [];
  const others: Use[] = [];
  const both = (u: Use) => (head.push(u), others.push(u));
  const routed = cfg.router.type !== "none";
  if (routed) head.push({ port: cfg.server.port, what: "the router", key: "server.port" });
  if (cfg.router.type === "vllm-router" || cfg.router.type === "sglang-router")
    head.push({
      port: cfg.server.port + FIXED_PORTS.routerMetricsOffset,
      what: "the router's Prometheus port (server.port + 21000)",
      key: "server.port",
    });
  if (cfg.router.type === "llm-d") {
    head.push(
      { port: FIXED_PORTS.eppGrpc, what: "the llm-d EPP gRPC port", key: "router.type", fixed: true },
      { port: FIXED_PORTS.eppHealth, what: "the llm-d EPP health port", key: "router.type", fixed: true },
      { port: FIXED_PORTS.eppMetrics, what: "the llm-d EPP metrics port", key: "router.type", fixed: true },
      { port: FIXED_PORTS.envoyAdmin, what: "the Envoy admin port", key: "router.type", fixed: true },
    );
  }
  // Per-rank engines (and decode sidecars) listen on port + k for each local rank k.
  const ranks = perRankEngines(cfg) ? localRanks(cfg) : 1;
  const ranged = (u: Use): Use[] =>
    Array.from({ length: ranks }, (_, k) => (k === 0 ? u : { ...u, port: u.port + k, what: `${u.what} (rank ${k})` }));
  if (d.type === "disaggregated") {
    head.push(...ranged({ port: d.prefill_port, what: "the prefill engines", key: "deployment.prefill_port" }));
    others.push(...ranged({ port: d.decode_port, what: "the decode engines", key: "deployment.decode_port" }));
    if (cfg.router.type === "llm-d")
      others.push(
        ...ranged({
          port: cfg.router.decode_sidecar_port,
          what: "the llm-d pd-sidecar",
          key: "router.decode_sidecar_port",
        }),
      );
    const dpLocal = Math.max(1, Math.floor(d.gpus_per_node / cfg.parallel.tp));
    for (let k = 0; k < dpLocal; k++)
      both({
        port: FIXED_PORTS.nixlSideChannel + k,
        what: `the NIXL side channel of local rank ${k}`,
        key: "deployment.type",
      });
  } else {
    ranged({
      port: routed ? cfg.backend_port : cfg.server.port,
      what: "the vLLM engine",
      key: routed ? (cfg.explicit.has("backend_port") ? "backend_port" : "server.port") : "server.port",
    }).forEach(both);
  }
  if (shape === "wide_ep" || shape === "disaggregated" || cfg.parallel.dp > 1)
    both({ port: FIXED_PORTS.dpRpc, what: "the data-parallel RPC port", key: "parallel.dp", fixed: true });
  if (cfg.kv_cache_offload?.type === "mooncake") {
    head.push(
      { port: FIXED_PORTS.mooncakeMaster, what: "the Mooncake master", key: "kv_cache_offload.type", fixed: true },
      {
        port: FIXED_PORTS.mooncakeMetadata,
        what: "the Mooncake metadata server",
        key: "kv_cache_offload.type",
        fixed: true,
      },
      {
        port: FIXED_PORTS.mooncakeMetrics,
        what: "the Mooncake master metrics",
        key: "kv_cache_offload.type",
        fixed: true,
      },
    );
    both({ port: FIXED_PORTS.mooncakeClient, what: "the Mooncake client", key: "kv_cache_offload.type", fixed: true });
  }
  const out: RuleIssue[] = [];
  const seen = new Set<string>();
  for (const uses of [head, others]) {
    for (const [i, a] of uses.entries()) {
      if (a.port > 65535) out.push(...fail(a.key, `puts ${a.what} on port ${a.port}, beyond 65535`));
      for (const b of uses.slice(i + 1)) {
        const id = [a.what, b.what, a.port].join("|");
        if (a.port === b.port && a.what !== b.what && !seen.has(id)) {
          seen.add(id);
          const [blamed, other] = b.fixed && !a.fixed ? [a, b] : [b, a];
          out.push(
            ...fail(
              blamed.key,
              `port ${a.port} is used by both ${other.what} and ${blamed.what} on the same node; choose another {key:${blamed.key}}`,
              other.key,
            ),
          );
        }
      }
    }
  }
  return out;
}

/** Runs every rule; each violation names the canonical key to change. */
export function checkRules(cfg: FleetConfig): RuleIssue[] {
  return Object.values(RULES).flatMap((rule) => rule(cfg));
}
