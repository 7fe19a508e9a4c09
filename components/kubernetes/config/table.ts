import { z } from "zod";
import { envVars, k8sName, table, text } from "../../config/schema/primitives";
import { ENGINE_READY_TIMEOUT_S } from "../../config/timeouts";
import { defaultEngineImage, ENGINE_PARTS } from "../../config/engine-registry";

/*
 * Kubernetes' own syntax for label keys and values, resource names and images: the API server
 * refuses an object that breaks it, which would surface only at `pulumi up`.
 */
const NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** `[prefix/]name`: a DNS subdomain prefix of at most 253 characters and a name of at most 63. */
function qualifiedName(s: string): boolean {
  const slash = s.lastIndexOf("/");
  const [prefix, name] = slash < 0 ? ["", s] : [s.slice(0, slash), s.slice(slash + 1)];
  return name.length <= 63 && NAME.test(name) && (slash < 0 || (prefix.length <= 253 && SUBDOMAIN.test(prefix)));
}
const QUALIFIED =
  "must be a Kubernetes qualified name such as nvidia.com/gpu.product: an optional DNS prefix and '/', then up to 63 letters, digits, '-', '_' or '.' starting and ending with a letter or digit";
const labelKey = z.string().refine(qualifiedName, QUALIFIED);
const isLabelValue = (s: string) => s === "" || (s.length <= 63 && NAME.test(s));
const LABEL_VALUE =
  "must be a Kubernetes label value: up to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit";
const labelValue = z.string().refine(isLabelValue, LABEL_VALUE);
/**
 * A Kubernetes quantity, as k8s.io/apimachinery/pkg/api/resource ParseQuantity reads it: a signed
 * decimal number (`1`, `1.5`, `.5`, `5.`), then a binary suffix (Ki Mi Gi Ti Pi Ei), a decimal one
 * (n u m "" k M G T P E) or a decimal exponent (`e3`, `E-3`, whole numbers only).
 */
const QUANTITY = /^[+-]?(\d+(\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?$/;
const quantity = (example: string) =>
  z
    .string({
      error: (iss) =>
        iss.input === undefined ? undefined : `must be a Kubernetes quantity string such as "${example}" (quoted)`,
    })
    .regex(
      QUANTITY,
      `must be a Kubernetes quantity such as ${example}, 64G or 1e9: a number, then a binary (Ki, Mi, Gi, Ti, Pi, Ei) or decimal (k, M, G, T, P, E, m) suffix or an exponent`,
    )
    // A size of zero or below is refused by the API server (emptyDir sizeLimit, PVC requests).
    .refine((s) => {
      const m = QUANTITY.exec(s);
      return !m || (!s.startsWith("-") && Number(m[1]) > 0);
    }, "must be greater than zero");

const image = text.refine((s) => !/\s/.test(s), "must be a container image reference (no whitespace)");
/**
 * A reference that names one build: a digest, or a tag other than `latest`. An untagged reference
 * means `latest`, which moves under a running fleet and is not what was tested.
 */
export function pinnedImage(ref: string): boolean {
  if (ref.includes("@")) return true;
  const last = ref.slice(ref.lastIndexOf("/") + 1);
  const colon = last.indexOf(":");
  return colon >= 0 && last.slice(colon + 1) !== "" && last.slice(colon + 1) !== "latest";
}
const PINNED = "must be pinned to a tag other than latest or to a digest (name:tag or name@sha256:...)";

const toleration = table({
  key: text.refine(qualifiedName, QUALIFIED).optional().describe("The taint's key (unset: every taint, with Exists)"),
  operator: z.enum(["Exists", "Equal"]).optional().describe("Exists or Equal (Kubernetes' default Equal)"),
  value: text.refine(isLabelValue, LABEL_VALUE).optional().describe("The taint's value, with Equal"),
  effect: z
    .enum(["NoSchedule", "PreferNoSchedule", "NoExecute"])
    .optional()
    .describe("The taint's effect (unset: every effect)"),
});

const modelCache = table({
  pvc: k8sName.optional().describe("Existing PersistentVolumeClaim holding the Hugging Face cache"),
  host_path: text.optional().describe("Node directory holding the Hugging Face cache"),
  mount_path: text
    .default("/root/.cache/huggingface")
    .describe("Where the cache is mounted (default /root/.cache/huggingface)"),
});

const compileCache = table({
  pvc: k8sName
    .optional()
    .describe(
      "Existing PersistentVolumeClaim (ReadWriteMany when engines run on several nodes) holding vLLM's compile cache (VLLM_CACHE_ROOT) across pods and deployments, instead of each pod's emptyDir; each (model, engine image, parallel layout) gets its own sub-folder",
    ),
});

/** A CPU request and a memory request (also the limit: memory is not compressible) for one container. */
const podResources = (cpu: string, memory: string) =>
  table({
    cpu: quantity(cpu).default(cpu).describe(`CPU request (default ${cpu})`),
    memory: quantity(memory).default(memory).describe(`Memory request and limit (default ${memory})`),
  }).default({ cpu, memory });

/** The default engine's image (vLLM's): the engine pods', and the Mooncake store's, which ships in it. */
export const VLLM_IMAGE = defaultEngineImage();

/** Each other engine's image, as kubernetes.image's description names them. */
const otherImages = ENGINE_PARTS.filter((part) => part.image && part.image !== VLLM_IMAGE)
  .map((part) => `with engine = "${part.name}", ${part.image}`)
  .join("; ");

/** Namespaces every cluster has, which Kubernetes refuses to delete: never created, whatever create_namespace says. */
export const BUILT_IN_NAMESPACES = ["default", "kube-system", "kube-public", "kube-node-lease"];

/** `[kubernetes]`: run the fleet as Kubernetes workloads instead of SLURM jobs. */
export const kubernetesTable = table({
  // No default here: unset, the namespace is named after the fleet (its Pulumi stack), which only
  // the target knows (components/kubernetes/fleet-namespace.ts), so two fleets never share one.
  namespace: k8sName
    .optional()
    .describe(
      "The fleet's namespace (default: one of its own, vllm-fleet-<the Pulumi stack name as object names spell it>, so fleets in one cluster never clash, created and deleted with the fleet); one named here is used as it exists and never deleted, unless create_namespace = true",
    ),
  // No default here either: it follows kubernetes.namespace (config/namespace-owner.ts).
  create_namespace: z
    .boolean()
    .optional()
    .describe(
      `Create the namespace, and delete it with the fleet (with everything in it); a namespace that already exists holds any PVC, pull Secret or ServiceAccount the fleet names (default: true for the fleet's own namespace, kubernetes.namespace unset; false for one kubernetes.namespace names, used as it exists; ${BUILT_IN_NAMESPACES.join(", ")} are never created)`,
    ),
  image: image
    .default(VLLM_IMAGE)
    .describe(
      `Engine container image (default ${VLLM_IMAGE}; with another vllm_version, that release's; ${otherImages}: AUTO_SETUP "each engine on Kubernetes runs its own image")`,
    ),
  router_image: image
    .refine(pinnedImage, PINNED)
    .optional()
    .describe(
      "Router container image, pinned by tag or digest; no default (vllm-project/router publishes none, nor a pinned sglang-router one): required on Kubernetes when router.type is vllm-router or sglang-router",
    ),
  // llm-d-router v0.10.0 publishes ghcr.io/llm-d/llm-d-router-endpoint-picker and
  // ghcr.io/llm-d/llm-d-router-disagg-sidecar (its Makefile EPP_IMAGE_NAME / SIDECAR_IMAGE_NAME,
  // .github/ISSUE_TEMPLATE/new-release.md).
  epp_image: image
    .default("ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.10.0")
    .describe("llm-d endpoint picker (EPP) image (default ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.10.0)"),
  envoy_image: image
    .default("envoyproxy/envoy:v1.36.0")
    .describe("Envoy image in front of the llm-d EPP (default envoyproxy/envoy:v1.36.0)"),
  mooncake_image: image
    .default(VLLM_IMAGE)
    .describe("Image with mooncake_master and mooncake_client (default: the vLLM image)"),
  lmcache_image: image
    .refine(pinnedImage, PINNED)
    .optional()
    .describe(
      "Image with LMCache's `lmcache` command (pip install lmcache, the version of the engines' connector), pinned by tag or digest; no default: required on Kubernetes when kv_cache_offload.type is lmcache",
    ),
  sidecar_image: image
    .default("ghcr.io/llm-d/llm-d-router-disagg-sidecar:v0.10.0")
    .describe(
      "llm-d P/D sidecar image for decode pods (P/D with llm-d; default ghcr.io/llm-d/llm-d-router-disagg-sidecar:v0.10.0)",
    ),
  image_pull_secrets: z
    .array(k8sName)
    .default([])
    .describe("Secrets the pods pull their images with, in the fleet's namespace (default none)"),
  service_account: k8sName
    .optional()
    .describe("ServiceAccount of the engine pods, in the fleet's namespace (default: the namespace's default)"),
  node_selector: z
    .record(labelKey, labelValue)
    .default({})
    .describe("Node selector of the engine (GPU) pods; see aux_node_selector for the others (default none)"),
  tolerations: z
    .array(toleration)
    .default([])
    .describe("Tolerations of the engine (GPU) pods; see aux_tolerations for the others (default none)"),
  model_cache: modelCache.optional(),
  gpu_resource: text
    .refine(qualifiedName, QUALIFIED)
    .default("nvidia.com/gpu")
    .describe("Extended resource name for GPUs (default nvidia.com/gpu)"),
  shm_size: quantity("16Gi")
    .default("16Gi")
    .describe("Size of the engine pods' /dev/shm (memory-backed emptyDir), a Kubernetes quantity (default 16Gi)"),
  disk_offload_storage_class: k8sName
    .optional()
    .describe("StorageClass of the disk KV-offload volumes (default: the cluster's default class)"),
  disk_offload_size: quantity("500Gi")
    .default("500Gi")
    .describe("Size of the KV-offload disk volume, a Kubernetes quantity (default 500Gi)"),
  cluster_domain: text
    .refine((s) => s.length <= 253 && SUBDOMAIN.test(s), "must be a DNS domain such as cluster.local (lower case)")
    .default("cluster.local")
    .describe(
      "The cluster's DNS domain (the kubelet's clusterDomain), in every in-cluster address: engine pods, the router's worker URLs, the data-parallel address, the outputs (default cluster.local)",
    ),
  startup_timeout: z
    .number()
    .int()
    .min(60)
    .max(86400)
    .default(ENGINE_READY_TIMEOUT_S)
    .describe(
      `Seconds the engines' startup probe allows; the default is vLLM's VLLM_ENGINE_READY_TIMEOUT_S as the fleet sets it and the router's wait for its workers (default ${ENGINE_READY_TIMEOUT_S})`,
    ),
  stuck_after: z
    .number()
    .int()
    .min(10)
    .max(86400)
    .default(300)
    .describe(
      "Seconds a pod may stay unschedulable, refused at creation (Pod Security, quota, webhooks), unable to pull its image or crash-looping before `pulumi up` fails with the reason from the cluster, naming the object; a cluster autoscaler adding a GPU node needs a few minutes (default 300)",
    ),
  cpu_per_gpu: quantity("4")
    .default("4")
    .describe(
      "CPU requested per GPU of an engine pod, a Kubernetes quantity; no CPU limit is set (default 4: llm-d's P/D guide requests 16 CPUs per 4 GPUs)",
    ),
  memory_per_gpu: quantity("16Gi")
    .default("16Gi")
    .describe(
      "Memory requested (and limited to) per GPU of an engine pod, before /dev/shm and the CPU offload tier are added (default 16Gi: llm-d's P/D guide requests 64Gi per 4 GPUs)",
    ),
  offload_memory_headroom: quantity("8Gi")
    .default("8Gi")
    .describe(
      "Memory added on top of a CPU KV-offload tier (native offload in the engine, the Mooncake client's store share) for its allocator and bookkeeping (default 8Gi)",
    ),
  hf_cache_size: quantity("300Gi")
    .default("300Gi")
    .describe(
      "Without model_cache: size limit of the engine pods' emptyDir Hugging Face cache (HF_HOME), which ephemeral-storage requests cover (default 300Gi)",
    ),
  compile_cache: compileCache.optional(),
  compile_cache_size: quantity("20Gi")
    .default("20Gi")
    .describe(
      "Without compile_cache.pvc: size limit of the engine pods' emptyDir vLLM cache (VLLM_CACHE_ROOT: torch.compile and CUDA graph artifacts), requested as ephemeral-storage (default 20Gi)",
    ),
  router_resources: podResources("1", "1Gi").describe(
    "CPU request and memory request (= limit) of the vllm-router container (default 1 CPU, 1Gi)",
  ),
  epp_resources: podResources("1", "2Gi").describe(
    "CPU request and memory request (= limit) of the llm-d EPP container (default 1 CPU, 2Gi)",
  ),
  envoy_resources: podResources("500m", "512Mi").describe(
    "CPU request and memory request (= limit) of the Envoy container beside the EPP (default 500m, 512Mi)",
  ),
  sidecar_resources: podResources("250m", "256Mi").describe(
    "CPU request and memory request (= limit) of the llm-d routing sidecar in decode pods (default 250m, 256Mi)",
  ),
  mooncake_master_resources: podResources("1", "2Gi").describe(
    "CPU request and memory request (= limit) of the Mooncake master container (default 1 CPU, 2Gi)",
  ),
  priority_class: k8sName
    .optional()
    .describe(
      "PriorityClass of every fleet pod (priorityClassName), so engines are not the first preempted or evicted; the class must exist (default none)",
    ),
  // Issue 20 #8 and #11: engines' disruption budgets, and Prometheus Operator monitors (opt-in).
  disruption_budget: z
    .boolean()
    .default(true)
    .describe(
      "One PodDisruptionBudget per engine replica (StatefulSet or LeaderWorkerSet) with maxUnavailable 0: a voluntary eviction of a serving engine (kubectl drain, the cluster autoscaler) then waits for `pulumi destroy` or for the operator (deleting the budget), so a run never loses a replica mid-step; a crashed or not-ready engine stays evictable (unhealthyPodEvictionPolicy AlwaysAllow). false leaves engines evictable (default true)",
    ),
  monitoring: z
    .boolean()
    .default(false)
    .describe(
      "Prometheus Operator PodMonitors (monitoring.coreos.com/v1), per island one for the serving engines and one for the vllm-router or llm-d EPP, scraping /metrics on their named ports; the Prometheus Operator CRDs must be installed (default false)",
    ),
  monitoring_labels: z
    .record(labelKey, labelValue)
    .default({})
    .describe(
      "Labels added to the PodMonitors (with monitoring = true), so a Prometheus whose podMonitorSelector asks for them picks them up: kube-prometheus-stack selects release: <its Helm release> by default (default none)",
    ),
  aux_node_selector: z
    .record(labelKey, labelValue)
    .default({})
    .describe(
      "Node selector of the router, EPP + Envoy and Mooncake master pods, which need no GPU; node_selector applies to engine pods only (default none)",
    ),
  aux_tolerations: z
    .array(toleration)
    .default([])
    .describe(
      "Tolerations of the router, EPP + Envoy and Mooncake master pods; tolerations applies to engine pods only (default none)",
    ),
  // The fabric (issue 20): what cross-pod DeepEP, NIXL and Mooncake over RDMA need in an engine pod
  // and no fleet can guess: the RDMA device plugin's resource, Multus networks, capabilities, NCCL /
  // NVSHMEM interface names. Engine pods only; rules.ts refuses names the fleet sets itself.
  extra_resources: z
    .record(z.string().refine(qualifiedName, QUALIFIED), z.union([z.number().int().min(1), quantity("1")]))
    // Extended resources (a domain-prefixed name outside kubernetes.io, such as rdma/ib) are whole
    // devices: the API server refuses a fraction (k8s.io/kubernetes pkg/apis/core/validation).
    .superRefine((r, ctx) => {
      for (const [k, v] of Object.entries(r))
        if (
          k.includes("/") &&
          !/(^|\.)kubernetes\.io\//.test(k) &&
          typeof v === "string" &&
          QUANTITY.test(v) &&
          !/^\d+$/.test(v)
        )
          ctx.addIssue({ code: "custom", path: [k], message: `must be a whole number: ${k} is an extended resource` });
    })
    .default({})
    .describe(
      'Resources each engine container requests and is limited to beside GPUs, CPU and memory, such as the RDMA device plugin\'s { "rdma/ib" = "1" }: a quantity, or a whole number; engine pods only (default none)',
    ),
  pod_annotations: z
    .record(
      z.string().refine(qualifiedName, QUALIFIED),
      z
        .string()
        .max(65536)
        .refine((s) => !s.includes("\0"), "must not contain a NUL byte"),
    )
    .default({})
    .describe(
      'Annotations of the engine pods, such as Multus\'s { "k8s.v1.cni.cncf.io/networks" = "..." } for a secondary (RDMA) network; engine pods only (default none)',
    ),
  pod_labels: z
    .record(labelKey, labelValue)
    .default({})
    .describe(
      "Labels of the engine pods beside the fleet's own, which they cannot replace (app.kubernetes.io/name, instance and component, vllm-fleet/*, llm-d.ai/role, LeaderWorkerSet's); engine pods only (default none)",
    ),
  capabilities: z
    .array(
      z
        .string()
        .regex(/^[A-Z][A-Z0-9_]*$/, "must be a Linux capability name in upper case, such as IPC_LOCK or SYS_RAWIO")
        .refine((s) => !s.startsWith("CAP_"), "must be named without the CAP_ prefix (IPC_LOCK, not CAP_IPC_LOCK)"),
    )
    .default([])
    .describe(
      "Linux capabilities added to the engine container (securityContext.capabilities.add), such as SYS_RAWIO; the fleet adds IPC_LOCK itself where engines pin memory (KV offload, P/D, cross-pod DeepEP); engine pods only (default none)",
    ),
  env: envVars
    .default({})
    .describe(
      "Environment of the engine containers for the cluster's fabric, such as NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME, NCCL_IB_HCA or NVSHMEM_HCA_PREFIX; names the fleet sets (VLLM_*, HF_*, PYTHONHASHSEED, ...) or env_vars sets are refused; engine pods only (default none)",
    ),
});
