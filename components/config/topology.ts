import { settingsFor } from "./target-kinds";
import { shapeOf, type FleetConfig } from "./types";

/*
 * Topology facts that follow from the config alone: the planner lays islands out with them and the
 * rules (rules.ts) validate against them, so they live below both.
 */

/** Nodes in one island. */
export function islandNodes(cfg: FleetConfig): number {
  const d = cfg.deployment;
  if (d.type === "single_node") return 1;
  if (d.type === "multi_node") return d.num_nodes;
  return d.num_prefill_nodes * d.num_prefill_replicas + d.num_decode_nodes * d.num_decode_replicas;
}

/** DP ranks on one node: the engine processes a node runs with per-rank engines (plan.ts replicaLayouts). */
export function localRanks(cfg: FleetConfig): number {
  const { tp, dp } = cfg.parallel;
  const d = cfg.deployment;
  if (d.type === "disaggregated")
    return cfg.explicit.has("parallel.dp") ? dp : Math.max(1, Math.floor(d.gpus_per_node / tp));
  if (d.type === "multi_node" && cfg.enable_expert_parallel) return Math.max(1, Math.floor(dp / d.num_nodes));
  return dp;
}

/**
 * Whether the engines run one process per DP rank: engine_processes = "per_rank" on SLURM, for a
 * launch prime-rl runs per rank (a multi_node or disaggregated deployment, or any island of an RL
 * multi_node run: its templates/inference.sbatch.j2 and multi_node_rl.sbatch.j2 start every rank
 * with _launch_rank.sh.j2), behind a router. A single-node deployment is one engine with internal
 * load balancing, as prime-rl runs it.
 */
export function perRankEngines(cfg: FleetConfig): boolean {
  return (
    cfg.engine_processes === "per_rank" &&
    settingsFor(cfg, "slurm") !== undefined &&
    cfg.router.type !== "none" &&
    (cfg.deployment.type !== "single_node" || cfg.rl_deployment?.type === "multi_node")
  );
}

/**
 * P/D per-role settings, as prime-rl fixes them (ROLE_EXTRA in its
 * src/prime_rl/templates/inference.sbatch.j2; its docs/inference.md, "Optimized P/D disaggregation
 * deployment", says all2all cannot be customised for P/D). The planner passes them
 * (plan/engine-argv.ts); the fabric rule below reads them.
 */
export const ROLE_ALL2ALL = { prefill: "deepep_high_throughput", decode: "deepep_low_latency" } as const;

/**
 * Each replica that spans nodes (on Kubernetes pods of a LeaderWorkerSet: wide-EP over several
 * nodes, a P/D role over several nodes) with a DeepEP all2all backend, whose kernels reach the
 * other nodes' GPUs over RDMA (NVSHMEM): what it is, the backend, and the key that chose it.
 */
export function deepEpAcrossNodes(cfg: FleetConfig): { what: string; backend: string; key: string }[] {
  const d = cfg.deployment;
  const out: { what: string; backend: string; key: string }[] = [];
  const deepep = (b: unknown): b is string => typeof b === "string" && b.startsWith("deepep_");
  if (shapeOf(cfg) === "wide_ep" && d.type === "multi_node" && d.num_nodes > 1) {
    const [backend, key] =
      cfg.vllm_extra.all2all_backend !== undefined
        ? [cfg.vllm_extra.all2all_backend, "vllm_extra.all2all_backend"]
        : [cfg.env_vars.VLLM_ALL2ALL_BACKEND, "env_vars.VLLM_ALL2ALL_BACKEND"];
    if (deepep(backend)) out.push({ what: `the wide-EP replica (${d.num_nodes} pods)`, backend, key });
  }
  if (d.type === "disaggregated") {
    for (const [role, nodes] of [
      ["prefill", d.num_prefill_nodes],
      ["decode", d.num_decode_nodes],
    ] as const) {
      if (nodes < 2) continue;
      const own = cfg.role_vllm_extra?.[role]?.all2all_backend;
      const [backend, key] =
        own !== undefined ? [own, `role_vllm_extra.${role}.all2all_backend`] : [ROLE_ALL2ALL[role], `deployment.type`];
      if (deepep(backend)) out.push({ what: `each ${role} replica (${nodes} pods)`, backend, key });
    }
  }
  return out;
}
