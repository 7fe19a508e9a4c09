import type { ConfigView } from "./fleet-config";
import { targetPart } from "./target-registry";

/*
 * Topology facts that follow from the config alone: the planner lays islands out with them and the
 * rules (rules.ts) validate against them, so they live below both.
 */

/** Nodes in one island. */
export function islandNodes(cfg: ConfigView): number {
  const d = cfg.deployment;
  if (d.type === "single_node") return 1;
  if (d.type === "multi_node") return d.num_nodes;
  return d.num_prefill_nodes * d.num_prefill_replicas + d.num_decode_nodes * d.num_decode_replicas;
}

/** DP ranks on one node: the engine processes a node runs with per-rank engines (plan.ts replicaLayouts). */
export function localRanks(cfg: ConfigView): number {
  const { tp, dp } = cfg.parallel;
  const d = cfg.deployment;
  if (d.type === "disaggregated")
    return cfg.explicit.has("parallel.dp") ? dp : Math.max(1, Math.floor(d.gpus_per_node / tp));
  if (d.type === "multi_node" && cfg.enable_expert_parallel) return Math.max(1, Math.floor(dp / d.num_nodes));
  return dp;
}

/**
 * Whether the engines run one process per DP rank: engine_processes = "per_rank" on a target that
 * starts per-rank processes (SLURM: capabilities.perRankProcesses), for a
 * launch prime-rl runs per rank (a multi_node or disaggregated deployment, or any island of an RL
 * multi_node run: its templates/inference.sbatch.j2 and multi_node_rl.sbatch.j2 start every rank
 * with _launch_rank.sh.j2), behind a router. A single-node deployment is one engine with internal
 * load balancing, as prime-rl runs it.
 */
export function perRankEngines(cfg: ConfigView): boolean {
  return (
    cfg.engine_processes === "per_rank" &&
    targetPart(cfg.target.kind).capabilities.perRankProcesses &&
    cfg.router.type !== "none" &&
    (cfg.deployment.type !== "single_node" || cfg.rl_deployment?.type === "multi_node")
  );
}

export { deepEpAcrossNodes, ROLE_ALL2ALL } from "./deep-ep";
