import type { ConfigView } from "./fleet-config";
import { enginePart, ENGINE_PARTS } from "./engine-registry";
import type { SetupContext } from "./target-part";
import { PRIME_ROUTER_REQUEST_TIMEOUT_S } from "./schema/router";
import { LATER_PRIME_RL_COMMIT } from "./prime-commit";
import { targetPart, TARGET_PARTS } from "./target-registry";

export type { SetupContext } from "./target-part";

/**
 * prime-rl's auto_setup_* validators: the values that follow from other keys, applied in this order
 * to the canonical config once the model catalog's launch values and the schema's defaults are in
 * (normalise.ts). The schema names the rule beside each key it derives. The RL layout's other
 * spellings of a key (slurm.output_dir, [model] name, trainer.enable_router_replay) are mapped in
 * normalise.ts toCanonicalInput, and count as set.
 */
export const AUTO_SETUP: Record<string, (cfg: ConfigView, ctx: SetupContext) => void> = {
  "RL [deployment] gpus_per_node sizes the island's nodes": (cfg, { given, rlDeployment }) => {
    if (!given("deployment.gpus_per_node") && rlDeployment?.gpus_per_node !== undefined)
      cfg.deployment.gpus_per_node = rlDeployment.gpus_per_node;
  },
  // prime-rl's layout only: rl.py auto_setup_deployment fills the inference GPUs of a single-node RL run with DP ranks.
  "RL single node: inference takes num_infer_gpus": (cfg) => {
    const n = cfg.rl_deployment?.num_infer_gpus;
    if (cfg.rl_deployment?.type !== "single_node" || n === undefined) return;
    const { tp, dp } = cfg.parallel;
    if (n !== tp * dp && n % tp === 0) cfg.parallel.dp = n / tp;
  },
  // prime-rl's layout only: every node of a multi-node deployment runs gpus_per_node / tp engines
  // (templates/inference.sbatch.j2 DP_PER_NODE; rl.py auto_setup_deployment sets dp when it is 1).
  // An expert-parallel replica spans the nodes, so its DP group is all of them (multi_node_rl.sbatch.j2
  // INFER_GROUP_DP = NODES_PER_INFER_REPLICA x DP_PER_NODE).
  "prime-rl fills each multi_node node with gpus_per_node / tp ranks": (cfg, { given }) => {
    if (!cfg.prime_rl || given("parallel.dp") || cfg.deployment.type !== "multi_node") return;
    const perNode = Math.max(1, Math.floor(cfg.deployment.gpus_per_node / cfg.parallel.tp));
    cfg.parallel.dp = cfg.enable_expert_parallel ? perNode * cfg.deployment.num_nodes : perNode;
  },
  // prime-rl's layout only: 8324600's VllmRouterConfig has request_timeout_secs (default 14400, prime-rl
  // #3495) and its router command passes it; a file read as 559b447, which passed none, keeps the
  // router's own default (config/prime-commit.ts says which commit a file is read as).
  "prime-rl's router waits 14400 s for a request": (cfg, { given }) => {
    const r = cfg.router;
    if (!cfg.prime_rl || r.type !== "vllm-router" || given("router.request_timeout_secs")) return;
    if (cfg.prime_engine?.commit === LATER_PRIME_RL_COMMIT) r.request_timeout_secs = PRIME_ROUTER_REQUEST_TIMEOUT_S;
  },
  "engines behind a router listen on server.port + 100": (cfg, { given }) => {
    if (!given("backend_port")) cfg.backend_port = cfg.router.type === "none" ? cfg.server.port : cfg.server.port + 100;
  },
  "KV offload turns on prefix caching": (cfg, { given }) => {
    if (!given("enable_prefix_caching") && given("kv_cache_offload")) cfg.enable_prefix_caching = true;
  },
};

/** The name of every auto-setup rule, in the order they apply: the shared ones, each engine's, then each target's. */
export function autoSetupNames(): string[] {
  return [
    ...Object.keys(AUTO_SETUP),
    ...ENGINE_PARTS.flatMap((part) => Object.keys(part.autoSetup)),
    ...TARGET_PARTS.flatMap((part) => Object.keys(part.autoSetup)),
  ];
}

/** Applies the shared auto-setup rules, then the config's engine's own, then its target's. */
export function applyAutoSetup(cfg: ConfigView, ctx: SetupContext): void {
  for (const setUp of Object.values(AUTO_SETUP)) setUp(cfg, ctx);
  for (const setUp of Object.values(enginePart(cfg.engine).autoSetup)) setUp(cfg, ctx);
  for (const setUp of Object.values(targetPart(cfg.target.kind).autoSetup)) setUp(cfg, cfg.target, ctx);
}
