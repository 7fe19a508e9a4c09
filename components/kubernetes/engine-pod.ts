import { createHash } from "node:crypto";
import type { EngineProcess, IslandPlan } from "../plan/deployment-plan";
import { engineNamed } from "../plan/engines";
import { pathComponent } from "../plan/cache";
import { labels, MOUNTED_FILES, placement, type K8sContext } from "./render-context";
import type { EngineWorkload } from "./names";
import {
  fieldEnv,
  httpProbe,
  k8sLiteral,
  resources,
  secretEnv,
  SECRET_KEYS,
  tcpProbe,
  type Container,
  type EnvVar,
  type PersistentVolumeClaim,
  type PodTemplateSpec,
  type Volume,
  type VolumeMount,
} from "./objects";
import { mooncakeArgv, mooncakeConfigMapName, mooncakeConfigText } from "./mooncake-objects";
import { isSelf, k8sArgv, k8sValue, scriptWord } from "./kubelet-values";
import { cpuQuantity, quantityValue, sumBytes } from "./quantity";
import { weightsReadinessProbe } from "./weights-readiness";

/** Seconds between startup probes; the budget is [kubernetes] startup_timeout. */
const STARTUP_PERIOD_S = 10;
/** Where the Hugging Face cache is when the stack names no model_cache (the schema's mount_path default). */
const HF_HOME = "/root/.cache/huggingface";
/** vLLM's cache root (VLLM_CACHE_ROOT): torch.compile and CUDA graph artifacts. */
const VLLM_CACHE_ROOT = "/root/.cache/vllm";
/**
 * vLLM seeds its prefix-cache block hashes (NONE_HASH) from PYTHONHASHSEED and from os.urandom
 * without it, so a restarted engine would hash the same prompt differently (vllm/v1/core/kv_cache_utils.py).
 */
const PYTHONHASHSEED = "0";
/**
 * Shutdown: the preStop sleep lets Services and the EPP drop the pod before vLLM sees SIGTERM; then
 * vLLM drains in-flight requests for --shutdown-timeout seconds; kubelet's grace period covers
 * both with a margin. Decode pods hold long generations, so they get longer.
 */
const PRE_STOP_SLEEP_S = 5;
const GRACE_MARGIN_S = 10;
export const terminationGraceSeconds = (role: EngineProcess["role"]) => (role === "decode" ? 90 : 75);
const shutdownTimeout = (role: EngineProcess["role"]) =>
  terminationGraceSeconds(role) - PRE_STOP_SLEEP_S - GRACE_MARGIN_S;

/**
 * Flags only Kubernetes engines get, after the plan's command line (and the API key): the engine's
 * own (Engine.podFlags: quiet probe endpoints, the drain budget) for a process that serves.
 */
export function kubernetesEngineFlags(e: Pick<EngineProcess, "argv" | "port" | "role" | "engine">): string[] {
  if (e.port === undefined) return [];
  return engineNamed(e.engine).podFlags(e, shutdownTimeout(e.role));
}

/**
 * The engine's bash script: clear /dev/shm (a crashed engine's leftover segments make every
 * restart fail, llm-d #352), then exec the engine so it is PID 1 and receives SIGTERM. On LWS workers
 * the node's place in its group (Engine.groupRank) comes from the worker index, which only exists at run time; in LWS pods (`lwsLeader`:
 * the group's leader node) the leader's address is the LWS_LEADER_ADDRESS that LWS injects.
 */
export function engineScript(
  ctx: K8sContext,
  island: number,
  e: EngineProcess,
  rankFromWorkerIndex?: number,
  lwsLeader?: number,
): string {
  const words = e.argv.map((v) => scriptWord(ctx, island, v, lwsLeader));
  if (rankFromWorkerIndex !== undefined) {
    const { flag } = engineNamed(e.engine).groupRank;
    const at = e.argv.indexOf(engineNamed(e.engine).spellFlag(flag));
    if (at < 0) throw new Error(`internal error: ${e.id} has no ${flag}`);
    words[at + 1] = `"$((LWS_WORKER_INDEX * ${rankFromWorkerIndex}))"`;
  }
  // The key is in the pod's env from the Secret; bash expands it at exec, so no object holds it.
  if (ctx.secrets.includes("apiKey") && e.port !== undefined)
    words.push(engineNamed(e.engine).spellFlag("--api-key"), `"$${SECRET_KEYS.apiKey}"`);
  words.push(...kubernetesEngineFlags(e));
  const lines: string[] = [];
  for (const w of words) {
    if (lines.length === 0 || w.startsWith("--")) lines.push(w);
    else lines[lines.length - 1] += ` ${w}`;
  }
  return [
    "# Leftover shared memory of a crashed engine makes every restart fail (llm-d #352).",
    "find /dev/shm -mindepth 1 -delete 2>/dev/null || true",
    `exec ${lines.join(" \\\n  ")}`,
    "",
  ].join("\n");
}

function engineEnv(ctx: K8sContext, island: number, e: EngineProcess, lwsLeader?: number): EnvVar[] {
  const env: EnvVar[] = [fieldEnv("POD_IP", "status.podIP")];
  for (const [name, value] of e.env) {
    // NIXL must advertise the pod IP: VLLM_NIXL_SIDE_CHANNEL_HOST defaults to localhost (vLLM's
    // vllm/envs.py), and llm-d's P/D guide sets it from status.podIP too.
    env.push(isSelf(value) ? fieldEnv(name, "status.podIP") : { name, value: k8sValue(ctx, island, value, lwsLeader) });
  }
  const own = new Set(e.env.map(([name]) => name));
  const add = (name: string, value: string) => {
    if (!own.has(name)) env.push({ name, value: k8sLiteral(value) });
  };
  add("HF_HOME", ctx.target.model_cache?.mount_path ?? HF_HOME);
  add("VLLM_CACHE_ROOT", VLLM_CACHE_ROOT);
  add("PYTHONHASHSEED", PYTHONHASHSEED);
  for (const s of ctx.secrets) env.push(secretEnv(ctx.names.secret, SECRET_KEYS[s]));
  // The cluster's fabric (kubernetes.env): names the fleet sets are refused (config/rules.ts).
  for (const [name, value] of Object.entries(ctx.target.env)) env.push({ name, value: k8sLiteral(value) });
  return env;
}

/** The disk tier's per-pod volume (StatefulSet and LeaderWorkerSet both stamp one out per pod). */
export function diskClaims(ctx: K8sContext): PersistentVolumeClaim[] | undefined {
  if (ctx.plan.kvTiers?.diskPath === undefined) return undefined;
  const t = ctx.target;
  return [
    {
      metadata: { name: "kv-disk" },
      spec: {
        accessModes: ["ReadWriteOnce"],
        ...(t.disk_offload_storage_class ? { storageClassName: t.disk_offload_storage_class } : {}),
        resources: { requests: { storage: t.disk_offload_size } },
      },
    },
  ];
}

/**
 * An island's folder in kubernetes.compile_cache.pvc: <model>/<engine>-<image>/<layout>
 * (components/plan/cache.ts), the image standing for the engine version, which only it fixes here.
 */
export function compileCacheFolder(ctx: K8sContext, island: number): string {
  const c = ctx.plan.islands[island].cache;
  return `${c.model}/${c.engine}-${pathComponent(ctx.target.image)}/${c.layout}`;
}

function volumes(ctx: K8sContext, island: number): { volumes: Volume[]; mounts: VolumeMount[] } {
  const t = ctx.target;
  const volumes: Volume[] = [{ name: "dshm", emptyDir: { medium: "Memory", sizeLimit: t.shm_size } }];
  const mounts: VolumeMount[] = [{ name: "dshm", mountPath: "/dev/shm" }];
  if (t.model_cache) {
    const c = t.model_cache;
    volumes.push(
      c.pvc
        ? { name: "model-cache", persistentVolumeClaim: { claimName: c.pvc } }
        : { name: "model-cache", hostPath: { path: c.host_path!, type: "DirectoryOrCreate" } },
    );
    mounts.push({ name: "model-cache", mountPath: c.mount_path });
  } else {
    // Without a cache, a 100-200 GB checkpoint would land in the container's writable layer.
    volumes.push({ name: "hf-cache", emptyDir: { sizeLimit: t.hf_cache_size } });
    mounts.push({ name: "hf-cache", mountPath: HF_HOME });
  }
  if (t.compile_cache?.pvc) {
    // The fleet's compile cache (issue 32), kept across pods and deployments: the island's folder
    // in the claim, keyed by the image (the engine version here) so another build never reuses it.
    volumes.push({ name: "vllm-cache", persistentVolumeClaim: { claimName: t.compile_cache.pvc } });
    mounts.push({ name: "vllm-cache", mountPath: VLLM_CACHE_ROOT, subPath: compileCacheFolder(ctx, island) });
  } else {
    volumes.push({ name: "vllm-cache", emptyDir: { sizeLimit: t.compile_cache_size } });
    mounts.push({ name: "vllm-cache", mountPath: VLLM_CACHE_ROOT });
  }
  const tiers = ctx.plan.kvTiers;
  if (tiers?.diskPath !== undefined) mounts.push({ name: "kv-disk", mountPath: tiers.diskPath });
  if (tiers?.store === "mooncake") {
    volumes.push({ name: "mooncake-config", configMap: { name: mooncakeConfigMapName(ctx, island) } });
    mounts.push({ name: "mooncake-config", mountPath: MOUNTED_FILES["mooncake-config"].dir, readOnly: true });
  }
  return { volumes, mounts };
}

/** Native sidecars (init containers that keep running) start, and pass their startup probe, before vLLM. */
function sidecars(ctx: K8sContext, island: IslandPlan, e: EngineProcess, mounts: VolumeMount[]): Container[] {
  const out: Container[] = [];
  const mooncake = island.mooncake;
  const client = mooncake?.clients.find((c) => c.node === e.node);
  if (mooncake && client) {
    const tiers = ctx.plan.kvTiers!;
    out.push({
      name: "mooncake-client",
      image: ctx.target.mooncake_image,
      restartPolicy: "Always",
      command: mooncakeArgv(ctx, island, client.argv),
      env: [fieldEnv("POD_IP", "status.podIP")],
      ports: [{ name: "mooncake", containerPort: mooncake.clientPort }],
      // The client holds this node's share of the store in DRAM, plus headroom for its allocator.
      resources: resources("1", sumBytes(tiers.cpuBytes, ctx.target.offload_memory_headroom)),
      startupProbe: tcpProbe(mooncake.clientPort, 2, 150),
      volumeMounts: mounts.filter((m) => m.name === "kv-disk"),
    });
  }
  const lmcache = island.lmcache;
  const server = lmcache?.servers.find((s) => s.node === e.node);
  if (lmcache && server) {
    out.push({
      name: "lmcache-server",
      image: ctx.target.lmcache_image!,
      restartPolicy: "Always",
      command: k8sArgv(ctx, island.index, server.argv),
      ports: [{ name: "lmcache-http", containerPort: lmcache.httpPort }],
      // The server holds this pod's L1 in DRAM, plus headroom for its allocator.
      resources: resources("1", sumBytes(ctx.plan.kvTiers!.cpuBytes, ctx.target.offload_memory_headroom)),
      // Its ZMQ port is on the pod's loopback; the HTTP frontend listens once the server is up.
      startupProbe: tcpProbe(lmcache.httpPort, 2, Math.ceil(lmcache.listenS / 2)),
    });
  }
  const sidecar = island.router?.kind === "llm-d" ? island.router.sidecars.find((s) => s.node === e.node) : undefined;
  if (sidecar) {
    out.push({
      name: "routing-proxy",
      image: ctx.target.sidecar_image,
      restartPolicy: "Always",
      args: k8sArgv(ctx, island.index, sidecar.argv.slice(1)),
      ports: [{ name: "sidecar", containerPort: sidecar.port }],
      resources: resources(ctx.target.sidecar_resources.cpu, ctx.target.sidecar_resources.memory),
      startupProbe: tcpProbe(sidecar.port, 2, 60),
    });
  }
  return out;
}

function engineContainer(
  ctx: K8sContext,
  island: IslandPlan,
  e: EngineProcess,
  script: string,
  mounts: VolumeMount[],
  lwsLeader?: number,
): Container {
  const t = ctx.target;
  const gpus = String(e.gpus.length);
  const tiers = ctx.plan.kvTiers;
  // Per GPU (llm-d's P/D guide: 16 CPUs and 64Gi per 4 GPUs); memory-backed /dev/shm counts
  // against the memory limit, and native CPU offload pins its whole tier in the engine process.
  const memory = sumBytes(
    quantityValue(t.memory_per_gpu) * e.gpus.length,
    t.shm_size,
    ...(tiers?.store === "native" ? [tiers.cpuBytes, t.offload_memory_headroom] : []),
  );
  const cpu = cpuQuantity(quantityValue(t.cpu_per_gpu) * e.gpus.length);
  // The emptyDir caches count as ephemeral storage; caches on volumes (model_cache, compile_cache) do not.
  const emptyDirs = [
    ...(t.compile_cache?.pvc ? [] : [t.compile_cache_size]),
    ...(t.model_cache ? [] : [t.hf_cache_size]),
  ];
  const disk: Record<string, string> = emptyDirs.length ? { "ephemeral-storage": sumBytes(...emptyDirs) } : {};
  const ports = [
    ...(e.port !== undefined ? [{ name: "http", containerPort: e.port }] : []),
    ...(e.nixlPorts ?? []).map((p, r) => ({ name: `nixl-${r}`, containerPort: p })),
  ];
  const { health } = engineNamed(e.engine).routes;
  const probes =
    e.port === undefined
      ? {}
      : {
          startupProbe: httpProbe(health, e.port, STARTUP_PERIOD_S, Math.ceil(t.startup_timeout / STARTUP_PERIOD_S)),
          // Serving, and not the base model while its peers serve the trainer's update (weights-readiness.ts).
          readinessProbe: weightsReadinessProbe(island, e, ctx.names.engineService(island.index)),
          // /health, not the port: a hung engine keeps its port open. A minute of failures (and a
          // generous timeout, under a full batch) before a restart, which costs a model load.
          livenessProbe: { ...httpProbe(health, e.port, 10, 6), timeoutSeconds: 10 },
          lifecycle: { preStop: { exec: { command: ["sleep", String(PRE_STOP_SLEEP_S)] } } },
        };
  // Pinned host memory for offloaded KV blocks and NIXL/RDMA registration, and DeepEP's NVSHMEM
  // buffers across pods (RDMA registration is bounded by RLIMIT_MEMLOCK without IPC_LOCK).
  const capabilities = [...new Set([...(e.needs.pinsMemory.length ? ["IPC_LOCK"] : []), ...t.capabilities])];
  // kubernetes.extra_resources (the RDMA device, ...): extended resources are requested and limited alike.
  const extra = Object.fromEntries(Object.entries(t.extra_resources).map(([k, v]) => [k, String(v)]));
  return {
    name: engineNamed(e.engine).container,
    image: t.image,
    command: ["/bin/bash", "-c", k8sLiteral(script)],
    env: engineEnv(ctx, island.index, e, lwsLeader),
    ...(ports.length ? { ports } : {}),
    resources: {
      limits: { [t.gpu_resource]: gpus, memory, ...extra },
      requests: { [t.gpu_resource]: gpus, cpu, memory, ...disk, ...extra },
    },
    volumeMounts: mounts,
    ...probes,
    ...(capabilities.length ? { securityContext: { capabilities: { add: capabilities } } } : {}),
  };
}

/** Pod labels of an engine; `serving` pods are the ones routers and the InferencePool may pick. */
export function engineLabels(
  ctx: K8sContext,
  island: number,
  wl: Pick<EngineWorkload, "role" | "replica">,
  serving?: boolean,
): Record<string, string> {
  // llm-d's prefill-filter and decode-filter read this label.
  const pd: Record<string, string> = wl.role === "replica" ? {} : { "llm-d.ai/role": wl.role };
  return labels(ctx, "engine", island, {
    "vllm-fleet/role": wl.role,
    "vllm-fleet/replica": String(wl.replica),
    ...pd,
    ...(serving === undefined ? {} : { "vllm-fleet/serving": String(serving) }),
  });
}

/** Every pod that serves the API in an island: what the InferencePool selects. */
export const servingSelector = (ctx: K8sContext, island: number) =>
  labels(ctx, "engine", island, { "vllm-fleet/serving": "true" });

/** One engine pod's template; `rankFromWorkerIndex` makes the LWS worker template. */
export function enginePodTemplate(
  ctx: K8sContext,
  island: IslandPlan,
  wl: EngineWorkload,
  e: EngineProcess,
  rankFromWorkerIndex?: number,
): PodTemplateSpec {
  const t = ctx.target;
  const { volumes: vols, mounts } = volumes(ctx, island.index);
  const init = sidecars(ctx, island, e, mounts);
  // LWS injects the leader's address into every pod of the group, leader included.
  const lwsLeader = wl.kind === "LeaderWorkerSet" ? wl.engines[0].node : undefined;
  const script = engineScript(ctx, island.index, e, rankFromWorkerIndex, lwsLeader);
  // A changed Mooncake client config must restart the engines that read it; kubernetes.pod_annotations
  // (Multus networks, ...) cannot name the fleet's own (config/rules.ts).
  const annotations = {
    ...t.pod_annotations,
    ...(island.mooncake
      ? {
          "vllm-fleet/config-hash": createHash("sha256")
            .update(mooncakeConfigText(ctx, island))
            .digest("hex")
            .slice(0, 16),
        }
      : {}),
  };
  return {
    metadata: {
      // kubernetes.pod_labels beside the fleet's, which they cannot replace (config/rules.ts).
      labels: { ...t.pod_labels, ...engineLabels(ctx, island.index, wl, e.port !== undefined) },
      ...(Object.keys(annotations).length ? { annotations } : {}),
    },
    spec: {
      ...placement(ctx, "engine"),
      terminationGracePeriodSeconds: terminationGraceSeconds(e.role),
      ...(t.service_account ? { serviceAccountName: t.service_account } : {}),
      ...(init.length ? { initContainers: init } : {}),
      containers: [engineContainer(ctx, island, e, script, mounts, lwsLeader)],
      volumes: vols,
    },
  };
}
