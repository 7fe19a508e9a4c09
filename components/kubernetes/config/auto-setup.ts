import type { ConfigView } from "../../config/fleet-config";
import type { SetupContext } from "../../config/target-part";
import type { KubernetesSettings } from "./settings";
import { enginePart } from "../../config/engine-registry";

/** What the Kubernetes target derives from other keys (target-part.ts autoSetup), by name. */
export const KUBERNETES_AUTO_SETUP: Record<
  string,
  (cfg: ConfigView, kube: KubernetesSettings, ctx: SetupContext) => void
> = {
  // One container per pod (a LeaderWorkerSet group spans the nodes of a replica); prime-rl's own
  // Kubernetes chart also runs one server per pod. Per-rank processes are a SLURM launch layout.
  "Kubernetes runs one engine process per node": (cfg, _kube, { paths }) => {
    if (cfg.engine_processes !== "per_rank") return;
    cfg.engine_processes = "per_node";
    if (cfg.deployment.type !== "single_node" || cfg.rl_deployment?.type === "multi_node")
      cfg.notes.push(
        `${paths("engine_processes")} is "per_rank", which applies on SLURM only: on Kubernetes every engine pod runs one vLLM process for all the DP ranks of its node (one container per pod), so this fleet runs one engine per node`,
      );
  },
  // The keeper (templates/host/keeper.sh.mustache) runs in the host targets' launch scripts; a pod's
  // containers are the kubelet's to restart.
  "the kubelet restarts containers on Kubernetes": (cfg, _kube, { given, paths }) => {
    if (!Object.keys(cfg.restart).some((k) => given(`restart.${k}`))) return;
    cfg.notes.push(
      `${paths("restart")} applies on SLURM and the local target: on Kubernetes the kubelet restarts a crashed engine container with its own back-off (10 s, doubling up to 5 min) and no budget, and its readiness probe keeps it out of the pool until it serves`,
    );
  },
  // The image's default is the default engine's at its newest release; another engine, or vLLM at
  // another vllm_version, runs its own (EngineConfigPart.image, imageOf).
  "each engine on Kubernetes runs its own image": (cfg, kube, { given }) => {
    const part = enginePart(cfg.engine);
    if (!given("kubernetes.image")) kube.image = part.imageOf?.(cfg) ?? part.image ?? kube.image;
  },
  // The InferencePool has one target port for prefill and decode pods: in llm-d's P/D guide
  // (github.com/llm-d/llm-d, guides/pd-disaggregation) prefill vLLM and the decode sidecar share it.
  "llm-d P/D on Kubernetes: the decode sidecar takes the prefill port": (cfg, _kube, { given }) => {
    if (cfg.router.type === "llm-d" && cfg.deployment.type === "disaggregated" && !given("router.decode_sidecar_port"))
      cfg.router.decode_sidecar_port = cfg.deployment.prefill_port;
  },
};
