import { shapeOf, type ConfigView } from "./fleet-config";

/**
 * P/D per-role settings, as prime-rl fixes them (ROLE_EXTRA in its
 * src/prime_rl/templates/inference.sbatch.j2; its docs/inference.md, "Optimized P/D disaggregation
 * deployment", says all2all cannot be customised for P/D). The planner passes them
 * (plan/engines/vllm/argv.ts); the fabric rule reads them.
 */
export const ROLE_ALL2ALL = { prefill: "deepep_high_throughput", decode: "deepep_low_latency" } as const;

/**
 * Each replica that spans nodes (on Kubernetes pods of a LeaderWorkerSet: wide-EP over several
 * nodes, a P/D role over several nodes) with a DeepEP all2all backend, whose kernels reach the
 * other nodes' GPUs over RDMA (NVSHMEM): what it is, the backend, and the key that chose it.
 */
export function deepEpAcrossNodes(cfg: ConfigView): { what: string; backend: string; key: string }[] {
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
