import type { ConfigView } from "../../config/fleet-config";
import { fail, type RuleIssue } from "../../config/rule";
import { PROTECTED_ENV, SECRET_ENV } from "../../config/env-rules";
import { deepEpAcrossNodes } from "../../config/deep-ep";
import type { KubernetesSettings } from "./settings";
import { createsNamespace } from "./namespace-owner";

/** A rule of the Kubernetes target, given its settings. */
type KubernetesRule = (cfg: ConfigView, kube: KubernetesSettings) => RuleIssue[];

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
 * the Hugging Face ones (env_vars), the launcher defaults of plan/engines/vllm/env.ts (DEFAULT_ENV,
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

const FABRIC_RULES: Record<string, KubernetesRule> = {
  "cross-pod DeepEP on Kubernetes needs the RDMA fabric": (cfg, kube) => {
    if (Object.keys(kube.extra_resources).length) return [];
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
  "Mooncake over RDMA on Kubernetes needs the RDMA fabric": (cfg, kube) => {
    return cfg.kv_cache_offload?.type === "mooncake" &&
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
  "kubernetes.pod_labels cannot replace the fleet's labels": (cfg, kube) => {
    return Object.keys(kube.pod_labels)
      .filter((k) => FLEET_LABELS.test(k))
      .flatMap((k) =>
        fail(
          `kubernetes.pod_labels.${k}`,
          `${k} is a label the fleet (or LeaderWorkerSet, or the StatefulSet controller) sets on engine pods and selects them by; choose another label key`,
        ),
      );
  },
  "kubernetes.pod_annotations cannot replace the fleet's annotations": (cfg, kube) => {
    return Object.keys(kube.pod_annotations)
      .filter((k) => FLEET_ANNOTATIONS.test(k))
      .flatMap((k) =>
        fail(
          `kubernetes.pod_annotations.${k}`,
          `${k} is an annotation the fleet (or LeaderWorkerSet) sets on engine pods; choose another key`,
        ),
      );
  },
  "kubernetes.extra_resources adds resources the fleet does not request": (cfg, kube) => {
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
  "kubernetes.env sets only what the fleet does not": (cfg, kube) => {
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

/** The Kubernetes target's rules (docs/shapes.md), run after the shared ones. */
export const KUBERNETES_RULES: Record<string, KubernetesRule> = {
  "llm-d P/D on Kubernetes shares one target port": (cfg) => {
    // The InferencePool lists one set of target ports for every pod: prefill engines and decode
    // sidecars must listen on the same one (as in llm-d's P/D guide), or the EPP picks dead endpoints.
    const d = cfg.deployment;
    if (cfg.router.type !== "llm-d" || d.type !== "disaggregated") return [];
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
  "vllm-router on Kubernetes needs a router image": (cfg, kube) => {
    return cfg.router.type === "vllm-router" && kube.router_image === undefined
      ? fail(
          "kubernetes.router_image",
          "vllm-router on Kubernetes needs kubernetes.router_image: vllm-project/router publishes no container image, so build one (its Dockerfile, or pip install vllm-router on a Python base), push it, and set kubernetes.router_image to it pinned by tag or digest",
          "router.type",
        )
      : [];
  },
  // The engines' connector and the server must be one LMCache release, which no image the fleet knows pins.
  "LMCache offload on Kubernetes needs an LMCache image": (cfg, kube) => {
    return cfg.kv_cache_offload?.type === "lmcache" && kube.lmcache_image === undefined
      ? fail(
          "kubernetes.lmcache_image",
          "kv_cache_offload.type = \"lmcache\" on Kubernetes runs LMCache's server beside every engine and needs kubernetes.lmcache_image: an image with `lmcache` (pip install lmcache at the version of the engines' LMCacheMPConnector), pinned by tag or digest",
          "kv_cache_offload.type",
        )
      : [];
  },
  // Nor is there a pinned sglang-router image matching the manifest's 0.3.2.
  "sglang-router on Kubernetes needs a router image": (cfg, kube) => {
    return cfg.router.type === "sglang-router" && kube.router_image === undefined
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
  // Issue 43: only the fleet's own namespace is created by default, so a named one passes unless
  // create_namespace = true says to create it.
  "a namespace the fleet creates holds nothing it does not create": (cfg, kube) => {
    if (!createsNamespace(kube)) return [];
    const own = kube.namespace === undefined;
    const where = own
      ? "the fleet's own namespace (kubernetes.namespace is unset: one named after the Pulumi stack)"
      : `namespace "${kube.namespace}"`;
    const why = own
      ? "{key:kubernetes.create_namespace} is true for it unless set to false"
      : "{key:kubernetes.create_namespace} = true";
    const created = `the fleet creates ${where} (${why}), so nothing can be in it before the pods start (they would stay Pending), and pulumi destroy deletes it with everything in it`;
    const fix = (what: string) =>
      own
        ? `set {key:kubernetes.namespace} to the namespace that holds ${what}: a namespace named there is used as it exists, never created or deleted`
        : `remove create_namespace = true, so that the fleet uses namespace "${kube.namespace}" as it exists and never deletes it, and put ${what} there`;
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
  "monitoring labels need monitoring": (cfg, kube) => {
    return !kube.monitoring && Object.keys(kube.monitoring_labels).length > 0
      ? fail(
          "kubernetes.monitoring_labels",
          "kubernetes.monitoring_labels label the PodMonitors, which only kubernetes.monitoring = true creates: set monitoring = true, or remove monitoring_labels",
          "kubernetes.monitoring",
        )
      : [];
  },
  "dry_run is a SLURM notion": (cfg) =>
    cfg.dry_run
      ? fail(
          "dry_run",
          "dry_run uploads an sbatch script without submitting it; for Kubernetes use `pulumi preview` or `npm run plan -- <stack> --out <dir>`",
          "kubernetes",
        )
      : [],
  ...FABRIC_RULES,
};
