/**
 * Shell and manifest injection corpus: every payload of ./payloads.ts in every string field of the
 * stack schema that can reach a SLURM script or a Kubernetes manifest. Each placement is either
 * rejected by the loader with an issue naming its key, or rendered and then
 *
 * - SLURM: the create script runs under real bash against local stand-ins (./harness.ts): sbatch
 *   runs the batch script, srun runs the launch body per node, the fleet's programs record their
 *   argv and env; then the delete command runs. No canary file may appear, every process must get
 *   exactly the planned argv and env, and each field's value must land byte for byte where a
 *   marker value lands (a differential against a run with markers in the same fields).
 * - Kubernetes: kubelet's $(VAR) expansion is applied to every command, arg and env value (with the
 *   fleet's secrets defined), engine scripts run under bash, ConfigMaps are parsed, and the result
 *   must equal the marker render with each marker replaced by the payload.
 * - shellcheck: every rendered script passes, as the other script tests run it.
 *
 * Runs are merged to stay fast: one SLURM run per (payload, variant) carries the payload in every
 * field of that variant (one base stack), each placement with its own canary file and its own
 * marker, so a canary or a wrong value still names one field and one payload; a run that fails
 * as a whole is repeated placement by placement. Validation and rendering (and so shellcheck) are
 * per field and payload. Fields holding paths get the payload inside a path (under the run's own
 * directory where the path is written to), since that is how a payload reaches them.
 *
 * The corpus runs in groups, one per SLURM run variant and one per Kubernetes base stack, each a
 * describe with its fields' tests; a group runs in parts (slices of the payloads), each in a bounded
 * hook of its own. The tests after the last group read what all of them found.
 *
 * The fields cover both layouts: the older one (stacks/) and prime-rl's (test/fixtures/prime-rl/
 * files as bases, on SLURM and, with [slurm] swapped for [kubernetes], on Kubernetes).
 *
 * The tests are declared by injectionSuite for a shard of the groups; injection-shard<N>.test.ts are
 * the files, so vitest's workers run the shards side by side.
 *
 * INJECTION_REPORT=<file> writes every case's outcome and problems as JSON (one file per shard:
 * <file>.<N>-of-<M>.json); KEEP_INJECTION_DIR=1 keeps the run directories (homes, records, the files shellcheck read); INJECTION_FIELDS=<regex>
 * runs only the fields whose id matches (the coverage test still sees them all).
 */
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import YAML from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, FIXED_PORTS, loadCatalog, validate, type FleetConfig } from "../../components/config";
import { catalogPath } from "../../components/config/catalog";
import { catalogOverlayFile } from "../../components/config/schema/catalog";
import { kubernetesConfig } from "../../components/kubernetes/config";
import { lwsVariables, plannedPodArgv, POD_IP } from "../kubernetes/planned-argv";
import { RL_PASSENGERS, rlLayout, standaloneLayout } from "../../components/config/schema/layouts";
import {
  PRIME_RL_IGNORED_TABLES,
  PRIME_SFT_IGNORED_TABLES,
  primeRlLayout,
  primeSftLayout,
  primeStandaloneLayout,
} from "../../components/config/schema/prime";
import { parseToml } from "../../components/config/toml";
import { buildPlan } from "../../components/planner";
import type { DeploymentPlan, IslandPlan } from "../../components/plan/deployment-plan";
import { resolveValue, type Value } from "../../components/plan/values";
import { allK8sObjects, kubernetesEngineFlags, renderK8sFleet } from "../../components/kubernetes";
import { engineNamed } from "../../components/plan/engines";
import { generatedFiles, parseIslandResult, renderIslandJob, renderIslandScript } from "../../components/slurm";
import { ROOT as PACKAGE_ROOT, stackText } from "../helpers";
import * as H from "./harness";
import { PAYLOADS, type Payload } from "./payloads";

type Raw = Record<string, any>;
type Layout = "standalone" | "rl";
type Target = "slurm" | "k8s";

/** What a field's setter may touch besides the stack file: the catalog overlay it writes. */
interface Ctx {
  layout: Layout;
  /** The run's directory: canary files, home, paths built from payloads live under it. */
  dir: string;
  catalog: Record<string, Raw>;
}

interface Field {
  id: string;
  /** Schema leaves (see schemaLeaves) this field stands for. */
  covers: string[];
  /** SLURM: the run variant it joins (VARIANTS); Kubernetes: the base stack. */
  slurm?: string;
  k8s?: string;
  /** The user path a rejection must name (`prefix`: that path or one below it, for record keys). */
  at: (layout: Layout, model: string) => string;
  prefix?: true;
  /** Rejections are reported in the catalog file rather than the stack file. */
  inCatalog?: true;
  set: (raw: Raw, value: string, ctx: Ctx) => void;
  /** Payload text to the value placed: path fields put the payload inside a path. */
  value?: (text: string, ctx: Ctx) => string;
  /** The value placed to what its program gets, where the layout changes it on purpose. */
  arrives?: (value: string) => string;
  /** Only a closed set of values is valid: every payload must be rejected. */
  closed?: true;
  /** Never reaches a script or a manifest (why): accepted payloads must not appear in any. */
  unrendered?: string;
  /** Files a run needs for an accepted value (the venv's activate script). */
  prepare?: (value: string) => void;
  /** Placed by another suite, named here (neither slurm nor k8s then): the target runs elsewhere. */
  elsewhere?: string;
}

/**
 * Base stacks of the SLURM run variants; `dry`: also run the dry-run create script. Fields that
 * cannot share one stack file (two spellings of the model, two launchers) go in different variants.
 */
const VARIANTS: Record<string, { base: string; dry?: true; tweak?: (raw: Raw) => void }> = {
  "sn-main": { base: "single-node", dry: true },
  "sn-short": { base: "single-node", dry: true },
  "mr-main": { base: "multi-replica" },
  // One prefill and one decode node: the P/D shape at half the processes.
  dis: {
    base: "disaggregated-small",
    tweak: (r) => Object.assign(r.inference.deployment, { num_prefill_replicas: 1, num_decode_nodes: 1 }),
  },
  llmd: { base: "llm-d" },
  // engine = "sglang": its server's pass-through flags (python3 -m sglang.launch_server, the stand-in).
  sgl: { base: "sglang-single-node" },
  // prime-rl's layout: a standalone inference file, a P/D one (one prefill and one decode node), an
  // RL file and an SFT file (whose engines run prime-rl's `inference` server).
  "p-sn": { base: "prime-rl/single-node" },
  "p-pd": {
    base: "prime-rl/disaggregated-overrides",
    tweak: (r) => Object.assign(r.deployment, { prefill_nodes_per_replica: 1, num_decode_replicas: 1 }),
  },
  "p-rl": { base: "prime-rl/rl-single-node" },
  "p-sft": { base: "prime-rl/sft-single-node" },
};
const TWEAKS = new Map(Object.values(VARIANTS).flatMap((v) => (v.tweak ? [[v.base, v.tweak] as const] : [])));

// ---------------------------------------------------------------------------------------------
// Fields

const inference = (raw: Raw, c: Ctx): Raw => (c.layout === "rl" ? raw.inference : raw);
const sub = (t: Raw, key: string): Raw => (t[key] ??= {});
const inf = (l: Layout, key: string) => (l === "rl" ? `inference.${key}` : key);
function modelOf(raw: Raw, c: Ctx): Raw {
  const h = inference(raw, c);
  if (typeof h.model === "string") h.model = { name: h.model };
  return (h.model ??= {});
}
function modelName(raw: Raw, c: Ctx): string {
  const m = inference(raw, c).model;
  return typeof m === "string" ? m : m?.name;
}
const deployment = (raw: Raw, c: Ctx) => sub(inference(raw, c), "deployment");
function launcher(raw: Raw, type: string, defaults: Raw = {}): Raw {
  if (raw.slurm.launcher?.type !== type) raw.slurm.launcher = { type, ...defaults };
  return raw.slurm.launcher;
}
function mooncake(raw: Raw, c: Ctx): Raw {
  const h = inference(raw, c);
  if (h.kv_cache_offload?.type !== "mooncake")
    h.kv_cache_offload = { type: "mooncake", protocol: "tcp", cpu: { num_bytes: 1_000_000_000 } };
  return h.kv_cache_offload;
}
const catalogAt =
  (...keys: string[]) =>
  (_: Layout, model: string) =>
    catalogPath(["models", model, ...keys]);
/** The overlay entry for the model a stack names: an entry of this overlay it is an alias of, or its own. */
const overlay = (c: Ctx, name: string) =>
  (c.catalog[Object.keys(c.catalog).find((id) => c.catalog[id].aliases?.includes(name)) ?? name] ??= {});
/** A complete catalog entry for a new model id, copied from the base's model, under alias inj-model. */
function newCatalogModel(raw: Raw, value: string, c: Ctx): void {
  const entry = structuredClone(loadCatalog().models[modelName(raw, c)]) as Raw;
  c.catalog[value] = { ...entry, aliases: ["inj-model"] };
  modelOf(raw, c).name = "inj-model";
}

/** Payloads inside paths: absolute fields get a fixed root, SLURM paths the run's own directory. */
const underRoot = (root: string) => (text: string) => `${root}/${text}`;
const inRun = (rel: string) => (text: string, c: Ctx) => `${c.dir}/${rel}/${text}`;
/** A venv at `v` whose activate script records the path it was sourced by (checked per node below). */
const recordingVenv = (v: string) => {
  fs.mkdirSync(`${v}/bin`, { recursive: true });
  fs.writeFileSync(`${v}/bin/activate`, `printf '%s' "\${BASH_SOURCE[0]}" > "$FAKE_REC/venv.\${SLURM_PROCID:-x}"\n`);
};

const slurmNames = (["job_name", "partition", "account", "qos", "nodelist", "exclude", "constraint"] as const).map(
  (k): Field => ({
    id: `slurm.${k}`,
    covers: [`slurm.${k}`],
    slurm: "sn-main",
    at: () => `slurm.${k}`,
    set: (r, v) => void (r.slurm[k] = v),
  }),
);
const slurmClosed = (["time", "gres", "mem"] as const).map((k): Field => ({
  id: `slurm.${k}`,
  covers: [`slurm.${k}`],
  slurm: "sn-main",
  closed: true,
  at: () => `slurm.${k}`,
  set: (r, v) => void (r.slurm[k] = v),
}));
const images = (
  [
    ["image", "k8s-single-node"],
    ["router_image", "k8s-multi-replica"],
    ["epp_image", "k8s-llm-d-pd"],
    ["envoy_image", "k8s-llm-d-pd"],
    ["sidecar_image", "k8s-llm-d-pd"],
    ["mooncake_image", "k8s-kv-offload-mooncake"],
    ["lmcache_image", "k8s-kv-offload-lmcache"],
  ] as const
).map(([k, base]): Field => ({
  id: `kubernetes.${k}`,
  covers: [`kubernetes.${k}`],
  k8s: base,
  at: () => `kubernetes.${k}`,
  set: (r, v) => void (r.kubernetes[k] = v),
}));
/** [kubernetes] keys that take a Kubernetes quantity (16Gi, 4, 500m). */
const QUANTITY_KEYS = new Set<string>([
  "shm_size",
  "disk_offload_size",
  "hf_cache_size",
  "compile_cache_size",
  "cpu_per_gpu",
  "memory_per_gpu",
  "offload_memory_headroom",
]);
const k8sNamesFields = (
  [
    ["namespace", "k8s-single-node"],
    ["cluster_domain", "k8s-multi-replica"],
    ["service_account", "k8s-single-node"],
    ["disk_offload_storage_class", "k8s-kv-offload-native"],
    ["shm_size", "k8s-wide-ep"],
    ["disk_offload_size", "k8s-kv-offload-native"],
    ["hf_cache_size", "k8s-kv-offload-native"],
    ["compile_cache_size", "k8s-single-node"],
    ["cpu_per_gpu", "k8s-single-node"],
    ["memory_per_gpu", "k8s-single-node"],
    ["offload_memory_headroom", "k8s-kv-offload-native"],
    ["priority_class", "k8s-single-node"],
  ] as const
).map(([k, base]): Field => ({
  id: `kubernetes.${k}`,
  covers: [`kubernetes.${k}`],
  k8s: base,
  // Quantities such as 16Gi: no marker is one either.
  closed: QUANTITY_KEYS.has(k) ? true : undefined,
  at: () => `kubernetes.${k}`,
  set: (r, v) => void (r.kubernetes[k] = v),
}));
/** Each container's own resources: Kubernetes quantities, a closed form no payload takes. */
const resourceFields = (
  [
    ["router_resources", "k8s-multi-replica"],
    ["epp_resources", "k8s-llm-d-pd"],
    ["envoy_resources", "k8s-llm-d-pd"],
    ["sidecar_resources", "k8s-llm-d-pd"],
    ["mooncake_master_resources", "k8s-kv-offload-mooncake"],
  ] as const
).flatMap(([k, base]) =>
  (["cpu", "memory"] as const).map((q): Field => ({
    id: `kubernetes.${k}.${q}`,
    covers: [`kubernetes.${k}.${q}`],
    k8s: base,
    closed: true,
    at: () => `kubernetes.${k}.${q}`,
    set: (r, v) => void (r.kubernetes[k] = { cpu: "1", memory: "1Gi", [q]: v }),
  })),
);
/** Placement of the router, EPP and Mooncake master pods: the same forms as the engines'. */
const auxPlacement: Field[] = [
  {
    id: "kubernetes.aux_node_selector.<key>",
    covers: ["kubernetes.aux_node_selector.<key>"],
    k8s: "k8s-multi-replica",
    prefix: true,
    at: () => "kubernetes.aux_node_selector",
    set: (r, v) => void (r.kubernetes.aux_node_selector = { [v]: "x" }),
  },
  {
    id: "kubernetes.aux_node_selector.*",
    covers: ["kubernetes.aux_node_selector.*"],
    k8s: "k8s-multi-replica",
    at: () => "kubernetes.aux_node_selector.inj",
    set: (r, v) => void (r.kubernetes.aux_node_selector = { inj: v }),
  },
  ...(["key", "value", "operator", "effect"] as const).map((k): Field => ({
    id: `kubernetes.aux_tolerations[].${k}`,
    covers: [`kubernetes.aux_tolerations[].${k}`],
    k8s: "k8s-multi-replica",
    closed: k === "operator" || k === "effect" ? true : undefined,
    at: () => `kubernetes.aux_tolerations.0.${k}`,
    set: (r, v) =>
      void (r.kubernetes.aux_tolerations = [
        { key: "inj", operator: "Equal", value: "x", effect: "NoSchedule", [k]: v },
      ]),
  })),
];
/** Labels on the PodMonitors (issue 20 #11): rendered only with monitoring on, so each payload turns it on. */
const monitoringLabels: Field[] = [
  {
    id: "kubernetes.monitoring_labels.<key>",
    covers: ["kubernetes.monitoring_labels.<key>"],
    k8s: "k8s-llm-d",
    prefix: true,
    at: () => "kubernetes.monitoring_labels",
    set: (r, v) => void Object.assign(r.kubernetes, { monitoring: true, monitoring_labels: { [v]: "x" } }),
  },
  {
    id: "kubernetes.monitoring_labels.*",
    covers: ["kubernetes.monitoring_labels.*"],
    k8s: "k8s-multi-replica",
    at: () => "kubernetes.monitoring_labels.inj",
    set: (r, v) => void Object.assign(r.kubernetes, { monitoring: true, monitoring_labels: { inj: v } }),
  },
];
const toleration = (["key", "value", "operator", "effect"] as const).map((k): Field => ({
  id: `kubernetes.tolerations[].${k}`,
  covers: [`kubernetes.tolerations[].${k}`],
  k8s: "k8s-single-node",
  closed: k === "operator" || k === "effect" ? true : undefined,
  at: () => `kubernetes.tolerations.0.${k}`,
  set: (r, v) =>
    void (r.kubernetes.tolerations = [{ key: "inj", operator: "Equal", value: "x", effect: "NoSchedule", [k]: v }]),
}));
const catalogClosed = (
  [
    ["type", ["type"]],
    ["launch.dtype", ["launch", "dtype"]],
    ["arch.attention", ["arch", "attention"]],
    ["arch.torch_dtype", ["arch", "torch_dtype"]],
  ] as const
).map(([id, keys]): Field => ({
  id: `catalog models.*.${id}`,
  covers: [`catalog:models.*.${id}`],
  slurm: "sn-main",
  closed: true,
  inCatalog: true,
  at: catalogAt(...keys),
  set: (r, v, c) => {
    const e = overlay(c, modelName(r, c));
    if (keys.length === 1) e[keys[0]] = v;
    else sub(e, keys[0])[keys[1]] = v;
  },
}));
const envKey = (id: string, slurm: string, at: string, table: (r: Raw, c: Ctx) => Raw): Field => ({
  id,
  covers: [id],
  slurm,
  prefix: true,
  at: (l) => inf(l, at),
  set: (r, v, c) => void (table(r, c)[v] = "1"),
});

// prime-rl's layout (schema/prime.ts): its own string keys, in a standalone file, a P/D file and
// an RL file. Its [kubernetes] is the older layout's table, passed on as it is (covered above).
const P_PD = "prime-rl/disaggregated-overrides";
const P_RL = "prime-rl/rl-single-node";
const vllmOf = (r: Raw, c: Ctx) => sub(inference(r, c), "vllm");
/** prime-rl reads a string value of an extra [vllm] key as JSON when it parses (VllmConfig's before-validator). */
function asPrimeReads(value: string): string {
  try {
    const parsed: unknown = JSON.parse(value);
    return typeof parsed === "string" ? parsed : value;
  } catch {
    return value;
  }
}
/** A [vllm] key of the standalone file (and its Kubernetes version). */
const primeVllm = (key: string, extra: Partial<Field> = {}): Field => ({
  id: `prime vllm.${key}`,
  covers: [`prime:vllm.${key}`],
  slurm: "p-sn",
  at: (l) => inf(l, `vllm.${key}`),
  set: (r, v, c) => void (vllmOf(r, c)[key] = v),
  ...extra,
});
/** prime-rl's own sbatch templates' keys: accepted, not rendered. */
const PRIME_LAUNCHER_KEYS = ["project_dir", "template_path", "pre_run_command"] as const;
/** A prime-rl file kind: its leaf prefix, id prefix, SLURM variant and Kubernetes base. */
type PrimeKind = { leaf: string; slurm: string; k8s?: string };
const STANDALONE: PrimeKind = { leaf: "prime", slurm: "p-sn" };
const RL: PrimeKind = { leaf: "prime-rl", slurm: "p-rl", k8s: "prime-rl/rl-single-node" };
const SFT: PrimeKind = { leaf: "prime-sft", slurm: "p-sft", k8s: "prime-rl/sft-single-node" };
const primeSlurm = (kind: PrimeKind): Field[] => [
  ...(["job_name", "partition", "account", "nodelist", "exclude", "time"] as const).map((k): Field => ({
    id: `${kind.leaf} slurm.${k}`,
    covers: [`${kind.leaf}:slurm.${k}`],
    slurm: kind.slurm,
    closed: k === "time" ? true : undefined,
    at: () => `slurm.${k}`,
    set: (r, v) => void (r.slurm[k] = v),
  })),
  {
    id: `${kind.leaf} slurm launcher keys`,
    covers: PRIME_LAUNCHER_KEYS.map((k) => `${kind.leaf}:slurm.${k}`),
    slurm: kind.slurm,
    unrendered: "keys of prime-rl's own sbatch templates, accepted and ignored",
    at: () => "slurm",
    prefix: true,
    set: (r, v) => {
      for (const k of PRIME_LAUNCHER_KEYS) r.slurm[k] = v;
    },
  },
];
const primeEnv = (kind: PrimeKind): Field[] => [
  {
    id: `${kind.leaf} env_vars.*`,
    covers: [`${kind.leaf}:env_vars.*`],
    slurm: kind.slurm,
    k8s: kind.k8s,
    at: () => "env_vars.INJ_VALUE",
    set: (r, v) => void (sub(r, "env_vars").INJ_VALUE = v),
  },
  {
    id: `${kind.leaf} env_vars.<key>`,
    covers: [`${kind.leaf}:env_vars.<key>`],
    slurm: kind.slurm,
    prefix: true,
    at: () => "env_vars",
    set: (r, v) => void (sub(r, "env_vars")[v] = "1"),
  },
];
/** An RL or SFT file's own keys: the served model, the output folder, the weight broadcast. */
const primeRunFields = (kind: PrimeKind): Field[] => [
  {
    id: `${kind.leaf} model.name`,
    covers: [`${kind.leaf}:model.name`],
    slurm: kind.slurm,
    k8s: kind.k8s,
    value: underRoot("/fleet-inj-models"),
    at: () => "model.name",
    set: (r, v) => void (r.model.name = v),
  },
  {
    id: `${kind.leaf} output_dir`,
    covers: [`${kind.leaf}:output_dir`],
    slurm: kind.slurm,
    value: inRun("home/o"),
    at: () => "output_dir",
    set: (r, v) => void (r.output_dir = v),
  },
  {
    id: `${kind.leaf} deployment.type`,
    covers: [`${kind.leaf}:deployment.type`],
    slurm: kind.slurm,
    closed: true,
    at: () => "deployment.type",
    set: (r, v) => void (r.deployment = { type: v }),
  },
  {
    id: `${kind.leaf} weight_broadcast.type`,
    covers: [`${kind.leaf}:weight_broadcast.type`],
    slurm: kind.slurm,
    closed: true,
    at: () => "weight_broadcast.type",
    set: (r, v) => void (r.weight_broadcast = { type: v }),
  },
  {
    id: `${kind.leaf} weight_broadcast.<extra>`,
    covers: [`${kind.leaf}:weight_broadcast.<extra key>`, `${kind.leaf}:weight_broadcast.<extra>`],
    slurm: kind.slurm,
    unrendered: "other keys of prime-rl's weight broadcast config, accepted and ignored",
    at: () => "weight_broadcast",
    prefix: true,
    set: (r, v) => void (r.weight_broadcast = { type: "nccl", [v]: v }),
  },
  ...primeEnv(kind),
  ...primeSlurm(kind),
];
const primeRoleFields = (["prefill", "decode"] as const).flatMap((role): Field[] => [
  {
    id: `prime deployment.${role}_env_vars.*`,
    covers: [`prime:deployment.${role}_env_vars.*`],
    slurm: "p-pd",
    k8s: P_PD,
    at: () => `deployment.${role}_env_vars.INJ_VALUE`,
    set: (r, v) => void (sub(r.deployment, `${role}_env_vars`).INJ_VALUE = v),
  },
  {
    id: `prime deployment.${role}_env_vars.<key>`,
    covers: [`prime:deployment.${role}_env_vars.<key>`],
    slurm: "p-pd",
    prefix: true,
    at: () => `deployment.${role}_env_vars`,
    set: (r, v) => void (sub(r.deployment, `${role}_env_vars`)[v] = "1"),
  },
  {
    id: `prime deployment.${role}_vllm_overrides.* (string flag)`,
    covers: [`prime:deployment.${role}_vllm_overrides.*`],
    slurm: "p-pd",
    k8s: P_PD,
    at: () => `deployment.${role}_vllm_overrides.download_dir`,
    set: (r, v) => void (sub(r.deployment, `${role}_vllm_overrides`).download_dir = v),
  },
  {
    id: `prime deployment.${role}_vllm_overrides.<key>`,
    covers: [`prime:deployment.${role}_vllm_overrides.<key>`],
    slurm: "p-pd",
    closed: true,
    prefix: true,
    at: () => `deployment.${role}_vllm_overrides`,
    set: (r, v) => void (sub(r.deployment, `${role}_vllm_overrides`)[v] = "x"),
  },
]);
/** SFT tables of its trainer and evals: accepted, not acted on ([eval] must be there with [inference]). */
const SFT_IGNORED = PRIME_SFT_IGNORED_TABLES.filter((k) => k !== "weight_broadcast"); // weight_broadcast has fields of its own
/** [vllm_fleet.slurm.launcher]: the older layout's launcher table, in a prime-rl file; one launcher per variant. */
const fleetLauncher = (r: Raw, type: string, defaults: Raw = {}): Raw => {
  const s = sub(sub(r, "vllm_fleet"), "slurm");
  if (s.launcher?.type !== type) s.launcher = { type, ...defaults };
  return s.launcher;
};
const fleetLaunchers: Field[] = [
  {
    id: "prime vllm_fleet.slurm.launcher.type",
    covers: ["prime:vllm_fleet.slurm.launcher.type"],
    slurm: "p-sn",
    closed: true,
    at: () => "vllm_fleet.slurm.launcher.type",
    set: (r, v) => void (sub(sub(r, "vllm_fleet"), "slurm").launcher = { type: v }),
  },
  {
    id: "prime vllm_fleet.slurm.launcher.bin_dir",
    covers: ["prime:vllm_fleet.slurm.launcher.bin_dir"],
    slurm: "p-sn",
    value: underRoot("/fleet-inj-bin"),
    at: () => "vllm_fleet.slurm.launcher.bin_dir",
    set: (r, v) => void (fleetLauncher(r, "vllm").bin_dir = v),
  },
  {
    id: "prime vllm_fleet.slurm.launcher.path (venv)",
    covers: ["prime:vllm_fleet.slurm.launcher.path"],
    slurm: "p-rl",
    value: inRun("venv"),
    at: () => "vllm_fleet.slurm.launcher.path",
    set: (r, v) => void (fleetLauncher(r, "venv").path = v),
    prepare: recordingVenv,
  },
  {
    id: "prime vllm_fleet.slurm.launcher.image (apptainer)",
    covers: ["prime:vllm_fleet.slurm.launcher.image"],
    slurm: "p-pd",
    at: () => "vllm_fleet.slurm.launcher.image",
    set: (r, v) => void (fleetLauncher(r, "apptainer").image = v),
  },
  {
    id: "prime vllm_fleet.slurm.launcher.binds[]",
    covers: ["prime:vllm_fleet.slurm.launcher.binds[]"],
    slurm: "p-pd",
    at: () => "vllm_fleet.slurm.launcher.binds.0",
    set: (r, v) => void (fleetLauncher(r, "apptainer", { image: "/images/vllm.sif" }).binds = [v]),
  },
  {
    id: "prime vllm_fleet.slurm.launcher.image (pyxis)",
    covers: ["prime:vllm_fleet.slurm.launcher.image"],
    slurm: "p-sft",
    at: () => "vllm_fleet.slurm.launcher.image",
    set: (r, v) => void (fleetLauncher(r, "pyxis").image = v),
  },
  {
    id: "prime vllm_fleet.slurm.launcher.mounts[]",
    covers: ["prime:vllm_fleet.slurm.launcher.mounts[]"],
    slurm: "p-sft",
    at: () => "vllm_fleet.slurm.launcher.mounts.0",
    set: (r, v) => void (fleetLauncher(r, "pyxis", { image: "vllm/vllm-openai:v0.32.0" }).mounts = [v]),
  },
];
/** RL tables prime-rl's trainer, orchestrator and launcher read: accepted, not acted on (the schema's list, less those with fields of their own). */
const OWN_FIELDS_RL: ReadonlySet<string> = new Set(["trainer", "tokenizer", "weight_broadcast"]);
const RL_IGNORED = PRIME_RL_IGNORED_TABLES.filter((k) => !OWN_FIELDS_RL.has(k));

const PRIME_FIELDS: Field[] = [
  // On Kubernetes: the standalone file's engine is `vllm serve`, as in the older layout (whose
  // fields cover that renderer); the RL file's is prime-rl's `inference` (its fields below).
  primeVllm("model", { value: underRoot("/fleet-inj-models") }),
  primeVllm("chat_template"),
  primeVllm("tool_call_parser"),
  primeVllm("reasoning_parser"),
  primeVllm("quantization"),
  primeVllm("dtype", { closed: true }),
  primeVllm("all2all_backend", { closed: true }),
  primeVllm("lora_target_modules", {
    id: "prime vllm.lora_target_modules[]",
    covers: ["prime:vllm.lora_target_modules[]"],
    prefix: true,
    set: (r, v, c) => void Object.assign(vllmOf(r, c), { enable_lora: true, lora_target_modules: [v] }),
  }),
  // Not a `vllm serve` flag in the vLLM targeted here: refused, whatever the value (an empty closed set).
  primeVllm("rope_scaling", { closed: true, prefix: true }),
  primeVllm("rope_scaling", {
    id: "prime vllm.rope_scaling (table)",
    covers: ["prime:vllm.rope_scaling.<key>", "prime:vllm.rope_scaling.*"],
    closed: true,
    prefix: true,
    set: (r, v, c) => void (vllmOf(r, c).rope_scaling = { [v]: v }),
  }),
  // Extra `vllm serve` flags, as in vllm_extra: a string flag, a list flag's item, JSON given as text.
  primeVllm("download_dir", {
    id: "prime vllm.<extra> (string flag)",
    covers: ["prime:vllm.<extra>"],
    arrives: asPrimeReads,
  }),
  primeVllm("allowed_media_domains", {
    id: "prime vllm.<extra> (list item)",
    covers: ["prime:vllm.<extra>"],
    slurm: "p-rl",
    k8s: P_RL,
    set: (r, v, c) => void (vllmOf(r, c).allowed_media_domains = [v]),
  }),
  primeVllm("hf_overrides", {
    id: "prime vllm.<extra> (JSON text)",
    covers: ["prime:vllm.<extra>"],
    set: (r, v, c) => void (vllmOf(r, c).hf_overrides = JSON.stringify({ inj: v })),
  }),
  {
    id: "prime vllm.<extra key>",
    covers: ["prime:vllm.<extra key>"],
    slurm: "p-sn",
    closed: true,
    prefix: true,
    at: (l) => inf(l, "vllm"),
    set: (r, v, c) => void (vllmOf(r, c)[v] = "x"),
  },
  ...primeEnv(STANDALONE),
  {
    id: "prime server.host",
    covers: ["prime:server.host"],
    slurm: "p-sn",
    at: () => "server.host",
    set: (r, v) => void (sub(r, "server").host = v),
  },
  {
    id: "prime log.*",
    covers: ["prime:log.level", "prime:log.vf_level"],
    slurm: "p-sn",
    unrendered: "the logging of prime-rl's own processes, accepted and ignored",
    at: () => "log.level",
    set: (r, v) => void (r.log = { level: v, vf_level: v }),
  },
  {
    id: "prime weight_broadcast.type",
    covers: ["prime:weight_broadcast.type"],
    slurm: "p-sn",
    closed: true,
    at: () => "weight_broadcast.type",
    set: (r, v) => void (r.weight_broadcast = { type: v }),
  },
  {
    id: "prime weight_broadcast.<extra>",
    covers: ["prime:weight_broadcast.<extra key>", "prime:weight_broadcast.<extra>"],
    slurm: "p-sn",
    unrendered: "other keys of prime-rl's weight broadcast config, accepted and ignored",
    at: () => "weight_broadcast",
    prefix: true,
    set: (r, v) => void (r.weight_broadcast = { type: "filesystem", [v]: v }),
  },
  {
    id: "prime kv_cache_offload.type",
    covers: ["prime:kv_cache_offload.type"],
    slurm: "p-sn",
    closed: true,
    at: () => "kv_cache_offload.type",
    set: (r, v) => void (r.kv_cache_offload = { type: v, cpu: { num_bytes: 1_000_000_000 } }),
  },
  {
    id: "prime kv_cache_offload.disk.path (native)",
    covers: ["prime:kv_cache_offload.disk.path"],
    slurm: "p-sn",
    value: underRoot("/fleet-inj-kv"),
    at: () => "kv_cache_offload.disk.path",
    set: (r, v) => void (r.kv_cache_offload = { type: "native", cpu: { num_bytes: 1_000_000_000 }, disk: { path: v } }),
  },
  {
    id: "prime kv_cache_offload.device_name (mooncake, RL)",
    covers: ["prime:kv_cache_offload.device_name"],
    slurm: "p-rl",
    at: () => "inference.kv_cache_offload.device_name",
    set: (r, v) =>
      void (r.inference.kv_cache_offload = { type: "mooncake", cpu: { num_bytes: 1_000_000_000 }, device_name: v }),
  },
  {
    id: "prime deployment.type",
    covers: ["prime:deployment.type"],
    slurm: "p-sn",
    closed: true,
    at: () => "deployment.type",
    set: (r, v) => void (r.deployment = { type: v }),
  },
  ...primeRoleFields,
  {
    id: "prime router.type",
    covers: ["prime:router.type"],
    slurm: "p-pd",
    closed: true,
    at: () => "router.type",
    set: (r, v) => void (r.router = { type: v }),
  },
  {
    id: "prime router.policy",
    covers: ["prime:router.policy"],
    slurm: "p-pd",
    closed: true,
    at: () => "router.policy",
    set: (r, v) => void (r.router = { type: "vllm-router", policy: v }),
  },
  ...(["scorers", "prefill_scorer_overrides", "decode_scorer_overrides"] as const).map((k): Field => ({
    id: `prime router.${k}.<key>`,
    covers: [`prime:router.${k}.<key>`],
    slurm: "p-pd",
    closed: true,
    prefix: true,
    at: () => `router.${k}`,
    set: (r, v) => void (r.router = { type: "llm-d", [k]: { [v]: 1 } }),
  })),
  ...primeSlurm(STANDALONE),
  {
    id: "prime vllm_fleet.slurm.cache_dir",
    covers: ["prime:vllm_fleet.slurm.cache_dir"],
    slurm: "p-sn",
    value: inRun("home/cache"),
    at: () => "vllm_fleet.slurm.cache_dir",
    set: (r, v) => void (sub(sub(r, "vllm_fleet"), "slurm").cache_dir = v),
  },
  {
    id: "prime output_dir",
    covers: ["prime:output_dir"],
    slurm: "p-sn",
    value: inRun("home/o"),
    at: () => "output_dir",
    set: (r, v) => void (r.output_dir = v),
  },
  {
    id: "prime vllm_fleet.engine",
    covers: ["prime:vllm_fleet.engine"],
    slurm: "p-rl",
    closed: true,
    at: () => "vllm_fleet.engine",
    set: (r, v) => void (r.vllm_fleet = { engine: v }),
  },
  // An RL file's own tables.
  {
    id: "prime-rl model.vlm",
    covers: ["prime-rl:model.vlm"],
    slurm: "p-rl",
    unrendered: "the trainer's, accepted and ignored",
    at: () => "model.vlm",
    set: (r, v) => void (r.model.vlm = v),
  },
  {
    id: "prime-rl tokenizer.chat_template",
    covers: ["prime-rl:tokenizer"],
    slurm: "p-rl",
    k8s: P_RL,
    at: () => "tokenizer.chat_template",
    set: (r, v) => void (r.tokenizer = { chat_template: v }),
  },
  {
    id: "prime-rl trainer.tokenizer.chat_template",
    covers: ["prime-rl:trainer"],
    // Kubernetes only: in the merged SLURM run [tokenizer]'s chat template (the field above) wins.
    k8s: P_RL,
    at: () => "trainer.tokenizer.chat_template",
    set: (r, v) => void (sub(r, "trainer").tokenizer = { chat_template: v }),
  },
  ...primeRunFields(RL),
  {
    id: "prime-rl trainer.model.lora.rank",
    covers: ["prime-rl:trainer"],
    slurm: "p-rl",
    // A LoRA rank is a number: prime-rl's layout does not check the trainer's table, the loader does.
    closed: true,
    at: () => "trainer.model.lora.rank",
    set: (r, v) => void (sub(r, "trainer").model = { lora: { rank: v } }),
  },
  ...primeRunFields(SFT),
  {
    id: "prime-sft model.<extra>",
    covers: ["prime-sft:model.<extra key>", "prime-sft:model.<extra>"],
    slurm: "p-sft",
    unrendered: "the SFT trainer's model settings, accepted and ignored",
    at: () => "model",
    prefix: true,
    set: (r, v) => void Object.assign(r.model, { inj: v, [v]: v }),
  },
  {
    id: "prime-sft model.lora.rank",
    covers: ["prime-sft:model.<extra>"],
    slurm: "p-sft",
    closed: true,
    at: () => "model.lora.rank",
    set: (r, v) => void (r.model.lora = { rank: v }),
  },
  {
    id: "prime-sft trainer and eval tables",
    covers: SFT_IGNORED.map((k) => `prime-sft:${k}`),
    slurm: "p-sft",
    unrendered: "tables of prime-rl's SFT trainer and its evals, accepted and ignored",
    at: () => SFT_IGNORED[0],
    set: (r, v) => {
      for (const k of SFT_IGNORED) r[k] = { ...r[k], inj: v, [v]: v };
    },
  },
  // vllm-fleet's own [vllm_fleet] table.
  {
    id: "prime vllm_fleet.router_release",
    covers: ["prime:vllm_fleet.router_release"],
    slurm: "p-pd",
    closed: true,
    at: () => "vllm_fleet.router_release",
    set: (r, v) => void (sub(r, "vllm_fleet").router_release = v),
  },
  ...(["prime_rl_commit", "vllm_version", "idle_release_after"] as const).map((k): Field => ({
    id: `prime vllm_fleet.${k}`,
    covers: [`prime:vllm_fleet.${k}`],
    slurm: "p-sn",
    closed: true,
    at: () => `vllm_fleet.${k}`,
    set: (r, v) => void (sub(r, "vllm_fleet")[k] = v),
  })),
  // prime-rl 8324600's renderer: its name and template fields reach prime-rl's server as --renderer.<key> <value>.
  {
    id: "prime renderer.name",
    covers: ["prime:renderer.name"],
    slurm: "p-sn",
    at: () => "renderer.name",
    set: (r, v) => void (r.renderer = { name: v }),
  },
  {
    id: "prime renderer.<extra>",
    covers: ["prime:renderer.<extra>"],
    slurm: "p-sn",
    at: () => "renderer.template",
    set: (r, v) => void (r.renderer = { name: "qwen3", template: v }),
  },
  {
    id: "prime renderer.<extra>[]",
    covers: ["prime:renderer.<extra>[]"],
    slurm: "p-sn",
    at: () => "renderer.stop",
    set: (r, v) => void (r.renderer = { name: "qwen3", stop: [v] }),
  },
  {
    id: "prime renderer.<extra key>",
    covers: ["prime:renderer.<extra key>"],
    slurm: "p-sn",
    closed: true,
    prefix: true,
    at: () => "renderer",
    set: (r, v) => void (r.renderer = { name: "qwen3", [v]: "x" }),
  },
  // prime-rl 8324600's vLLM plugins: a JSON list in PRIME_VLLM_PLUGINS; only module:function or /abs/file.py:function.
  {
    id: "prime vllm_plugins[]",
    covers: ["prime:vllm_plugins[]"],
    slurm: "p-sn",
    at: () => "vllm_plugins.0",
    // A plugin is `<module or absolute file>:<function>`: the payload is the module part.
    value: (t) => `${t}:plugin`,
    set: (r, v) => void (r.vllm_plugins = [v]),
  },
  {
    id: "prime vllm_fleet.engine_processes",
    covers: ["prime:vllm_fleet.engine_processes"],
    slurm: "p-sn",
    closed: true,
    at: () => "vllm_fleet.engine_processes",
    set: (r, v) => void (sub(r, "vllm_fleet").engine_processes = v),
  },
  ...(["qos", "constraint", "gres", "mem"] as const).map((k): Field => ({
    id: `prime vllm_fleet.slurm.${k}`,
    covers: [`prime:vllm_fleet.slurm.${k}`],
    slurm: "p-sn",
    closed: k === "gres" || k === "mem" ? true : undefined,
    at: () => `vllm_fleet.slurm.${k}`,
    set: (r, v) => void (sub(sub(r, "vllm_fleet"), "slurm")[k] = v),
  })),
  ...fleetLaunchers,
  {
    id: "prime-rl trainer, orchestrator and launcher tables",
    covers: RL_IGNORED.map((k) => `prime-rl:${k}`),
    slurm: "p-rl",
    unrendered: "tables of prime-rl's trainer, orchestrator and launcher, accepted and ignored",
    at: () => RL_IGNORED[0],
    set: (r, v) => {
      for (const k of RL_IGNORED) r[k] = { inj: v, [v]: v };
    },
  },
];

/**
 * [local] runs on the machine that runs Pulumi, not through this file's SLURM harness: every payload
 * goes through the local target's own create script in test/e2e/local.e2e.test.ts (launcher paths:
 * bin_dir and the venv) and test/config/local-target.test.ts (the closed keys, refused by name).
 */
const LOCAL_FIELDS: Field[] = [
  "local.device",
  "local.launcher.type",
  "local.launcher.bin_dir",
  "local.launcher.path",
  "local.cache_dir",
].map((leaf) => ({
  id: leaf,
  covers: [leaf, ...["prime", "prime-rl", "prime-sft"].map((l) => `${l}:${leaf}`)],
  at: () => leaf,
  set: () => undefined,
  elsewhere:
    leaf.includes("launcher.") && !leaf.endsWith(".type")
      ? "test/e2e/local.e2e.test.ts"
      : leaf === "local.cache_dir"
        ? "the supervisor's setup lines are SLURM's launch body's (components/host/cache.ts), injected through slurm.cache_dir here"
        : "test/config/local-target.test.ts",
}));

export const FIELDS: Field[] = [
  ...LOCAL_FIELDS,
  // The model and how vLLM serves it.
  {
    id: "model.name",
    covers: ["model.name"],
    slurm: "sn-main",
    k8s: "k8s-single-node",
    // A Hugging Face id is letters, digits and -_. only: a payload can reach vLLM inside a path.
    value: underRoot("/fleet-inj-models"),
    at: (l) => inf(l, "model.name"),
    set: (r, v, c) => void (modelOf(r, c).name = v),
  },
  {
    id: "model = <string>",
    covers: ["<shorthand> model"],
    slurm: "sn-short",
    k8s: "k8s-single-node",
    value: underRoot("/fleet-inj-models"),
    at: () => "model",
    set: (r, v) => void (r.model = v),
  },
  {
    id: "inference.model = <string>",
    covers: ["<shorthand> inference.model"],
    slurm: "mr-main",
    k8s: "k8s-llm-d",
    value: underRoot("/fleet-inj-models"),
    at: () => "inference.model",
    set: (r, v) => void (r.inference.model = v),
  },
  {
    id: "model.name (RL trainer table)",
    covers: ["rl:model.name"],
    slurm: "llmd",
    k8s: "k8s-multi-replica",
    value: underRoot("/fleet-inj-models"),
    at: () => "model.name",
    set: (r, v) => {
      delete r.inference.model;
      r.model = { name: v };
    },
  },
  {
    id: "model.chat_template",
    covers: ["model.chat_template"],
    slurm: "sn-main",
    k8s: "k8s-wide-ep",
    at: (l) => inf(l, "model.chat_template"),
    set: (r, v, c) => void (modelOf(r, c).chat_template = v),
  },
  {
    id: "model.tool_call_parser",
    covers: ["model.tool_call_parser"],
    slurm: "sn-main",
    k8s: "k8s-single-node",
    at: (l) => inf(l, "model.tool_call_parser"),
    set: (r, v, c) => void (modelOf(r, c).tool_call_parser = v),
  },
  {
    id: "model.reasoning_parser",
    covers: ["model.reasoning_parser"],
    slurm: "sn-main",
    k8s: "k8s-multi-replica",
    at: (l) => inf(l, "model.reasoning_parser"),
    set: (r, v, c) => void (modelOf(r, c).reasoning_parser = v),
  },
  {
    id: "model.dtype",
    covers: ["model.dtype"],
    slurm: "sn-main",
    closed: true,
    at: (l) => inf(l, "model.dtype"),
    set: (r, v, c) => void (modelOf(r, c).dtype = v),
  },
  {
    id: "engine",
    covers: ["engine"],
    slurm: "sn-main",
    closed: true,
    at: (l) => inf(l, "engine"),
    set: (r, v, c) => void (inference(r, c).engine = v),
  },
  {
    id: "deployment.transfer_backend",
    covers: ["deployment.transfer_backend"],
    slurm: "dis",
    closed: true,
    at: (l) => inf(l, "deployment.transfer_backend"),
    set: (r, v, c) => void (deployment(r, c).transfer_backend = v),
  },
  {
    id: "engine_processes",
    covers: ["engine_processes"],
    slurm: "mr-main",
    closed: true,
    at: (l) => inf(l, "engine_processes"),
    set: (r, v, c) => void (inference(r, c).engine_processes = v),
  },
  // Environments.
  {
    id: "env_vars.*",
    covers: ["env_vars.*"],
    slurm: "llmd",
    k8s: "k8s-multi-replica",
    at: (l) => inf(l, "env_vars.INJ_VALUE"),
    set: (r, v, c) => void (sub(inference(r, c), "env_vars").INJ_VALUE = v),
  },
  envKey("env_vars.<key>", "sn-main", "env_vars", (r, c) => sub(inference(r, c), "env_vars")),
  {
    id: "deployment.prefill_env_vars.*",
    covers: ["deployment.prefill_env_vars.*"],
    slurm: "dis",
    k8s: "k8s-llm-d-pd",
    at: (l) => inf(l, "deployment.prefill_env_vars.INJ_VALUE"),
    set: (r, v, c) => void (sub(deployment(r, c), "prefill_env_vars").INJ_VALUE = v),
  },
  {
    id: "deployment.decode_env_vars.*",
    covers: ["deployment.decode_env_vars.*"],
    slurm: "dis",
    k8s: "k8s-llm-d-pd",
    at: (l) => inf(l, "deployment.decode_env_vars.INJ_VALUE"),
    set: (r, v, c) => void (sub(deployment(r, c), "decode_env_vars").INJ_VALUE = v),
  },
  envKey("deployment.prefill_env_vars.<key>", "dis", "deployment.prefill_env_vars", (r, c) =>
    sub(deployment(r, c), "prefill_env_vars"),
  ),
  envKey("deployment.decode_env_vars.<key>", "dis", "deployment.decode_env_vars", (r, c) =>
    sub(deployment(r, c), "decode_env_vars"),
  ),
  // Extra vllm serve flags: a string flag, a list flag's item, a JSON flag given as text.
  {
    id: "vllm_extra.* (string flag)",
    covers: ["vllm_extra.*"],
    slurm: "llmd",
    k8s: "k8s-single-node",
    at: (l) => inf(l, "vllm_extra.download_dir"),
    set: (r, v, c) => void (sub(inference(r, c), "vllm_extra").download_dir = v),
  },
  {
    id: "vllm_extra.* (list item)",
    covers: ["vllm_extra.*"],
    slurm: "mr-main",
    k8s: "k8s-llm-d",
    at: (l) => inf(l, "vllm_extra.allowed_media_domains"),
    set: (r, v, c) => void (sub(inference(r, c), "vllm_extra").allowed_media_domains = [v]),
  },
  {
    id: "vllm_extra.* (JSON text)",
    covers: ["vllm_extra.*"],
    slurm: "sn-main",
    k8s: "k8s-wide-ep",
    at: (l) => inf(l, "vllm_extra.hf_overrides"),
    set: (r, v, c) => void (sub(inference(r, c), "vllm_extra").hf_overrides = JSON.stringify({ inj: v })),
  },
  // Keys must be `vllm serve` flags: a closed set.
  {
    id: "vllm_extra.<key>",
    covers: ["vllm_extra.<key>"],
    slurm: "sn-main",
    closed: true,
    prefix: true,
    at: (l) => inf(l, "vllm_extra"),
    set: (r, v, c) => void (sub(inference(r, c), "vllm_extra")[v] = "x"),
  },
  // Extra SGLang server flags (engine = "sglang"): a string flag, a JSON flag given as text.
  {
    id: "sglang_extra.* (string flag)",
    covers: ["sglang_extra.*"],
    slurm: "sgl",
    k8s: "k8s-sglang-wide-ep",
    at: (l) => inf(l, "sglang_extra.download_dir"),
    set: (r, v, c) => void (sub(inference(r, c), "sglang_extra").download_dir = v),
  },
  {
    id: "sglang_extra.* (JSON text)",
    covers: ["sglang_extra.*"],
    slurm: "sgl",
    at: (l) => inf(l, "sglang_extra.json_model_override_args"),
    set: (r, v, c) => void (sub(inference(r, c), "sglang_extra").json_model_override_args = JSON.stringify({ inj: v })),
  },
  // Keys must be SGLang server flags: a closed set.
  {
    id: "sglang_extra.<key>",
    covers: ["sglang_extra.<key>"],
    slurm: "sgl",
    closed: true,
    prefix: true,
    at: (l) => inf(l, "sglang_extra"),
    set: (r, v, c) => void (sub(inference(r, c), "sglang_extra")[v] = "x"),
  },
  {
    id: "server.host",
    covers: ["server.host"],
    slurm: "mr-main",
    k8s: "k8s-multi-replica",
    at: (l) => inf(l, "server.host"),
    set: (r, v, c) => void (sub(inference(r, c), "server").host = v),
  },
  // KV cache offload.
  {
    id: "kv_cache_offload.disk.path (native)",
    covers: ["kv_cache_offload.disk.path"],
    slurm: "sn-main",
    k8s: "k8s-kv-offload-native",
    value: underRoot("/fleet-inj-kv"),
    at: (l) => inf(l, "kv_cache_offload.disk.path"),
    set: (r, v, c) =>
      void (inference(r, c).kv_cache_offload = {
        type: "native",
        cpu: { num_bytes: 1_000_000_000 },
        disk: { path: v },
      }),
  },
  {
    id: "kv_cache_offload.disk.path (mooncake)",
    covers: ["kv_cache_offload.disk.path"],
    slurm: "mr-main",
    k8s: "k8s-kv-offload-mooncake",
    value: underRoot("/fleet-inj-mooncake"),
    at: (l) => inf(l, "kv_cache_offload.disk.path"),
    set: (r, v, c) => void (mooncake(r, c).disk = { path: v }),
  },
  {
    id: "kv_cache_offload.device_name",
    covers: ["kv_cache_offload.device_name"],
    slurm: "mr-main",
    k8s: "k8s-kv-offload-mooncake",
    at: (l) => inf(l, "kv_cache_offload.device_name"),
    set: (r, v, c) => void (mooncake(r, c).device_name = v),
  },
  {
    id: "kv_cache_offload.protocol",
    covers: ["kv_cache_offload.protocol"],
    slurm: "mr-main",
    closed: true,
    at: (l) => inf(l, "kv_cache_offload.protocol"),
    set: (r, v, c) => void (mooncake(r, c).protocol = v),
  },
  {
    id: "kv_cache_offload.type",
    covers: ["kv_cache_offload.type"],
    slurm: "sn-main",
    closed: true,
    at: (l) => inf(l, "kv_cache_offload.type"),
    set: (r, v, c) => void (inference(r, c).kv_cache_offload = { type: v, cpu: { num_bytes: 1_000_000_000 } }),
  },
  // Shapes and routers: closed sets, and scorer names checked against llm-d's.
  {
    id: "deployment.type",
    covers: ["deployment.type"],
    slurm: "sn-main",
    closed: true,
    at: (l) => inf(l, "deployment.type"),
    set: (r, v, c) => void (inference(r, c).deployment = { type: v }),
  },
  {
    id: "deployment.gpu_type",
    covers: ["deployment.gpu_type"],
    slurm: "sn-main",
    closed: true,
    at: (l) => inf(l, "deployment.gpu_type"),
    set: (r, v, c) => void (deployment(r, c).gpu_type = v),
  },
  {
    id: "deployment.router.type",
    covers: ["deployment.router.type"],
    slurm: "mr-main",
    closed: true,
    at: (l) => inf(l, "deployment.router.type"),
    set: (r, v, c) => void (deployment(r, c).router = { type: v }),
  },
  {
    id: "deployment.router.policy",
    covers: ["deployment.router.policy"],
    slurm: "mr-main",
    closed: true,
    at: (l) => inf(l, "deployment.router.policy"),
    set: (r, v, c) => void (deployment(r, c).router = { type: "vllm-router", policy: v }),
  },
  // The router's own flags (router-flags.ts): a string flag's value reaches its command line; keys are its flags.
  {
    id: "deployment.router.extra.* (string flag)",
    covers: ["deployment.router.extra.*"],
    slurm: "mr-main",
    k8s: "k8s-multi-replica",
    at: (l) => inf(l, "deployment.router.extra.log_dir"),
    set: (r, v, c) => void (deployment(r, c).router = { type: "vllm-router", extra: { log_dir: v } }),
  },
  {
    id: "deployment.router.extra.<key>",
    covers: ["deployment.router.extra.<key>"],
    slurm: "mr-main",
    closed: true,
    prefix: true,
    at: (l) => inf(l, "deployment.router.extra"),
    set: (r, v, c) => void (deployment(r, c).router = { type: "vllm-router", extra: { [v]: "x" } }),
  },
  {
    id: "vllm_version",
    covers: ["vllm_version"],
    slurm: "sn-main",
    closed: true,
    at: (l) => inf(l, "vllm_version"),
    set: (r, v, c) => void (inference(r, c).vllm_version = v),
  },
  // A duration ("20s", "2h"): its pattern refuses anything else, naming the key.
  {
    id: "idle_release_after",
    covers: ["idle_release_after"],
    slurm: "sn-main",
    closed: true,
    at: (l) => inf(l, "idle_release_after"),
    set: (r, v, c) => void (inference(r, c).idle_release_after = v),
  },
  {
    id: "deployment.router.release",
    covers: ["deployment.router.release"],
    slurm: "mr-main",
    closed: true,
    at: (l) => inf(l, "deployment.router.release"),
    set: (r, v, c) => void (deployment(r, c).router = { type: "vllm-router", release: v }),
  },
  ...(["scorers", "prefill_scorer_overrides", "decode_scorer_overrides"] as const).map((k): Field => ({
    id: `deployment.router.${k}.<key>`,
    covers: [`deployment.router.${k}.<key>`],
    slurm: "llmd",
    // Only llm-d's scorer plugins: a closed set.
    closed: true,
    prefix: true,
    at: (l) => inf(l, `deployment.router.${k}`),
    set: (r, v, c) => void (sub(deployment(r, c), "router")[k] = { [v]: 1 }),
  })),
  {
    id: "deployment.type (RL top level)",
    covers: ["rl:deployment.type"],
    slurm: "mr-main",
    closed: true,
    at: () => "deployment.type",
    set: (r, v) => void (r.deployment = { type: v }),
  },
  // The SLURM target.
  {
    id: "output_dir",
    covers: ["output_dir"],
    slurm: "sn-main",
    value: inRun("home/o"),
    at: () => "output_dir",
    set: (r, v) => void (r.output_dir = v),
  },
  {
    id: "slurm.output_dir",
    covers: ["slurm.output_dir"],
    slurm: "sn-short",
    value: inRun("home/o"),
    at: () => "slurm.output_dir",
    set: (r, v) => {
      delete r.output_dir;
      r.slurm.output_dir = v;
    },
  },
  {
    // The compile and model cache (issue 32): the launch body creates folders in it.
    id: "slurm.cache_dir",
    covers: ["slurm.cache_dir"],
    slurm: "sn-short",
    value: inRun("home/cache"),
    at: () => "slurm.cache_dir",
    set: (r, v) => void (r.slurm.cache_dir = v),
  },
  ...slurmNames,
  ...slurmClosed,
  {
    id: "slurm.launcher.type",
    covers: ["slurm.launcher.type"],
    slurm: "sn-main",
    closed: true,
    at: () => "slurm.launcher.type",
    set: (r, v) => void (r.slurm.launcher = { type: v }),
  },
  {
    id: "slurm.launcher.bin_dir",
    covers: ["slurm.launcher.bin_dir"],
    slurm: "sn-main",
    value: underRoot("/fleet-inj-bin"),
    at: () => "slurm.launcher.bin_dir",
    set: (r, v) => void (launcher(r, "vllm").bin_dir = v),
  },
  {
    id: "slurm.launcher.path (venv)",
    covers: ["slurm.launcher.path"],
    slurm: "sn-short",
    value: inRun("venv"),
    at: () => "slurm.launcher.path",
    set: (r, v) => void (launcher(r, "venv").path = v),
    prepare: recordingVenv,
  },
  {
    id: "slurm.launcher.image (apptainer)",
    covers: ["slurm.launcher.image"],
    slurm: "mr-main",
    at: () => "slurm.launcher.image",
    set: (r, v) => void (launcher(r, "apptainer").image = v),
  },
  {
    id: "slurm.launcher.binds[]",
    covers: ["slurm.launcher.binds[]"],
    slurm: "mr-main",
    at: () => "slurm.launcher.binds.0",
    set: (r, v) => void (launcher(r, "apptainer", { image: "/images/vllm.sif" }).binds = [v]),
  },
  {
    id: "slurm.launcher.image (pyxis)",
    covers: ["slurm.launcher.image"],
    slurm: "llmd",
    at: () => "slurm.launcher.image",
    set: (r, v) => void (launcher(r, "pyxis").image = v),
  },
  {
    id: "slurm.launcher.mounts[]",
    covers: ["slurm.launcher.mounts[]"],
    slurm: "llmd",
    at: () => "slurm.launcher.mounts.0",
    set: (r, v) => void (launcher(r, "pyxis", { image: "vllm/vllm-openai:v0.32.0" }).mounts = [v]),
  },
  // The model catalog: the file itself, and the entry fields that reach a command line.
  {
    id: "model_catalog",
    covers: ["model_catalog"],
    slurm: "sn-main",
    unrendered: "read where the program runs; only the entries in it reach the plan",
    value: inRun("catalogs"),
    at: () => "model_catalog",
    set: (r, v) => {
      try {
        fs.mkdirSync(path.dirname(v), { recursive: true });
        fs.writeFileSync(v, "models: {}\n");
      } catch {
        // a name the file system refuses: the loader must say it cannot read it
      }
      r.model_catalog = v;
    },
  },
  {
    id: "catalog models.<id>",
    covers: ["catalog:models.<key>"],
    slurm: "dis",
    k8s: "k8s-llm-d-pd",
    inCatalog: true,
    prefix: true,
    value: underRoot("/fleet-inj-models"),
    at: () => "models",
    set: newCatalogModel,
  },
  {
    id: "catalog models.*.launch.tool_call_parser",
    covers: ["catalog:models.*.launch.tool_call_parser"],
    slurm: "dis",
    k8s: "k8s-single-node",
    inCatalog: true,
    at: catalogAt("launch", "tool_call_parser"),
    set: (r, v, c) => void (sub(overlay(c, modelName(r, c)), "launch").tool_call_parser = v),
  },
  {
    id: "catalog models.*.launch.reasoning_parser",
    covers: ["catalog:models.*.launch.reasoning_parser"],
    slurm: "dis",
    k8s: "k8s-single-node",
    inCatalog: true,
    at: catalogAt("launch", "reasoning_parser"),
    set: (r, v, c) => void (sub(overlay(c, modelName(r, c)), "launch").reasoning_parser = v),
  },
  {
    id: "catalog models.*.family",
    covers: ["catalog:models.*.family"],
    slurm: "sn-main",
    unrendered: "catalog metadata",
    inCatalog: true,
    at: catalogAt("family"),
    set: (r, v, c) => void (overlay(c, modelName(r, c)).family = v),
  },
  {
    id: "catalog models.*.arch.quantization",
    covers: ["catalog:models.*.arch.quantization"],
    slurm: "sn-main",
    unrendered: "architecture facts for planners",
    inCatalog: true,
    at: catalogAt("arch", "quantization"),
    set: (r, v, c) => void (sub(overlay(c, modelName(r, c)), "arch").quantization = v),
  },
  {
    id: "catalog models.*.aliases[]",
    covers: ["catalog:models.*.aliases[]"],
    slurm: "sn-main",
    unrendered: "an alias only selects an entry; the id is served",
    inCatalog: true,
    at: catalogAt("aliases", "0"),
    set: (r, v, c) => void (overlay(c, modelName(r, c)).aliases = [v]),
  },
  {
    id: "catalog models.*.other_names[]",
    covers: ["catalog:models.*.other_names[]"],
    slurm: "sn-main",
    unrendered: "another name only points a refused stack file at the id",
    inCatalog: true,
    at: catalogAt("other_names", "0"),
    set: (r, v, c) => void (overlay(c, modelName(r, c)).other_names = [v]),
  },
  ...catalogClosed,
  // Kubernetes.
  ...images,
  ...k8sNamesFields,
  {
    id: "kubernetes.image_pull_secrets[]",
    covers: ["kubernetes.image_pull_secrets[]"],
    k8s: "k8s-single-node",
    at: () => "kubernetes.image_pull_secrets.0",
    set: (r, v) => void (r.kubernetes.image_pull_secrets = [v]),
  },
  {
    id: "kubernetes.node_selector.<key>",
    covers: ["kubernetes.node_selector.<key>"],
    k8s: "k8s-single-node",
    prefix: true,
    at: () => "kubernetes.node_selector",
    set: (r, v) => void (r.kubernetes.node_selector = { [v]: "x" }),
  },
  {
    id: "kubernetes.node_selector.*",
    covers: ["kubernetes.node_selector.*"],
    k8s: "k8s-single-node",
    at: () => "kubernetes.node_selector.inj",
    set: (r, v) => void (r.kubernetes.node_selector = { inj: v }),
  },
  ...toleration,
  ...resourceFields,
  ...auxPlacement,
  ...monitoringLabels,
  {
    id: "kubernetes.model_cache.pvc",
    covers: ["kubernetes.model_cache.pvc"],
    k8s: "k8s-single-node",
    at: () => "kubernetes.model_cache.pvc",
    set: (r, v) => void (r.kubernetes.model_cache = { pvc: v }),
  },
  {
    id: "kubernetes.compile_cache.pvc",
    covers: ["kubernetes.compile_cache.pvc"],
    k8s: "k8s-single-node",
    at: () => "kubernetes.compile_cache.pvc",
    set: (r, v) => void (r.kubernetes.compile_cache = { pvc: v }),
  },
  {
    id: "kubernetes.model_cache.host_path",
    covers: ["kubernetes.model_cache.host_path"],
    k8s: "k8s-multi-replica",
    at: () => "kubernetes.model_cache.host_path",
    set: (r, v) => void (r.kubernetes.model_cache = { host_path: v }),
  },
  {
    id: "kubernetes.model_cache.mount_path",
    covers: ["kubernetes.model_cache.mount_path"],
    k8s: "k8s-multi-replica",
    at: () => "kubernetes.model_cache.mount_path",
    set: (r, v) => void (r.kubernetes.model_cache = { host_path: "/mnt/hf-cache", mount_path: v }),
  },
  // The fabric (issue 20), on engine pods: LeaderWorkerSets (P/D, wide-EP) and StatefulSets.
  {
    id: "kubernetes.extra_resources.<key>",
    covers: ["kubernetes.extra_resources.<key>"],
    k8s: "k8s-disaggregated",
    prefix: true,
    at: () => "kubernetes.extra_resources",
    set: (r, v) => void (r.kubernetes.extra_resources = { "rdma/ib": "1", [v]: "1" }),
  },
  {
    id: "kubernetes.extra_resources.*",
    covers: ["kubernetes.extra_resources.*"],
    k8s: "k8s-disaggregated",
    closed: true,
    at: () => "kubernetes.extra_resources.rdma/ib",
    set: (r, v) => void (r.kubernetes.extra_resources = { "rdma/ib": v }),
  },
  {
    id: "kubernetes.pod_annotations.<key>",
    covers: ["kubernetes.pod_annotations.<key>"],
    k8s: "k8s-kv-offload-mooncake",
    prefix: true,
    at: () => "kubernetes.pod_annotations",
    set: (r, v) => void (r.kubernetes.pod_annotations = { [v]: "x" }),
  },
  {
    id: "kubernetes.pod_annotations.*",
    covers: ["kubernetes.pod_annotations.*"],
    k8s: "k8s-wide-ep",
    at: () => "kubernetes.pod_annotations.inj",
    set: (r, v) => void (r.kubernetes.pod_annotations = { inj: v }),
  },
  {
    id: "kubernetes.pod_labels.<key>",
    covers: ["kubernetes.pod_labels.<key>"],
    k8s: "k8s-llm-d-pd",
    prefix: true,
    at: () => "kubernetes.pod_labels",
    set: (r, v) => void (r.kubernetes.pod_labels = { [v]: "x" }),
  },
  {
    id: "kubernetes.pod_labels.*",
    covers: ["kubernetes.pod_labels.*"],
    k8s: "k8s-wide-ep",
    at: () => "kubernetes.pod_labels.inj",
    set: (r, v) => void (r.kubernetes.pod_labels = { inj: v }),
  },
  {
    id: "kubernetes.capabilities[]",
    covers: ["kubernetes.capabilities[]"],
    k8s: "k8s-wide-ep",
    closed: true,
    at: () => "kubernetes.capabilities.0",
    set: (r, v) => void (r.kubernetes.capabilities = [v]),
  },
  {
    id: "kubernetes.env.<key>",
    covers: ["kubernetes.env.<key>"],
    k8s: "k8s-wide-ep",
    prefix: true,
    at: () => "kubernetes.env",
    set: (r, v) => void (r.kubernetes.env = { [v]: "1" }),
  },
  {
    id: "kubernetes.env.*",
    covers: ["kubernetes.env.*"],
    k8s: "k8s-disaggregated",
    at: () => "kubernetes.env.INJ_VALUE",
    set: (r, v) => void (r.kubernetes.env = { NCCL_SOCKET_IFNAME: "eth0", INJ_VALUE: v }),
  },
  {
    id: "RL trainer, orchestrator and launcher tables (older layout)",
    covers: [...RL_PASSENGERS.map((k) => `rl:${k}`), "rl:trainer.<extra key>", "rl:trainer.<extra>"],
    slurm: "dis",
    unrendered: "prime-rl's RL tables and [trainer]'s other keys, accepted and ignored",
    at: () => RL_PASSENGERS[0],
    set: (r, v) => {
      for (const k of RL_PASSENGERS) r[k] = { inj: v, [v]: v };
      Object.assign(sub(r, "trainer"), { inj: v, [v]: v });
    },
  },
  {
    id: "kubernetes.gpu_resource",
    covers: ["kubernetes.gpu_resource"],
    k8s: "k8s-single-node",
    at: () => "kubernetes.gpu_resource",
    set: (r, v) => void (r.kubernetes.gpu_resource = v),
  },
  ...PRIME_FIELDS,
];

/**
 * Schema leaves a payload could be put in: strings, closed sets (enums, literals), record keys and
 * untyped values, as paths such as `env_vars.*`, `env_vars.<key>`, `slurm.launcher.binds[]`. The RL
 * layout's `[inference]` is the same schema as the standalone root, so its paths count once; its
 * own top-level keys get an `rl:` prefix, the catalog file's a `catalog:` prefix.
 */
function schemaLeaves(): Set<string> {
  const out = new Set<string>();
  const walk = (s: any, at: string, add: (p: string) => void) => {
    const d = s._zod.def;
    switch (d.type) {
      case "object":
        for (const [k, v] of Object.entries(d.shape)) walk(v, at ? `${at}.${k}` : k, add);
        // A table that takes any other key (prime-rl's [vllm]): its keys and their values.
        if (d.catchall && d.catchall._zod.def.type !== "never") {
          add(`${at}.<extra key>`);
          walk(d.catchall, `${at}.<extra>`, add);
        }
        return;
      case "optional":
      case "nullable":
      case "default":
      case "prefault":
      case "pipe":
        return walk(d.innerType ?? d.in, at, add);
      case "union":
        for (const o of d.options) walk(o, at, add);
        return;
      case "record":
        add(`${at}.<key>`);
        return walk(d.valueType, `${at}.*`, add);
      case "array":
        return walk(d.element, `${at}[]`, add);
      case "string":
      case "enum":
      case "literal":
      case "unknown":
        return add(at);
      case "number":
      case "boolean":
        return; // no text
      default:
        // A wrapper this walk does not know could hide a string field: fail rather than skip it.
        throw new Error(`schemaLeaves: unknown schema node "${d.type}" at ${at || "<root>"}`);
    }
  };
  walk(standaloneLayout, "", (p) => out.add(p));
  walk(rlLayout, "", (p) =>
    out.add(
      p.startsWith("inference.")
        ? p.slice("inference.".length)
        : /^(model|deployment|trainer)\./.test(p) || (RL_PASSENGERS as readonly string[]).includes(p)
          ? `rl:${p}`
          : p,
    ),
  );
  walk(catalogOverlayFile, "", (p) => out.add(`catalog:${p}`));
  // prime-rl's layout: `prime:` for its inference keys (the standalone root, an RL file's
  // [inference]), `prime-rl:` for an RL file's own. [kubernetes] is the older layout's table.
  const notKubernetes = (p: string) => !/^kubernetes(\.|$)/.test(p);
  walk(primeStandaloneLayout, "", (p) => notKubernetes(p) && out.add(`prime:${p}`));
  for (const [layout, prefix] of [
    [primeRlLayout, "prime-rl"],
    [primeSftLayout, "prime-sft"],
  ] as const)
    walk(layout, "", (p) => {
      if (!notKubernetes(p)) return;
      if (p.startsWith("inference.")) out.add(`prime:${p.slice("inference.".length)}`);
      else out.add(p.startsWith("vllm_fleet.") ? `prime:${p}` : `${prefix}:${p}`);
    });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Loading one placement (or a merged run's placements)

type Loaded =
  | { kind: "ok"; cfg: FleetConfig; plan: DeploymentPlan }
  | { kind: "rejected"; error: ConfigError }
  | { kind: "crash"; message: string };

interface Placement {
  field: Field;
  value: string;
}

const parsedStacks = new Map<string, Raw>();

function baseRaw(stack: string, target: Target, dir: string): { raw: Raw; layout: Layout } {
  if (!parsedStacks.has(stack)) {
    const text = stack.startsWith("prime-rl/")
      ? fs.readFileSync(path.join(PACKAGE_ROOT, "test", "fixtures", `${stack}.toml`), "utf8")
      : stackText(stack);
    const parsed = parseToml(text);
    if (!parsed.ok) throw new Error(`${stack}: ${parsed.issue.message}`);
    parsedStacks.set(stack, parsed.value);
  }
  const raw = structuredClone(parsedStacks.get(stack)!);
  TWEAKS.get(stack)?.(raw);
  const prime = stack.startsWith("prime-rl/");
  if (target === "slurm") {
    // Absolute, inside the run's home: a relative output_dir breaks the launch (see the known bugs).
    raw.output_dir = `${dir}/home/out`;
    // Short bounds: a run that serves is done as soon as it does, one that does not ends this soon.
    // 30 s to serve: a busy machine (the rest of the suite beside it) can take 10 s to start the stand-ins.
    const timeouts = { ready_timeout: 30, pending_timeout: 10 };
    if (prime) {
      // prime-rl's [slurm] has no timeouts: vllm-fleet's own table has. One engine process per node
      // (the stand-ins tell processes apart by node and program): the values reach every rank's
      // process alike.
      raw.vllm_fleet = { ...raw.vllm_fleet, engine_processes: "per_node" };
      raw.vllm_fleet.slurm = { ...raw.vllm_fleet.slurm, ...timeouts };
    } else Object.assign(raw.slurm, timeouts);
    // The corpus follows values into what the programs get, not restarts: the recording stand-ins
    // exit at once, and fail-fast ends each run with its first exit, as before restarts existed.
    const failFast = { max_restarts: 0 };
    if (prime) raw.vllm_fleet.restart = failFast;
    else if (raw.services) raw.restart = failFast;
    else if (raw.inference) raw.inference.restart = failFast;
    else raw.restart = failFast;
  } else if (prime) {
    // The same file on Kubernetes.
    delete raw.slurm;
    raw.kubernetes = { namespace: "inference", router_image: "registry.example.com/vllm-router:0.1.17" };
  }
  return { raw, layout: "inference" in raw ? "rl" : "standalone" };
}

/** The base stack with `placements` applied; a catalog overlay is written to `catalogFile`. */
function configure(
  stack: string,
  target: Target,
  dir: string,
  placements: Placement[],
  catalogFile: string,
): { raw: Raw; layout: Layout; model: string } {
  const { raw, layout } = baseRaw(stack, target, dir);
  const ctx: Ctx = { layout, dir, catalog: {} };
  const model = modelName(raw, ctx);
  for (const p of placements) p.field.set(raw, p.value, ctx);
  if (Object.keys(ctx.catalog).length) {
    fs.mkdirSync(path.dirname(catalogFile), { recursive: true });
    fs.writeFileSync(catalogFile, YAML.stringify({ models: ctx.catalog }));
    raw.model_catalog = catalogFile;
  }
  return { raw, layout, model };
}

function load(raw: Raw, dir: string): Loaded {
  let cfg: FleetConfig;
  try {
    cfg = validate(raw, "injection.toml", dir);
  } catch (err) {
    if (err instanceof ConfigError) return { kind: "rejected", error: err };
    return { kind: "crash", message: `the loader threw ${(err as Error).stack ?? err}` };
  }
  try {
    return { kind: "ok", cfg, plan: buildPlan(cfg, "inj") };
  } catch (err) {
    return { kind: "crash", message: `the planner threw ${(err as Error).message}` };
  }
}

// ---------------------------------------------------------------------------------------------
// Results

/** A kind of finding this suite reports on its own (a regression guard for a fixed bug). */
type Bug = "dash-option";

interface Problem {
  text: string;
  bug?: Bug;
}

interface Case {
  field: Field;
  payload: Payload;
  target: Target;
  dir: string;
  value: string;
  canary: string;
  outcome: "rejected" | "rendered" | "crash";
  problems: Problem[];
}

/** INJECTION_FIELDS=<regex>: run the corpus for the fields whose id matches (while working on some). */
const ACTIVE = process.env.INJECTION_FIELDS
  ? FIELDS.filter((f) => new RegExp(process.env.INJECTION_FIELDS!).test(f.id))
  : FIELDS;

const cases: Case[] = [];
const caseOf = (f: Field, p: Payload, t: Target) =>
  cases.find((c) => c.field === f && c.payload === p && c.target === t);
const fieldIndex = (f: Field) => FIELDS.indexOf(f);
const marker = (f: Field) => `injmark${String(fieldIndex(f)).padStart(2, "0")}x`;

const totals = {
  runs: 0,
  markerRuns: 0,
  k8sRenders: 0,
  engineScriptRuns: 0,
  scriptsChecked: 0,
  shellcheckFiles: 0,
  ms: 0,
};
const unattributed: string[] = [];

// ---------------------------------------------------------------------------------------------
// Observations: what a run or a render produced, as plain data to compare

/** Flattened data: [path segments, leaf as text]; JSON text inside strings is parsed first. */
type Flat = [string[], string][];

function flatten(data: unknown, at: string[] = [], out: Flat = []): Flat {
  if (typeof data === "string" && /^[[{]/.test(data)) {
    try {
      const parsed = JSON.parse(data);
      if (parsed && typeof parsed === "object") return flatten({ json: parsed }, at, out);
    } catch {
      // not JSON: a leaf
    }
  }
  if (Array.isArray(data)) data.forEach((d, i) => flatten(d, [...at, String(i)], out));
  else if (data && typeof data === "object") for (const [k, v] of Object.entries(data)) flatten(v, [...at, k], out);
  else out.push([at, String(data)]);
  return out;
}

const replaceAll = (s: string, pairs: [string, string][]) => pairs.reduce((acc, [a, b]) => acc.split(a).join(b), s);

/**
 * Compares a payload run with its marker run: every leaf equals the marker run's leaf with each
 * field's marker replaced by that field's payload value. Differences are blamed on the fields
 * whose markers are in the leaf (or its path); others are returned as unattributed.
 */
function differential(
  markerFlat: Flat,
  payloadFlat: Flat,
  swaps: { field: Field; from: string; to: string }[],
): { byField: Map<Field, string[]>; other: string[]; seen: Set<Field> } {
  const pairs = swaps.map((s) => [s.from, s.to] as [string, string]);
  const expected = new Map<string, { text: string; fields: Field[] }>();
  const seen = new Set<Field>();
  for (const [p, v] of markerFlat) {
    const fields = swaps.filter((s) => v.includes(s.from) || p.some((seg) => seg.includes(s.from))).map((s) => s.field);
    fields.forEach((f) => seen.add(f));
    expected.set(JSON.stringify(p.map((seg) => replaceAll(seg, pairs))), { text: replaceAll(v, pairs), fields });
  }
  const actual = new Map(payloadFlat.map(([p, v]) => [JSON.stringify(p), v]));
  const byField = new Map<Field, string[]>();
  const other: string[] = [];
  const blame = (fields: Field[], msg: string) =>
    fields.length ? fields.forEach((f) => byField.set(f, [...(byField.get(f) ?? []), msg])) : other.push(msg);
  const show = (s: string | undefined) =>
    s === undefined ? "(missing)" : JSON.stringify(s.length > 300 ? `${s.slice(0, 300)}…` : s);
  for (const [p, e] of expected) {
    const got = actual.get(p);
    if (got !== e.text) blame(e.fields, `at ${p}: expected ${show(e.text)}, got ${show(got)}`);
  }
  for (const [p, v] of actual) if (!expected.has(p)) other.push(`unexpected ${p} = ${show(v)}`);
  return { byField, other, seen };
}

// ---------------------------------------------------------------------------------------------
// SLURM runs

const GENERATED: Record<string, string> = {
  "mooncake-config": "mooncake.json",
  "epp-config": "epp.yaml",
  "epp-endpoints": "endpoints.yaml",
  "envoy-config": "envoy.yaml",
};

interface PlannedProcess {
  node: number;
  prog: string;
  log: string;
  argv: string[];
  env: [string, string][];
}

/** Every process the launch body should start, keyed `<node>/<program>`, with refs resolved. */
function plannedProcesses(island: IslandPlan, nodeDir: (k: number) => string): Map<string, PlannedProcess> {
  const out = new Map<string, PlannedProcess>();
  const add = (node: number, log: string, argv: Value[], env: [string, Value][] = []) => {
    const resolve = (v: Value) =>
      resolveValue(v, (r) => (r.ref === "file" ? `${nodeDir(node)}/${GENERATED[r.file]}` : H.FAKE_NODE_ADDR));
    const words = argv.map(resolve);
    // `python3 -m <module> ...` is recorded by its module (test/security/harness.ts FAKES.python3).
    const [prog, ...args] = words[0] === "python3" && words[1] === "-m" ? words.slice(2) : words;
    const key = `${node}/${prog}`;
    if (out.has(key)) throw new Error(`test setup: two ${prog} on node ${node}`);
    out.set(key, { node, prog, log, argv: args, env: env.map(([k, v]) => [k, resolve(v)]) });
  };
  const m = island.mooncake;
  if (m) {
    add(m.headNode, "mooncake_master", m.master.argv);
    for (const c of m.clients) add(c.node, "mooncake_client", c.argv);
  }
  for (const e of island.engines) add(e.node, e.id, e.argv, e.env);
  const r = island.router;
  if (r && r.kind !== "llm-d") add(r.node, "router", (r.lateWorkers ?? r).argv);
  if (r?.kind === "llm-d") {
    for (const s of r.sidecars) add(s.node, "pd-sidecar", s.argv);
    add(r.node, "epp", r.epp.argv);
    add(r.node, "envoy", r.envoy.argv);
  }
  return out;
}

interface SlurmRun {
  obs: Record<string, unknown>;
  problems: string[];
}

/** Runs an island's create and delete commands against the stand-ins, and reads what happened. */
async function runSlurm(plan: DeploymentPlan, dir: string, bin: string, prepares: (() => void)[]): Promise<SlurmRun> {
  const island = plan.islands[0];
  const t = plan.settings;
  if (t.kind !== "slurm") throw new Error("expected a SLURM plan");
  const home = path.join(dir, "home");
  const rec = path.join(dir, "rec");
  const state = path.join(dir, "state");
  for (const d of [
    home,
    rec,
    state,
    ...island.nodes.flatMap((n) => [path.join(rec, `node${n.index}`), path.join(rec, `wrap-node${n.index}`)]),
  ])
    fs.mkdirSync(d, { recursive: true });
  for (const p of prepares) p();
  let job: ReturnType<typeof renderIslandJob>;
  let script: string;
  try {
    job = renderIslandJob(plan, island);
    script = renderIslandScript(plan, island).script;
  } catch (err) {
    return { obs: {}, problems: [`the renderer threw ${(err as Error).message}`] };
  }
  const islandDir = path.resolve(home, job.islandDir);
  const nodeDir = (k: number) => `${job.islandDir}/logs/job_${H.FAKE_JOB_ID}_0/node_${k}`;
  const planned = plannedProcesses(island, nodeDir);
  const expectCounts = island.nodes.map((n) => [...planned.values()].filter((p) => p.node === n.index).length);
  const env = {
    HOME: home,
    PATH: `${bin}:/usr/bin:/bin`,
    LANG: "C.UTF-8",
    FAKE_REC: rec,
    FAKE_STATE: state,
    FAKE_NODES: String(island.nodes.length),
    FAKE_EXPECT: expectCounts.join(" "),
    // A router told its workers at run time (lateWorkers) counts them on /readiness.
    FAKE_ROUTER_WORKERS: String((island.router?.kind !== "llm-d" && island.router?.lateWorkers?.count) || 0),
  };
  const problems: string[] = [];
  const obs: Record<string, any> = {};

  const create = await H.run("bash", ["-s"], { cwd: home, env, input: job.stdin, timeoutMs: 60_000 });
  obs.createCode = create.code;
  if (create.code !== 0 || create.timedOut) {
    const batch = fs.existsSync(path.join(state, "batch.out"))
      ? fs.readFileSync(path.join(state, "batch.out"), "utf8").slice(-1500)
      : "";
    problems.push(
      `create exited ${create.code}${create.timedOut ? " (timed out)" : ""}: ${create.stderr.slice(-1500)}\n--- batch output ---\n${batch}`,
    );
  }
  try {
    const { timing, ...result } = parseIslandResult(create.stdout) as Raw;
    obs.result = result;
    if (result.model !== plan.model)
      problems.push(`the result names model ${JSON.stringify(result.model)}, not ${JSON.stringify(plan.model)}`);
    if (result.jobName !== job.jobName) problems.push(`the result names job ${JSON.stringify(result.jobName)}`);
  } catch (err) {
    if (create.code === 0) problems.push(`no result line: ${(err as Error).message}`);
  }
  obs.endpointsFile = fs.existsSync(path.join(islandDir, "endpoints.json"));

  // What each process got, against the plan.
  const records: Record<string, unknown> = {};
  for (const n of island.nodes) {
    for (const r of H.readRecords(path.join(rec, `node${n.index}`))) {
      const key = `${n.index}/${r.prog}`;
      const want = planned.get(key);
      if (!want) {
        problems.push(`unplanned process ${key}: ${JSON.stringify(r.argv)}`);
        continue;
      }
      const env: Record<string, string> = { PATH: r.env.PATH };
      for (const [k] of want.env) env[k] = r.env[k];
      // The compile and model cache (issue 32) the launch body names from slurm.cache_dir or output_dir.
      for (const k of ["VLLM_CACHE_ROOT", "HF_HOME"]) if (r.env[k] !== undefined) env[k] = r.env[k];
      records[key] = { argv: r.argv, env };
      if (JSON.stringify(r.argv) !== JSON.stringify(want.argv))
        problems.push(`${key} got argv ${JSON.stringify(r.argv)}, planned ${JSON.stringify(want.argv)}`);
      for (const [k, v] of want.env)
        if (r.env[k] !== v) problems.push(`${key} got ${k}=${JSON.stringify(r.env[k])}, planned ${JSON.stringify(v)}`);
      if (t.launcher.type === "vllm" && t.launcher.bin_dir && r.env.PATH?.split(":")[0] !== t.launcher.bin_dir)
        problems.push(`${key}: PATH does not start with the bin_dir as one entry: ${JSON.stringify(r.env.PATH)}`);
    }
    for (const r of H.readRecords(path.join(rec, `wrap-node${n.index}`))) {
      const l = t.launcher;
      if (l.type !== "apptainer") continue;
      const head = ["exec", "--nv", ...(l.binds.length ? ["--bind", l.binds.join(",")] : []), l.image];
      const prog = r.argv[head.length];
      records[`${n.index}/apptainer ${prog}`] = { argv: r.argv };
      if (JSON.stringify(r.argv.slice(0, head.length)) !== JSON.stringify(head))
        problems.push(`apptainer on node ${n.index} got ${JSON.stringify(r.argv.slice(0, head.length + 1))}`);
      for (const b of l.binds)
        if (b.includes(","))
          problems.push(
            `apptainer splits --bind at commas, so the bind ${JSON.stringify(b)} becomes ${b.split(",").length}`,
          );
    }
  }
  for (const [key, p] of planned) {
    if (!records[key]) problems.push(`${key} never started (log ${p.log})`);
    if (!fs.existsSync(path.resolve(home, nodeDir(p.node), `${p.log}.log`)))
      problems.push(`no log file for ${p.log} on node ${p.node}`);
  }
  obs.records = records;

  // Launcher specifics: the venv activated, the pyxis container options on srun.
  if (t.launcher.type === "venv") {
    const sourced = island.nodes.map((n) =>
      fs.existsSync(path.join(rec, `venv.${n.index}`))
        ? fs.readFileSync(path.join(rec, `venv.${n.index}`), "utf8")
        : null,
    );
    obs.venv = sourced;
    for (const s of sourced)
      if (s !== `${t.launcher.path}/bin/activate`) problems.push(`the venv sourced ${JSON.stringify(s)}`);
  }
  const launch = H.readCalls(rec, "srun").find((a) => a.includes("--kill-on-bad-exit=1"));
  obs.srun = launch;
  if (t.launcher.type === "pyxis") {
    const l = t.launcher;
    if (!launch?.includes(`--container-image=${l.image}`))
      problems.push(`srun did not get --container-image=${JSON.stringify(l.image)}: ${JSON.stringify(launch)}`);
    if (l.mounts.length && !launch?.includes(`--container-mounts=${l.mounts.join(",")}`))
      problems.push(`srun did not get the container mounts: ${JSON.stringify(launch)}`);
    for (const m of l.mounts)
      if (m.includes(","))
        problems.push(
          `pyxis splits --container-mounts at commas, so the mount ${JSON.stringify(m)} becomes ${m.split(",").length}`,
        );
  }

  // Generated files, as written on each node.
  const files: Record<string, unknown> = {};
  const generated = generatedFiles(island);
  for (const n of island.nodes) {
    for (const [name, text] of Object.entries(generated)) {
      const file = path.resolve(home, nodeDir(n.index), name);
      const writes = name === "mooncake.json" || island.router?.node === n.index;
      if (!fs.existsSync(file)) {
        if (writes) problems.push(`node ${n.index} did not write ${name}`);
        continue;
      }
      const got = fs.readFileSync(file, "utf8");
      const want = `${text.replace(/__FLEET_NODE_ADDR_\d+__/g, H.FAKE_NODE_ADDR).replaceAll("__FLEET_NODE_DIR__", nodeDir(n.index))}\n`;
      if (got !== want) problems.push(`${name} on node ${n.index} differs from the planned file`);
      files[`${n.index}/${name}`] = name.endsWith(".json") ? JSON.parse(got) : YAML.parse(got);
    }
  }
  obs.files = files;

  // The directives sbatch reads from the script it was given.
  const submitted = path.join(islandDir, `${job.jobName}.sbatch`);
  if (fs.readFileSync(submitted, "utf8") !== script)
    problems.push("the submitted script differs from the rendered one");
  obs.directives = directiveArgs(script, problems);

  const del = await H.run("sh", ["-c", job.delete], { cwd: home, env, timeoutMs: 30_000 });
  obs.deleteCode = del.code;
  if (del.code !== 0) problems.push(`delete exited ${del.code}: ${del.stderr.slice(-500)}`);
  const names = H.readCalls(rec, "squeue").flatMap((a) =>
    a.filter((x) => x.startsWith("--name=")).map((x) => x.slice("--name=".length)),
  );
  obs.squeueNames = [...new Set(names)];
  if (names.some((n) => n !== job.jobName))
    problems.push(`squeue was asked for ${JSON.stringify([...new Set(names)])}`);
  if (!H.readCalls(rec, "scancel").some((a) => a.includes(`--name=${job.jobName}`)))
    problems.push("delete never cancelled the job by its name");
  return { obs, problems };
}

/** The #SBATCH arguments sbatch reads; each directive must come through as the one argument written. */
function directiveArgs(script: string, problems: string[]): string[][] {
  const out: string[][] = [];
  for (const line of script.split("\n")) {
    // sbatch reads directives up to the first line that is neither blank nor a comment.
    if (line.trim() !== "" && !line.startsWith("#")) break;
    if (!line.startsWith("#SBATCH ")) continue;
    const rest = line.slice("#SBATCH ".length);
    const { args, problems: p } = H.sbatchLineArgs(rest);
    out.push(args);
    problems.push(...p.map((x) => `${x}: ${line}`));
    if (args.length !== 1 || args[0] !== rest.trim())
      problems.push(`sbatch reads ${JSON.stringify(rest)} as ${JSON.stringify(args)}`);
    if (rest.startsWith("--output=") && rest.replace("%j", "").includes("%"))
      problems.push(`sbatch expands % patterns in ${JSON.stringify(rest)}`);
  }
  return out;
}

/** The dry-run create: it must write the script and print where, submitting nothing. */
async function runDry(plan: DeploymentPlan, dir: string, bin: string): Promise<string[]> {
  const island = plan.islands[0];
  const home = path.join(dir, "home-dry");
  const rec = path.join(dir, "rec-dry");
  for (const d of [home, rec]) fs.mkdirSync(d, { recursive: true });
  const job = renderIslandJob(plan, island);
  const r = await H.run("bash", ["-s"], {
    cwd: home,
    env: { HOME: home, PATH: `${bin}:/usr/bin:/bin`, LANG: "C.UTF-8", FAKE_REC: rec, FAKE_STATE: rec },
    input: job.stdin,
    timeoutMs: 30_000,
  });
  if (r.code !== 0) return [`the dry-run create exited ${r.code}: ${r.stderr.slice(-500)}`];
  const result = parseIslandResult(r.stdout);
  const script = `${job.islandDir}/${job.jobName}.sbatch`;
  if (!result.dryRun || result.script !== script) return [`the dry run printed ${r.stdout.slice(0, 300)}`];
  if (fs.readFileSync(path.resolve(home, script), "utf8") !== renderIslandScript(plan, island).script)
    return ["the dry run wrote another script"];
  return [];
}

// ---------------------------------------------------------------------------------------------
// Kubernetes renders

const FIELD_REFS: Record<string, string> = {
  "status.podIP": POD_IP,
  "metadata.namespace": "<namespace>",
  "metadata.name": "<pod name>",
};
const secretValue = (key: string) => `<secret ${key}>`;

type PodTemplate = { metadata?: Raw; spec: Raw };

/** Every pod template of an object, named. */
function podTemplates(o: Raw): [string, PodTemplate][] {
  if (o.kind === "Deployment" || o.kind === "StatefulSet") return [["template", o.spec.template]];
  if (o.kind === "LeaderWorkerSet")
    return [
      ["leader", o.spec.leaderWorkerTemplate.leaderTemplate],
      ["worker", o.spec.leaderWorkerTemplate.workerTemplate],
    ];
  return [];
}

interface K8sRender {
  obs: Record<string, unknown>;
  problems: string[];
  scripts: string[];
}

const engineRuns = new Map<string, Promise<string[] | string>>();

/** Runs an engine container's bash script as the pod would, with a recording `vllm`. */
function runEngineScript(
  script: string,
  env: Record<string, string>,
  bin: string,
  dir: string,
): Promise<string[] | string> {
  // The script reads only these from its env (the rest passes through exec untouched): equal scripts run once.
  const key = JSON.stringify([script, env.POD_IP, env.LWS_WORKER_INDEX, env.LWS_LEADER_ADDRESS, env.VLLM_API_KEY]);
  let found = engineRuns.get(key);
  if (!found) {
    totals.engineScriptRuns++;
    const out = path.join(dir, `engine-${engineRuns.size}.argv`);
    found = H.run("bash", ["-c", script], {
      cwd: dir,
      env: { ...env, HOME: dir, PATH: `${bin}:/usr/bin:/bin`, FAKE_MODE: "k8s", FAKE_OUT: out },
      timeoutMs: 30_000,
    }).then((r) =>
      r.code === 0 && fs.existsSync(out)
        ? fs.readFileSync(out, "utf8").split("\0").slice(0, -1)
        : `the engine script exited ${r.code}: ${r.stderr.slice(-500)}`,
    );
    engineRuns.set(key, found);
  }
  return found;
}

/** Kubernetes' label key/value, resource name and image rules that a rendered object must meet. */
function apiProblems(objects: Raw[]): string[] {
  const name = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
  const subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
  const qualified = (k: string) => {
    const [prefix, n] = k.includes("/") ? [k.slice(0, k.lastIndexOf("/")), k.slice(k.lastIndexOf("/") + 1)] : ["", k];
    return n.length <= 63 && name.test(n) && (prefix === "" || (prefix.length <= 253 && subdomain.test(prefix)));
  };
  const labelValue = (v: string) => v === "" || (v.length <= 63 && name.test(v));
  const out: string[] = [];
  const labels = (where: string, l: Record<string, string> | undefined) => {
    for (const [k, v] of Object.entries(l ?? {})) {
      if (!qualified(k)) out.push(`${where}: ${JSON.stringify(k)} is not a label key`);
      if (!labelValue(v)) out.push(`${where}: ${JSON.stringify(v)} is not a label value`);
    }
  };
  for (const o of objects) {
    labels(`${o.kind} ${o.metadata.name} labels`, o.metadata.labels);
    for (const [which, t] of podTemplates(o)) {
      labels(`${o.metadata.name} ${which} labels`, t.metadata?.labels);
      labels(`${o.metadata.name} ${which} nodeSelector`, t.spec.nodeSelector);
      for (const tol of t.spec.tolerations ?? []) {
        if (tol.key !== undefined && tol.key !== "" && !qualified(tol.key))
          out.push(`toleration key ${JSON.stringify(tol.key)} is not a label key`);
        if (tol.value !== undefined && !labelValue(tol.value))
          out.push(`toleration value ${JSON.stringify(tol.value)} is not a label value`);
      }
      for (const c of [...(t.spec.initContainers ?? []), ...t.spec.containers]) {
        if (!c.image || c.image.trim() !== c.image)
          out.push(`${c.name}: image ${JSON.stringify(c.image)} is empty or has surrounding whitespace`);
        for (const k of [...Object.keys(c.resources?.limits ?? {}), ...Object.keys(c.resources?.requests ?? {})])
          if (!qualified(k)) out.push(`${c.name}: ${JSON.stringify(k)} is not a resource name`);
      }
    }
  }
  return out;
}

/**
 * A Kubernetes fleet as the pods would see it: every command, arg and env value through kubelet's
 * expansion (secrets and downward-API fields defined), engine scripts run, ConfigMap files parsed,
 * config hashes dropped (they hash text that is compared parsed instead).
 */
async function renderK8s(plan: DeploymentPlan, bin: string, dir: string): Promise<K8sRender> {
  totals.k8sRenders++;
  fs.mkdirSync(dir, { recursive: true });
  const problems: string[] = [];
  const fleet = renderK8sFleet(plan, ["hfToken", "apiKey"]);
  const objects = allK8sObjects(fleet) as Raw[];
  for (const o of objects) {
    if (JSON.stringify(YAML.parse(YAML.stringify(o))) !== JSON.stringify(o))
      problems.push(`${o.kind} ${o.metadata.name} does not survive YAML`);
  }
  problems.push(...apiProblems(objects));
  const scripts: string[] = [];
  const engines: Record<string, unknown> = {};
  const runs: Promise<void>[] = [];
  const transformed = objects.map((original) => {
    const o = structuredClone(original);
    for (const [which, t] of podTemplates(o)) {
      if (t.metadata?.annotations) delete t.metadata.annotations["vllm-fleet/config-hash"];
      // LeaderWorkerSet's webhook puts its variables first in every container of its pods.
      const lws =
        o.kind === "LeaderWorkerSet"
          ? lwsVariables(
              o.metadata.name,
              o.metadata.namespace,
              o.spec.leaderWorkerTemplate.size,
              which === "worker" ? 1 : 0,
            )
          : {};
      for (const c of [...(t.spec.initContainers ?? []), ...t.spec.containers]) {
        const vars: Record<string, string> = { ...lws };
        for (const e of c.env ?? []) {
          const v =
            e.value !== undefined
              ? H.kubeletExpand(e.value, vars)
              : e.valueFrom?.fieldRef
                ? FIELD_REFS[e.valueFrom.fieldRef.fieldPath]
                : secretValue(e.valueFrom.secretKeyRef.key);
          vars[e.name] = v;
          delete e.value;
          e.expanded = v;
        }
        if (c.command) c.command = c.command.map((s: string) => H.kubeletExpand(s, vars));
        if (c.args) c.args = c.args.map((s: string) => H.kubeletExpand(s, vars));
        if (c.command?.[0] === "/bin/bash" && c.command[1] === "-c") {
          const script = c.command[2];
          scripts.push(script);
          c.command[2] = "<script>";
          const key = `${o.metadata.name}/${which}/${c.name}`;
          runs.push(
            runEngineScript(script, vars, bin, dir).then((argv) => {
              engines[key] = argv;
              if (typeof argv === "string") problems.push(`${key}: ${argv}`);
            }),
          );
        }
      }
    }
    // (The activity monitor's ledger ConfigMap is rendered empty: its monitor writes it.)
    if (o.kind === "ConfigMap" && o.data)
      o.data = Object.fromEntries(
        Object.entries(o.data as Record<string, string>).map(([k, v]) => [
          k,
          k.endsWith(".json") ? JSON.parse(v) : YAML.parse(v),
        ]),
      );
    return o;
  });
  await Promise.all(runs);
  // Each engine pod runs exactly its planned command line (the LWS worker template: worker 1).
  for (const i of fleet.islands) {
    for (const { workload, object } of i.replicas) {
      const pods =
        object.kind === "LeaderWorkerSet"
          ? ([
              ["leader", workload.engines[0]],
              ["worker", workload.engines[1]],
            ] as const)
          : ([["template", workload.engines[0]]] as const);
      for (const [which, e] of pods) {
        const got = engines[`${object.metadata.name}/${which}/${engineNamed(e.engine).container}`];
        const want = plannedPodArgv(plan, e);
        if (!Array.isArray(got)) continue;
        // The program the script ran (vllm, or prime-rl's inference), then its argv, the API key
        // from the Secret, and the flags only Kubernetes engines get.
        const extras = kubernetesEngineFlags(e);
        const tail = got.slice(got.length - extras.length);
        if (JSON.stringify(tail) !== JSON.stringify(extras))
          problems.push(
            `${object.metadata.name} ${which}: ends ${JSON.stringify(tail)}, not ${JSON.stringify(extras)}`,
          );
        const head = got.slice(0, got.length - extras.length);
        const apiKey =
          ["--api-key", "--vllm.api-key"].includes(head.at(-2)!) && head.at(-1) === secretValue("VLLM_API_KEY");
        const bare = apiKey ? head.slice(0, -2) : head;
        if (JSON.stringify(bare) !== JSON.stringify(want))
          problems.push(
            `${object.metadata.name} ${which}: ${bare[0]} got ${JSON.stringify(bare.slice(1))}, planned ${want[0]} ${JSON.stringify(want.slice(1))}`,
          );
      }
    }
  }
  return { obs: { objects: transformed, engines }, problems, scripts };
}

// ---------------------------------------------------------------------------------------------
// shellcheck, economically: each base script in full; a placement's script as the lines it changes
// (appended to its base script, where they are checked in the same context), unless the change is
// not a set of whole lines, in which case the script is checked in full.

/** The create script's and sbatch script's quoted heredoc bodies are checked as scripts of their own. */
function dropHeredocBodies(text: string): string {
  const out: string[] = [];
  let end: string | null = null;
  for (const line of text.split("\n")) {
    if (end !== null) {
      // Lines near the terminator are what shellcheck's end-token checks read.
      if (line === end || line.includes(end.replace(/_\d+$/, ""))) out.push(line);
      if (line === end) end = null;
      continue;
    }
    out.push(line);
    const m = /<<'([A-Za-z0-9_]+)'$/.exec(line);
    if (m) end = m[1];
  }
  return out.join("\n");
}

type ScriptKind = "create" | "dry-create" | "sbatch" | "launch" | "delete" | "engine";
/** Lines that are whole statements by themselves, per script kind (what a changed region must replace). */
const STATEMENT: Record<ScriptKind, RegExp | null> = {
  create: /^([A-Za-z_][A-Za-z0-9_]*=|# |printf '%s\\n' )/,
  "dry-create": /^([A-Za-z_][A-Za-z0-9_]*=|# |printf '%s\\n' )/,
  sbatch: /^(#SBATCH |# |[A-Za-z_][A-Za-z0-9_]*=)/,
  // A process's start line, inside the function that starts it (and restarts it: host/processes.ts).
  launch: /^(\s*(fleet_start_[\w-]+\(\) \{ )?\( (export|exec) .* 2>&1 &( \})?|export PATH=|source )/,
  delete: null,
  // An engine script's vllm command is one statement over continuation lines; each changed line is
  // checked as the arguments of a command of its own.
  engine: /^(exec vllm serve |\s+--)/,
};

interface ScriptCheck {
  /** Full scripts by normalized text, with the cases they belong to (null: a base or marker script). */
  full: Map<string, Set<Case | null>>;
  /** Per base and kind: a context script and the changed statements of each case. */
  hunks: Map<string, { base: string; lines: { text: string; owner: Case | null }[] }>;
  /** Delete one-liners, checked as the body bash runs. */
  deletes: Map<string, Set<Case | null>>;
}

/**
 * The regions where `b` differs from `a`, line by line (a longest-common-subsequence diff): pairs of
 * [lines of a, lines of b] replaced.
 */
function changedRegions(a: string[], b: string[]): [string[], string[]][] {
  // Common head and tail first: most of a script is.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const x = a.slice(head, a.length - tail);
  const y = b.slice(head, b.length - tail);
  const n = x.length;
  const m = y.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const out: [string[], string[]][] = [];
  let i = 0;
  let j = 0;
  let cur: [string[], string[]] | null = null;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) {
      cur = null;
      i++;
      j++;
      continue;
    }
    if (!cur) out.push((cur = [[], []]));
    if (j < m && (i >= n || lcs[i][j + 1] >= lcs[i + 1][j])) cur[1].push(y[j++]);
    else cur[0].push(x[i++]);
  }
  return out;
}

/**
 * A process start line, `fleet_start_k() { ( export A=..; export B=..; exec cmd .. ) >> "$NODE_DIR/x.log" 2>&1 & }`,
 * cut down to the `;`-separated parts that differ from the marker's line: the rest is the marker's
 * own text, checked with its script, and long env chains make shellcheck slow.
 */
function trimStartLine(marker: string, line: string): string {
  const shape = /^(\s*(?:fleet_start_[\w-]+\(\) \{ )?\( )(.*)( \) >> "\$NODE_DIR\/[^"]+\.log" 2>&1 &(?: \})?)$/s;
  const m = shape.exec(marker);
  const p = shape.exec(line);
  if (!m || !p || m[3] !== p[3]) return line;
  const parts = m[2].split("; ");
  let inner = p[2];
  let head = 0;
  while (head < parts.length - 1 && inner.startsWith(`${parts[head]}; `)) inner = inner.slice(parts[head++].length + 2);
  let tail = parts.length - 1;
  while (tail > head && inner.endsWith(`; ${parts[tail]}`)) inner = inner.slice(0, -(parts[tail--].length + 2));
  return `${p[1]}${inner}${p[3]}`;
}

function addScript(
  sc: ScriptCheck,
  kind: ScriptKind,
  baseKey: string,
  base: string | null,
  markerText: string | null,
  text: string,
  owner: Case | null,
) {
  const full = (t: string, map = sc.full) => {
    if (!map.has(t)) map.set(t, new Set());
    map.get(t)!.add(owner);
  };
  if (kind === "delete") return full(text, sc.deletes);
  const pattern = STATEMENT[kind];
  if (base === null || markerText === null || pattern === null) return full(text);
  const a = markerText.split("\n");
  const regions = changedRegions(a, text.split("\n"));
  // Every region must replace whole statements with something (else the script is checked whole).
  if (regions.some(([from, to]) => !from.length || !to.length || from.some((l) => !pattern.test(l)))) return full(text);
  const key = `${kind} ${baseKey}`;
  if (!sc.hunks.has(key)) {
    sc.hunks.set(key, { base, lines: [] });
    if (kind !== "engine") full(base);
  }
  for (const [from, to] of regions) {
    let hunk = kind === "launch" && from.length === 1 ? trimStartLine(from[0], to.join("\n")) : to.join("\n");
    if (kind === "engine") hunk = `vllm ${hunk.replace(/^\s*(exec vllm serve )?/, "").replace(/ \\$/, "")}`;
    // A changed statement keeps the shellcheck directive written right above it.
    const above = a[a.indexOf(from[0]) - 1] ?? "";
    if (/^\s*# shellcheck /.test(above)) hunk = `${above}\n${hunk}`;
    sc.hunks.get(key)!.lines.push({ text: hunk, owner });
  }
}

// ---------------------------------------------------------------------------------------------
// The run: setup shared by every part, then each part's steps (validate, run or render, shellcheck)

let ROOT = "";
let BIN = "";
const listeners: net.Server[] = [];

/** Payload text with its canary path, and the value a field places. */
function placement(f: Field, p: Payload, dir: string, layout: Layout): { value: string; canary: string } {
  const canary = path.join(dir, `canary.f${fieldIndex(f)}`);
  const text = p.text(canary);
  return { value: f.value ? f.value(text, { layout, dir, catalog: {} }) : text, canary };
}

function markerValue(f: Field, dir: string, layout: Layout): string {
  return f.value ? f.value(marker(f), { layout, dir, catalog: {} }) : marker(f);
}

type SlurmScripts = Record<Exclude<ScriptKind, "engine">, string>;

/** The SLURM scripts of a loaded stack, normalized for shellcheck (run paths and hashes are plain words). */
function slurmScripts(
  stack: string,
  dir: string,
  placements: Placement[],
  catalogFile: string,
  withDry = true,
): SlurmScripts | string {
  const render = (dry: boolean) => {
    const { raw } = configure(stack, "slurm", dir, placements, catalogFile);
    const loaded = load({ ...raw, dry_run: dry }, dir);
    if (loaded.kind !== "ok") return loaded.kind === "rejected" ? loaded.error.message : loaded.message;
    const island = loaded.plan.islands[0];
    try {
      return { job: renderIslandJob(loaded.plan, island), script: renderIslandScript(loaded.plan, island) };
    } catch (err) {
      return `the renderer threw ${(err as Error).message}`;
    }
  };
  const live = render(false);
  const dry = withDry ? render(true) : { job: { stdin: "" }, script: {} as never };
  if (typeof live === "string") return live;
  if (typeof dry === "string") return dry;
  const norm = (t: string) =>
    t
      .split(dir)
      .join("/RUN")
      .replace(/vllm-fleet:[0-9a-f]{16}/g, "vllm-fleet:0000000000000000");
  return {
    create: norm(dropHeredocBodies(live.job.stdin)),
    "dry-create": withDry ? norm(dropHeredocBodies(dry.job.stdin)) : "",
    sbatch: norm(dropHeredocBodies(live.script.script)),
    launch: norm(live.script.launchBody),
    delete: norm(live.job.delete),
  };
}

function problem(c: Case, text: string, bug?: Bug) {
  c.problems.push({ text, bug });
}

const loadMessage = (l: Loaded) => (l.kind === "rejected" ? l.error.message : l.kind === "crash" ? l.message : "");

interface MarkerRun {
  flat: Flat;
  swaps: { field: Field; from: string }[];
}

interface Entry {
  c: Case;
  value: string;
  canary: string;
}

type GroupResult = Map<Case, (Problem & { shared?: true })[]>;

/** What a placement's program gets: its value, as its layout passes it on. */
const arrival = (e: Entry) => e.c.field.arrives?.(e.value) ?? e.value;

/**
 * One SLURM run of a variant with these placements, checked against the marker run with the same
 * fields. Problems that quote no placement's value are marked `shared`.
 */
async function runGroup(variant: string, entries: Entry[], dir: string): Promise<GroupResult> {
  const v = VARIANTS[variant];
  const out: GroupResult = new Map(entries.map((e) => [e.c, []]));
  const add = (c: Case, text: string, extra: { bug?: Bug; shared?: true } = {}) => out.get(c)!.push({ text, ...extra });
  const placements = entries.map((e) => ({ field: e.c.field, value: e.value }));
  const loaded = load(configure(v.base, "slurm", dir, placements, path.join(dir, "catalog.yaml")).raw, dir);
  if (loaded.kind !== "ok") {
    for (const e of entries) add(e.c, `the merged run does not load: ${loadMessage(loaded)}`, { shared: true });
    return out;
  }
  totals.runs++;
  const run = await runSlurm(
    loaded.plan,
    dir,
    BIN,
    entries.flatMap((e) => (e.c.field.prepare ? [() => e.c.field.prepare!(e.value)] : [])),
  );
  if (v.dry) {
    const dry = load(
      { ...configure(v.base, "slurm", dir, placements, path.join(dir, "catalog-dry.yaml")).raw, dry_run: true },
      dir,
    );
    run.problems.push(
      ...(dry.kind === "ok"
        ? await runDry(dry.plan, dir, BIN)
        : [`the dry-run config does not load: ${loadMessage(dry)}`]),
    );
  }
  for (const e of entries) if (fs.existsSync(e.canary)) add(e.c, `CANARY CREATED: ${e.canary}`);
  const marked = await markerRun(
    variant,
    entries.map((e) => e.c.field),
  );
  if (typeof marked === "string") {
    for (const e of entries) add(e.c, marked, { shared: true });
    return out;
  }
  const norm = (s: string) => s.split(dir).join("<RUN>");
  const flat = flatten(run.obs).map(([p, x]) => [p.map(norm), norm(x)] as [string[], string]);
  const swaps = marked.swaps.map((s) => ({ ...s, to: norm(arrival(entries.find((e) => e.c.field === s.field)!)) }));
  const d = differential(marked.flat, flat, swaps);
  for (const e of entries) {
    for (const msg of d.byField.get(e.c.field) ?? []) add(e.c, msg);
    if (!d.seen.has(e.c.field)) add(e.c, "its marker reached nothing the run observed");
  }
  // A failure that quotes no placement's value is every placement's.
  const quotes = (msg: string, e: Entry) =>
    [e.value, norm(e.value), JSON.stringify(e.value).slice(1, -1), e.canary].some(
      (x) => x.length > 2 && msg.includes(x),
    );
  for (const msg of [...run.problems, ...d.other]) {
    const owners = entries.filter((e) => quotes(msg, e));
    for (const e of owners.length ? owners : entries) add(e.c, msg, owners.length ? {} : { shared: true });
  }
  // A value that is an argv word of its own and starts with "-" is read as an option.
  for (const e of entries) {
    const from = swaps.find((s) => s.field === e.c.field)!.from;
    const word = marked.flat.find(([pp, x]) => x === from && pp[0] === "records" && pp.at(-2) === "argv");
    if (word && e.value.startsWith("-"))
      add(
        e.c,
        `${JSON.stringify(e.value)} is an argv word of its own (${word[0].join(" ")}), so the program reads it as an option`,
        { bug: "dash-option" },
      );
  }
  return out;
}

/** Placed and run on its target (else only validated, or not placed there at all). */
const rendered = (f: Field, t: Target) => !f.closed && !f.unrendered && Boolean(t === "slurm" ? f.slurm : f.k8s);

/** Marker runs by variant and field set: every payload run of those fields compares with the same one. */
const markerRuns = new Map<string, Promise<MarkerRun | string>>();

function markerRun(variant: string, fields: Field[]): Promise<MarkerRun | string> {
  const key = `${variant} ${fields.map(fieldIndex).join(",")}`;
  if (!markerRuns.has(key)) {
    const v = VARIANTS[variant];
    const dir = path.join(ROOT, "slurm-marker", variant, String(markerRuns.size));
    const layout = baseRaw(v.base, "slurm", dir).layout;
    const placements = fields.map((f) => ({ field: f, value: markerValue(f, dir, layout) }));
    markerRuns.set(
      key,
      (async () => {
        const m = load(configure(v.base, "slurm", dir, placements, path.join(dir, "catalog.yaml")).raw, dir);
        if (m.kind !== "ok") return `the marker run does not load: ${loadMessage(m)}`;
        totals.markerRuns++;
        const run = await runSlurm(
          m.plan,
          dir,
          BIN,
          placements.flatMap((pl) => (pl.field.prepare ? [() => pl.field.prepare!(pl.value)] : [])),
        );
        if (run.problems.length) return `the marker run failed: ${run.problems.join("\n")}`;
        const norm = (s: string) => s.split(dir).join("<RUN>");
        return {
          flat: flatten(run.obs).map(([p, x]) => [p.map(norm), norm(x)] as [string[], string]),
          swaps: placements.map((pl) => ({ field: pl.field, from: norm(pl.value) })),
        };
      })(),
    );
  }
  return markerRuns.get(key)!;
}

/** 1. Every placement of `payloads` in `fields` on `target`, validated on its own: the part's cases. */
function validatePlacements(fields: Field[], target: Target, payloads: Payload[]): Case[] {
  const out: Case[] = [];
  for (const f of fields) {
    const stack = target === "slurm" ? VARIANTS[f.slurm!].base : f.k8s!;
    for (const p of payloads) {
      // By index: a payload id (sbatch-hetjob) must not reach the paths every run uses.
      const dir =
        target === "slurm"
          ? path.join(ROOT, "slurm", f.slurm!, `p${PAYLOADS.indexOf(p)}`)
          : path.join(ROOT, "k8s", `f${fieldIndex(f)}`, `p${PAYLOADS.indexOf(p)}`);
      const layout = baseRaw(stack, target, dir).layout;
      const { value, canary } = placement(f, p, dir, layout);
      const c: Case = { field: f, payload: p, target, dir, value, canary, outcome: "rendered", problems: [] };
      out.push(c);
      const { raw, model } = configure(
        stack,
        target,
        dir,
        [{ field: f, value }],
        path.join(dir, `catalog.f${fieldIndex(f)}.yaml`),
      );
      const loaded = load(raw, dir);
      if (loaded.kind === "crash") {
        c.outcome = "crash";
        // The planner's own argv check catches a vllm_extra value that reads as a flag: the known bug below.
        problem(
          c,
          loaded.message,
          value.startsWith("-") && /invalid vllm command line/.test(loaded.message) ? "dash-option" : undefined,
        );
      } else if (loaded.kind === "rejected") {
        c.outcome = "rejected";
        const want = f.at(layout, model);
        const named = loaded.error.issues.filter((i) =>
          f.prefix ? i.path === want || i.path.startsWith(`${want}.`) : i.path === want,
        );
        if (!named.length) problem(c, `rejected, but no issue names ${want}: ${loaded.error.message}`);
        for (const i of named)
          if (!i.message || /^Invalid input/.test(i.message))
            problem(c, `the issue at ${i.path} says nothing useful: ${JSON.stringify(i.message)}`);
        if (f.inCatalog && !loaded.error.source.endsWith(".yaml"))
          problem(c, `rejected in ${loaded.error.source}, not in the catalog file`);
      } else if (f.closed) {
        problem(c, `accepted ${JSON.stringify(value)}, which is outside the field's closed set`);
      } else if (f.unrendered && target === "slurm") {
        const s = slurmScripts(stack, dir, [{ field: f, value }], path.join(dir, `catalog.f${fieldIndex(f)}.yaml`));
        if (typeof s === "string") problem(c, `does not render: ${s}`);
        else
          for (const [kind, text] of Object.entries(s))
            if (text.includes(canary) || (value.length > 5 && text.includes(value)))
              problem(c, `reached the ${kind} script`);
      }
    }
  }
  return out;
}

/**
 * 2. SLURM: one run per payload of `payloads` with its accepted placements in the variant's `fields`,
 * against a marker run with the same fields; the scripts rendered on the way go to `sc`.
 */
async function runVariant(
  name: string,
  fields: Field[],
  payloads: Payload[],
  sc: ScriptCheck,
  lap: (phase: string) => void,
) {
  const v = VARIANTS[name];
  const slurmJobs: (() => Promise<void>)[] = [];
  const baseDir = path.join(ROOT, "slurm-base", name);
  const layout = baseRaw(v.base, "slurm", baseDir).layout;
  const baseScripts = slurmScripts(v.base, baseDir, [], "", Boolean(v.dry));
  if (typeof baseScripts === "string") throw new Error(`${v.base} does not load: ${baseScripts}`);
  for (const [kind, text] of Object.entries(baseScripts))
    if (text) addScript(sc, kind as ScriptKind, v.base, null, null, text, null);
  // Each field's marker render: the lines its value changes, to compare each payload's with.
  const markerScripts = new Map<Field, SlurmScripts>();
  for (const f of fields) {
    const mdir = path.join(ROOT, "slurm-field-marker", `f${fieldIndex(f)}`);
    const m = slurmScripts(
      v.base,
      mdir,
      [{ field: f, value: markerValue(f, mdir, layout) }],
      path.join(mdir, "catalog.yaml"),
      Boolean(v.dry),
    );
    if (typeof m === "string") throw new Error(`${f.id}: the marker value does not load: ${m}`);
    markerScripts.set(f, m);
    for (const [kind, text] of Object.entries(m))
      if (text)
        addScript(
          sc,
          kind as ScriptKind,
          v.base,
          baseScripts[kind as keyof SlurmScripts],
          baseScripts[kind as keyof SlurmScripts],
          text,
          null,
        );
  }
  for (const p of payloads) {
    const own = fields.map((f) => caseOf(f, p, "slurm")!).filter((c) => c.outcome === "rendered");
    // Each placement's own render, for shellcheck.
    for (const c of own) {
      const s = slurmScripts(
        v.base,
        c.dir,
        [{ field: c.field, value: c.value }],
        path.join(c.dir, `catalog.f${fieldIndex(c.field)}.yaml`),
        Boolean(v.dry),
      );
      if (typeof s === "string") {
        problem(c, `does not render again: ${s}`);
        continue;
      }
      for (const [kind, text] of Object.entries(s))
        if (text)
          addScript(
            sc,
            kind as ScriptKind,
            v.base,
            baseScripts[kind as keyof SlurmScripts],
            markerScripts.get(c.field)![kind as keyof SlurmScripts],
            text,
            c,
          );
    }
    if (!own.length) continue;
    slurmJobs.push(async () => {
      const merged = await runGroup(
        name,
        own.map((c) => ({ c, value: c.value, canary: c.canary })),
        own[0].dir,
      );
      // A failure no single placement can be blamed for: run each placement alone, for exact blame.
      const blamed = merged.size > 1 && [...merged.values()].some((list) => list.some((x) => x.shared));
      const results = blamed
        ? new Map(
            await Promise.all(
              own.map(async (c, i) => {
                const dir = `${c.dir}-solo${i}`;
                const solo = placement(c.field, c.payload, dir, layout);
                return [...(await runGroup(name, [{ c, ...solo }], dir))][0];
              }),
            ),
          )
        : merged;
      for (const [c, list] of results) for (const x of list) problem(c, x.text, x.bug);
    });
  }
  lap("slurmRender");
  // Runs spend much of their time waiting on each other's processes: more than two at a time pays.
  await H.pool(slurmJobs, 6);
  lap("slurmRuns");
}

/** 3. Kubernetes: each accepted placement of `payloads` in `fields` against its field's marker render. */
async function renderBase(fields: Field[], payloads: Payload[], sc: ScriptCheck, lap: (phase: string) => void) {
  const k8sJobs: (() => Promise<void>)[] = [];
  for (const f of fields) {
    const mdir = path.join(ROOT, "k8s-marker", `f${fieldIndex(f)}`);
    const layout = baseRaw(f.k8s!, "k8s", mdir).layout;
    const from = markerValue(f, mdir, layout);
    let markerRender: Promise<{ flat: Flat; scripts: string[] } | string> | undefined;
    const marked = () =>
      (markerRender ??= (async () => {
        const m = load(
          configure(f.k8s!, "k8s", mdir, [{ field: f, value: from }], path.join(mdir, "catalog.yaml")).raw,
          mdir,
        );
        if (m.kind !== "ok") return `the marker value does not load: ${loadMessage(m)}`;
        const r = await renderK8s(m.plan, BIN, mdir);
        for (const s of r.scripts) addScript(sc, "engine", f.k8s!, null, null, s, null);
        return r.problems.length
          ? `the marker render fails: ${r.problems.join("\n")}`
          : { flat: flatten(r.obs), scripts: r.scripts };
      })());
    for (const p of payloads) {
      const c = caseOf(f, p, "k8s")!;
      if (c.outcome !== "rendered") continue;
      k8sJobs.push(async () => {
        const loaded = load(
          configure(f.k8s!, "k8s", c.dir, [{ field: f, value: c.value }], path.join(c.dir, "catalog.yaml")).raw,
          c.dir,
        );
        if (loaded.kind !== "ok") return problem(c, `does not load again: ${loadMessage(loaded)}`);
        let r: K8sRender;
        try {
          r = await renderK8s(loaded.plan, BIN, c.dir);
        } catch (err) {
          return problem(c, `the Kubernetes renderer threw ${(err as Error).message}`);
        }
        if (fs.existsSync(c.canary)) problem(c, `CANARY CREATED: ${c.canary}`);
        for (const msg of r.problems) problem(c, msg);
        const marker = await marked();
        if (typeof marker === "string") return problem(c, marker);
        const same = r.scripts.length === marker.scripts.length;
        r.scripts.forEach((s, i) =>
          addScript(
            sc,
            "engine",
            f.k8s!,
            same ? "#!/bin/bash" : null,
            same ? marker.scripts[i] : null,
            s.split(c.dir).join("/RUN"),
            c,
          ),
        );
        const m = marker.flat;
        const d = differential(m, flatten(r.obs), [{ field: f, from, to: f.arrives?.(c.value) ?? c.value }]);
        for (const msg of [...(d.byField.get(f) ?? []), ...d.other]) problem(c, msg);
        if (!d.seen.has(f)) problem(c, "its marker reached nothing in the manifests");
        // An argv element of its own: an engine's recorded argv, or a container's command or args (not text inside JSON).
        const word = m.find(
          ([pp, x]) =>
            x === from &&
            /^\d+$/.test(pp.at(-1)!) &&
            (pp[0] === "engines" ? pp.length === 3 : ["command", "args"].includes(pp.at(-2)!)),
        );
        if (word && c.value.startsWith("-"))
          problem(
            c,
            `${JSON.stringify(c.value)} is an argv word of its own (${word[0].join(" ")}), so the program reads it as an option`,
            "dash-option",
          );
      });
    }
  }
  await H.pool(k8sJobs, 4);
  lap("k8s");
}

/** Scripts of no placement (bases, markers) shellchecked so far: every part of a group renders them. */
const checkedShared = new Set<string>();

/** 4. The delete commands' shape, and shellcheck over every script in `sc` (its files under `dir`). */
async function checkScripts(sc: ScriptCheck, dir: string): Promise<void> {
  for (const [line, who] of sc.deletes) {
    // `timeout -k <s> <s> bash -c '<one line>'`: the login node bounds it (components/slurm/login-bound.ts).
    const prefix = /^timeout -k \d+ \d+ bash -c /.exec(line)?.[0];
    const body = await H.run("bash", ["-c", `printf '%s' ${prefix ? line.slice(prefix.length) : "''"}`], {
      env: process.env,
      timeoutMs: 10_000,
    });
    if (!prefix || body.code !== 0)
      for (const c of who)
        if (c) problem(c, `the delete command is not timeout ... bash -c '<one line>': ${line.slice(0, 200)}`);
    for (const c of who) addScript(sc, "engine", "", null, null, `#!/bin/bash\n${body.stdout}\n`, c);
  }
  const files = new Map<string, string>();
  const spans = new Map<string, { owner: Case | null; from: number; to: number }[]>();
  for (const [text, who] of sc.full) {
    // A base or marker script (no placement's) that an earlier part checked: its findings are in already.
    const shared = who.size === 1 && who.has(null);
    if (shared && checkedShared.has(text)) continue;
    if (shared) checkedShared.add(text);
    const key = `script ${files.size}`;
    files.set(key, text);
    spans.set(
      key,
      [...who].map((owner) => ({ owner, from: 0, to: Infinity })),
    );
  }
  totals.scriptsChecked +=
    files.size + [...sc.hunks.values()].reduce((s, h) => s + new Set(h.lines.map((l) => l.owner)).size, 0);
  for (const [k, h] of sc.hunks) {
    const lines = h.base.split("\n");
    const list: { owner: Case | null; from: number; to: number }[] = [{ owner: null, from: 1, to: lines.length }];
    for (const l of h.lines) {
      const from = lines.length + 1;
      lines.push(...l.text.split("\n"));
      list.push({ owner: l.owner, from, to: lines.length });
    }
    files.set(`changed lines of ${k}`, lines.join("\n"));
    spans.set(`changed lines of ${k}`, list);
  }
  totals.shellcheckFiles += files.size;
  const findings = await H.shellcheckAll(files, dir);
  for (const [key, list] of findings) {
    for (const fnd of list) {
      const line = files.get(key)!.split("\n")[fnd.line - 1] ?? "";
      const text = `shellcheck SC${fnd.code} (${fnd.level}): ${fnd.message}\n  ${line.slice(0, 300)}`;
      const who = spans.get(key)!.filter((s) => fnd.line >= s.from && fnd.line <= s.to);
      const owners = who.flatMap((s) => (s.owner ? [s.owner] : []));
      if (who.some((s) => s.owner === null)) unattributed.push(`${path.relative(ROOT, dir)} ${key}: ${text}`);
      for (const c of owners) problem(c, text);
    }
  }
}

/**
 * The corpus in groups, each a describe with its fields' tests: one per SLURM run variant and one
 * per Kubernetes base stack. A group runs in parts (slices of PAYLOADS), each in a bounded hook of
 * its own: the whole corpus takes minutes on 2 cores.
 */
interface Group {
  /** `slurm <variant>` or `k8s <base stack>`. */
  name: string;
  target: Target;
  /** A key of VARIANTS (SLURM) or a base stack (Kubernetes). */
  stack: string;
  /** Its fields, active or not (each has its test; only ACTIVE ones run). */
  fields: Field[];
  /** The payloads of each of its parts. */
  parts: Payload[][];
}

/**
 * Payloads per part: 20 of a SLURM variant's merged runs and the shellcheck of their scripts took up
 * to 81 s on 2 cores alone (a cold CI run), and past 120 s with a second unit suite beside it (a CI
 * run and `npm test` on one machine); 10 took up to 79 s beside an end-to-end run. So a variant runs
 * in twelfths, each well inside its bound when the machine does twice the work; a Kubernetes base's
 * renders take seconds.
 */
const PART_SIZE: Record<Target, number> = { slurm: 5, k8s: PAYLOADS.length };

function group(target: Target, stack: string): Group {
  const size = PART_SIZE[target];
  return {
    name: `${target} ${stack}`,
    target,
    stack,
    fields: FIELDS.filter((f) => (target === "slurm" ? f.slurm : f.k8s) === stack),
    parts: Array.from({ length: Math.ceil(PAYLOADS.length / size) }, (_, i) =>
      PAYLOADS.slice(i * size, (i + 1) * size),
    ),
  };
}

const GROUPS: Group[] = [
  ...Object.keys(VARIANTS).map((v) => group("slurm", v)),
  ...[...new Set(FIELDS.flatMap((f) => (f.k8s ? [f.k8s] : [])))].map((b) => group("k8s", b)),
];

/** The directories a group's parts write (see where each is made): removed once its tests have read them. */
function groupDirs(g: Group): string[] {
  const fields = g.fields.map((f) => `f${fieldIndex(f)}`);
  const shellcheck = path.join(ROOT, "shellcheck", g.target, g.stack);
  return g.target === "slurm"
    ? [
        ...["slurm", "slurm-base", "slurm-marker"].map((d) => path.join(ROOT, d, g.stack)),
        ...fields.map((f) => path.join(ROOT, "slurm-field-marker", f)),
        shellcheck,
      ]
    : [...fields.flatMap((f) => [path.join(ROOT, "k8s", f), path.join(ROOT, "k8s-marker", f)]), shellcheck];
}

/** Each part's wall time and when its phases ended (ms from its start), for the report. */
const partTimes: { part: string; ms: number; phases: Record<string, number> }[] = [];

/** Runs one part of a group: validation, its runs or renders, shellcheck; its cases join `cases` and are returned. */
async function runPart(g: Group, payloads: Payload[]): Promise<Case[]> {
  const fields = g.fields.filter((f) => ACTIVE.includes(f));
  if (!fields.length) return [];
  const first = PAYLOADS.indexOf(payloads[0]);
  const name = `${g.name}, payloads ${first + 1}-${first + payloads.length}`;
  const start = Date.now();
  const before = { ...totals };
  const phases: Record<string, number> = {};
  const lap = (phase: string) => void (phases[phase] = Date.now() - start);
  const own = validatePlacements(fields, g.target, payloads);
  cases.push(...own);
  lap("validate");
  const sc: ScriptCheck = { full: new Map(), hunks: new Map(), deletes: new Map() };
  const placed = fields.filter((f) => rendered(f, g.target));
  if (g.target === "slurm") await runVariant(g.stack, placed, payloads, sc, lap);
  else await renderBase(placed, payloads, sc, lap);
  await checkScripts(sc, path.join(ROOT, "shellcheck", g.target, g.stack, `p${first}`));
  lap("shellcheck");
  const ms = Date.now() - start;
  totals.ms += ms;
  partTimes.push({ part: name, ms, phases });

  const n = (o: Case["outcome"]) => own.filter((c) => c.outcome === o).length;
  const grew = (k: keyof typeof totals) => totals[k] - before[k];
  const count = (prefix: string) =>
    own.reduce((s, c) => s + c.problems.filter((p) => p.text.startsWith(prefix)).length, 0);
  const work =
    g.target === "slurm"
      ? `${grew("runs")} merged runs + ${grew("markerRuns")} marker runs`
      : `${grew("k8sRenders")} renders, ${grew("engineScriptRuns")} engine scripts run`;
  console.log(
    `injection corpus, ${name}: ${own.length} cases (${fields.length} fields x ${payloads.length} payloads): ` +
      `${n("rejected")} rejected, ${n("rendered")} rendered, ${n("crash")} crashed; ${work}; ` +
      `${grew("scriptsChecked")} scripts shellchecked in ${grew("shellcheckFiles")} files; ` +
      `canaries ${count("CANARY")}, shellcheck findings ${count("shellcheck")}; ` +
      `${(ms / 1000).toFixed(1)} s (phases end at ${Object.entries(phases)
        .map(([k, v]) => `${k} ${(v / 1000).toFixed(1)} s`)
        .join(", ")})`,
  );
  return own;
}

const keepDirs = process.env.KEEP_INJECTION_DIR !== undefined;

/**
 * Declares the corpus's tests for one shard of the groups (every `shards`-th group from `shard`):
 * each shard is a test file of its own, so vitest's workers share the corpus. The checks of the
 * corpus as a whole (payload count, schema coverage) run in shard 0; the checks of what was found
 * run in every shard, over the cases of its own groups.
 */
export function injectionSuite(shard: number, shards: number): void {
  const groups = GROUPS.filter((_, i) => i % shards === shard);
  beforeAll(async () => {
    ROOT = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-inj-"));
    BIN = path.join(ROOT, "bin");
    H.writeFakes(BIN);
    // The Mooncake ports the launch body waits for on the (fake) head node: someone must listen.
    for (const port of [FIXED_PORTS.mooncakeMaster, FIXED_PORTS.mooncakeMetadata, FIXED_PORTS.mooncakeClient]) {
      await new Promise<void>((resolve) => {
        const server = net.createServer((s) => s.destroy());
        server.once("error", () => resolve()); // taken: something listens there already
        server.listen(port, H.FAKE_NODE_ADDR, () => resolve());
        listeners.push(server);
      });
    }
  });

  afterAll(async () => {
    // INJECTION_REPORT=<file>: every case's outcome and problems as JSON, for reading failures at leisure.
    if (process.env.INJECTION_REPORT) {
      // One file per shard: report.json -> report.1-of-2.json.
      const file = process.env.INJECTION_REPORT.replace(/(\.json)?$/, `.${shard + 1}-of-${shards}$1`);
      const report = cases.map((c) => ({
        field: c.field.id,
        payload: c.payload.id,
        target: c.target,
        outcome: c.outcome,
        value: c.value.slice(0, 200),
        problems: c.problems,
      }));
      fs.writeFileSync(file, JSON.stringify({ totals, parts: partTimes, unattributed, cases: report }, null, 1));
    }
    for (const s of listeners) s.close();
    if (ROOT && !keepDirs) fs.rmSync(ROOT, { recursive: true, force: true });
  });

  describe("shell and manifest injection corpus", () => {
    if (shard === 0) {
      it("has at least 40 distinct payloads, each with an id and a canary action", () => {
        expect(PAYLOADS.length).toBeGreaterThanOrEqual(40);
        expect(new Set(PAYLOADS.map((p) => p.id)).size).toBe(PAYLOADS.length);
        for (const p of PAYLOADS.filter((p) => p.id !== "dash-help"))
          expect(p.text("/CANARY"), p.id).toContain("/CANARY");
        expect(Math.max(...PAYLOADS.map((p) => p.text("/c").length))).toBeGreaterThan(10_000);
      });

      it("covers every string field of the stack schema (both layouts) and the model catalog", () => {
        // prime-rl's [kubernetes] is not walked: it is the older layout's table, passed on as it is.
        expect((primeStandaloneLayout.shape as Record<string, any>).kubernetes.unwrap()).toBe(kubernetesConfig.table);
        expect((primeRlLayout.shape as Record<string, any>).kubernetes.unwrap()).toBe(kubernetesConfig.table);
        const covered = new Set(FIELDS.flatMap((f) => f.covers));
        const missing = [...schemaLeaves()].filter((leaf) => !covered.has(leaf));
        expect(missing, "string fields no payload is placed in: add them to FIELDS").toEqual([]);
      });
    }

    describe.each(groups)("$name", (g) => {
      // Each part a test of its own, bounded: a part takes up to about 40 s on 2 cores alone, about twice
      // that beside a second suite, and each child process has its own bound (H.run). vitest runs a describe's tests and
      // suites one after another, in the order they are declared, so the field tests below see them all.
      for (const payloads of g.parts) {
        const first = PAYLOADS.indexOf(payloads[0]) + 1;
        it(`payloads ${first}-${first + payloads.length - 1}: each placed in every field, validated, then run or rendered, and shellchecked`, async () => {
          const fields = g.fields.filter((f) => ACTIVE.includes(f));
          expect(await runPart(g, payloads)).toHaveLength(fields.length * payloads.length);
        }, 120_000);
      }
      // Removing the whole run directory at the end takes over a minute on a busy machine: a group at a time.
      afterAll(() => {
        if (!keepDirs) for (const d of groupDirs(g)) fs.rmSync(d, { recursive: true, force: true });
      });

      describe.each(g.fields.map((f) => [`${f.id} [${g.target}]`, f] as const))("%s", (_, f) => {
        it("every payload is rejected naming the key, or reaches its place unchanged and runs nothing", () => {
          const found = PAYLOADS.flatMap((p) =>
            (caseOf(f, p, g.target)?.problems ?? []).filter((x) => !x.bug).map((x) => `${p.id}: ${x.text}`),
          );
          expect(found).toEqual([]);
        });
      });
    });

    // After every group: these read what all of them found.
    it("no canary file was created by any payload in any field", () => {
      expect(
        cases.flatMap((c) =>
          c.problems
            .filter((p) => p.text.startsWith("CANARY"))
            .map((p) => `${c.field.id} <- ${c.payload.id}: ${p.text}`),
        ),
      ).toEqual([]);
    });

    it("nothing failed that no single placement can be blamed for", () => {
      expect(unattributed).toEqual([]);
    });

    if (shard === 0) {
      // Regression: with a relative output_dir (the default is vllm-fleet/<job_name>) the launch body
      // once cd'd into "$NODE_DIR" and then opened "$NODE_DIR/<name>.log" relative to it, so no process
      // started; the sbatch script now makes the island directory absolute first.
      it("with a relative output_dir (the default) the launch body starts every process", async () => {
        const dir = path.join(ROOT, "relative-output-dir");
        const { raw } = baseRaw("single-node", "slurm", dir);
        raw.output_dir = "vllm-fleet/single-node";
        const loaded = load(raw, dir);
        if (loaded.kind !== "ok") throw new Error(loadMessage(loaded));
        const home = path.join(dir, "home");
        const rec = path.join(dir, "rec");
        for (const d of [home, path.join(rec, "node0"), path.join(rec, "wrap-node0")])
          fs.mkdirSync(d, { recursive: true });
        fs.writeFileSync(path.join(home, "job.sbatch"), renderIslandScript(loaded.plan, loaded.plan.islands[0]).script);
        // What sbatch does: run the script from the submission directory (the create script cd's to $HOME).
        const env = {
          HOME: home,
          PATH: `${BIN}:/usr/bin:/bin`,
          LANG: "C.UTF-8",
          FAKE_REC: rec,
          FAKE_STATE: dir,
          FAKE_NODES: "1",
          FAKE_EXPECT: "2",
          SLURM_JOB_ID: "7",
          SLURM_JOB_NODELIST: "node0",
        };
        await H.run("bash", ["job.sbatch"], { cwd: home, env, timeoutMs: 30_000 });
        expect(
          H.readRecords(path.join(rec, "node0"))
            .map((r) => r.prog)
            .sort(),
        ).toEqual(["vllm", "vllm-router"]);
      });
    }

    // vllm_extra values are argv words of their own after their flag; one starting with "-" would be
    // read by argparse as an option, so config/vllm-flags.ts refuses it, naming the key.
    it("no option value that starts with '-' reaches a program as a separate argv word", () => {
      expect(
        cases.flatMap((c) =>
          c.problems.filter((p) => p.bug === "dash-option").map((p) => `${c.field.id} <- ${c.payload.id}: ${p.text}`),
        ),
      ).toEqual([]);
    });
  });
}
