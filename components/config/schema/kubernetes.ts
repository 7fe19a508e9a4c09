import { z } from "zod";
import { k8sName, table, text } from "./primitives";

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
const QUALIFIED = "must be a Kubernetes qualified name such as nvidia.com/gpu.product: an optional DNS prefix and '/', then up to 63 letters, digits, '-', '_' or '.' starting and ending with a letter or digit";
const labelKey = z.string().refine(qualifiedName, QUALIFIED);
const isLabelValue = (s: string) => s === "" || (s.length <= 63 && NAME.test(s));
const LABEL_VALUE = "must be a Kubernetes label value: up to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit";
const labelValue = z.string().refine(isLabelValue, LABEL_VALUE);
const image = text.refine((s) => !/\s/.test(s), "must be a container image reference (no whitespace)");

const toleration = table({
  key: text.refine(qualifiedName, QUALIFIED).optional(),
  operator: z.enum(["Exists", "Equal"]).optional(),
  value: text.refine(isLabelValue, LABEL_VALUE).optional(),
  effect: z.enum(["NoSchedule", "PreferNoSchedule", "NoExecute"]).optional(),
});

const modelCache = table({
  pvc: k8sName.optional().describe("Existing PersistentVolumeClaim holding the Hugging Face cache"),
  host_path: text.optional().describe("Node directory holding the Hugging Face cache"),
  mount_path: text.optional().describe("Where the cache is mounted (default /root/.cache/huggingface)"),
});

/** `[kubernetes]`: run the fleet as Kubernetes workloads instead of SLURM jobs. */
export const kubernetesTable = table({
  namespace: k8sName.optional(),
  image: image.optional().describe("vLLM container image (default vllm/vllm-openai)"),
  router_image: image.optional(),
  epp_image: image.optional(),
  envoy_image: image.optional(),
  mooncake_image: image.optional().describe("Image with mooncake_master and mooncake_client (default: the vLLM image)"),
  sidecar_image: image.optional().describe("llm-d routing sidecar image for decode pods (P/D with llm-d)"),
  image_pull_secrets: z.array(k8sName).optional(),
  service_account: k8sName.optional(),
  node_selector: z.record(labelKey, labelValue).optional(),
  tolerations: z.array(toleration).optional(),
  model_cache: modelCache.optional(),
  gpu_resource: text.refine(qualifiedName, QUALIFIED).optional().describe("Extended resource name for GPUs (default nvidia.com/gpu)"),
  shm_size: z
    .string()
    .regex(/^\d+(Ki|Mi|Gi|Ti)?$/, "must be a quantity such as 16Gi")
    .optional(),
  disk_offload_storage_class: k8sName.optional(),
  disk_offload_size: z
    .string()
    .regex(/^\d+(Ki|Mi|Gi|Ti)?$/, "must be a quantity such as 500Gi")
    .optional(),
  startup_timeout: z.number().int().min(60).max(86400).optional().describe("Seconds the startup probe allows (default 2700)"),
});
