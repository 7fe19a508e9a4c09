import { z } from "zod";
import { k8sName, table, text } from "./primitives";

const toleration = table({
  key: text.optional(),
  operator: z.enum(["Exists", "Equal"]).optional(),
  value: text.optional(),
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
  image: text.optional().describe("vLLM container image (default vllm/vllm-openai)"),
  router_image: text.optional(),
  epp_image: text.optional(),
  envoy_image: text.optional(),
  mooncake_image: text.optional().describe("Image with mooncake_master and mooncake_client (default: the vLLM image)"),
  sidecar_image: text.optional().describe("llm-d routing sidecar image for decode pods (P/D with llm-d)"),
  image_pull_secrets: z.array(k8sName).optional(),
  service_account: k8sName.optional(),
  node_selector: z.record(z.string(), z.string()).optional(),
  tolerations: z.array(toleration).optional(),
  model_cache: modelCache.optional(),
  gpu_resource: text.optional().describe("Extended resource name for GPUs (default nvidia.com/gpu)"),
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
