import { DEFAULT_ROUTER_RELEASE, KNOWN_SCORERS, ROUTER_RELEASES } from "./schema/router";
import type { ConfigView } from "./fleet-config";
import { shapeOf } from "./fleet-config";
import { ENV_RULES } from "./env-rules";
import { islandNodes, perRankEngines } from "./topology";
import { portCollisions } from "./port-rules";
import { fail, type Rule, type RuleIssue } from "./rule";
import { enginePart, ENGINE_PARTS } from "./engine-registry";
import { SGLANG_ROUTER_POLICIES } from "./schema/router";
import { targetPart, TARGET_PARTS } from "./target-registry";

export type { RuleIssue } from "./rule";
export { PROTECTED_ENV } from "./env-rules";

/**
 * One row per rule the deployment shapes need or prime-rl enforces (its validators in
 * packages/prime-rl-configs/src/prime_rl/configs/inference.py and rl.py); docs/shapes.md lists them.
 */
export const RULES: Record<string, Rule> = {
  "llm-d cannot return routed experts": (cfg) =>
    cfg.router.type === "llm-d" && cfg.enable_return_routed_experts
      ? fail(
          "router.type",
          "llm-d does not support enable_return_routed_experts (router replay); use the vllm-router router or turn router replay off",
          "enable_return_routed_experts",
        )
      : [],
  "router replay excludes KV offload": (cfg) =>
    cfg.enable_return_routed_experts && cfg.kv_cache_offload
      ? fail(
          "enable_return_routed_experts",
          "router replay cannot be combined with kv_cache_offload: external KV cache hits carry no routed-expert decisions; drop one of them",
          "kv_cache_offload",
        )
      : [],
  "llm-d needs a multi-node shape": (cfg) =>
    cfg.router.type === "llm-d" && cfg.deployment.type === "single_node"
      ? fail(
          "router.type",
          "llm-d fronts multi-node and disaggregated deployments only; use vllm-router (or none) for single_node",
          "deployment.type",
        )
      : [],
  "multi-node needs a router": (cfg) =>
    cfg.router.type === "none" && cfg.deployment.type !== "single_node"
      ? fail(
          "router.type",
          `a ${cfg.deployment.type} deployment needs a router in front of its engines: use "vllm-router" or "llm-d"`,
          "deployment.type",
        )
      : [],
  // The schema takes a policy any build has; which build runs is router.release's to say.
  "the router release serves the policy": (cfg) => {
    if (cfg.router.type !== "vllm-router") return [];
    const { policy, release } = cfg.router;
    if (ROUTER_RELEASES[release].policies.includes(policy)) return [];
    const [needed, build] = Object.entries(ROUTER_RELEASES).find(([, r]) => r.policies.includes(policy))!;
    return fail(
      "router.policy",
      `"${policy}" is not a policy of ${ROUTER_RELEASES[release].title} ({key:router.release} = "${release}"${release === DEFAULT_ROUTER_RELEASE ? ", the default" : ""}); it needs ${build.title}: install ${build.install} where the launcher finds vllm-router (on SLURM ${cfg.prime_rl ? "vllm_fleet.slurm.launcher" : "slurm.launcher"}: its bin_dir, venv or container image; on Kubernetes an image in kubernetes.router_image; locally local.launcher's bin_dir or venv), then set {key:router.release} = "${needed}"`,
      "router.release",
    );
  },
  "known llm-d scorers": (cfg) => {
    if (cfg.router.type !== "llm-d") return [];
    // Read here, on an llm-d stack only: the other stacks never load the EPP's manifest.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const eppManifest = require("../upstream/llm-d-epp.json") as typeof import("../upstream/llm-d-epp.json");
    const plugins = new Set(eppManifest.plugin_types);
    const out: RuleIssue[] = [];
    for (const key of ["scorers", "prefill_scorer_overrides", "decode_scorer_overrides"] as const) {
      for (const name of Object.keys(cfg.router[key])) {
        if (!(KNOWN_SCORERS as readonly string[]).includes(name) || !plugins.has(name)) {
          out.push(
            ...fail(
              `router.${key}.${name}`,
              `unknown llm-d scorer "${name}"; known scorers: ${KNOWN_SCORERS.join(", ")}`,
            ),
          );
        }
      }
    }
    return out;
  },
  ...ENV_RULES,
  "tensor parallelism fits a node": (cfg) =>
    cfg.parallel.tp > cfg.deployment.gpus_per_node
      ? fail(
          "parallel.tp",
          `tp = ${cfg.parallel.tp} exceeds {key:deployment.gpus_per_node} = ${cfg.deployment.gpus_per_node}; tensor parallelism does not span nodes`,
          "deployment.gpus_per_node",
        )
      : [],
  // vLLM's ModelConfig.verify_with_parallel_config (the query heads split evenly over the TP ranks)
  // and QKVParallelLinear (the KV heads split evenly, or each replicated on tp / kv_heads ranks).
  "tensor parallelism divides the attention heads": (cfg) => {
    const a = cfg.catalog?.arch;
    if (!a) return [];
    const tp = cfg.parallel.tp;
    const headsFit = (t: number) => a.attention_heads === undefined || a.attention_heads % t === 0;
    const kvFit = (t: number) =>
      a.attention !== "gqa" || a.kv_heads === undefined || (t >= a.kv_heads ? t % a.kv_heads : a.kv_heads % t) === 0;
    if (headsFit(tp) && kvFit(tp)) return [];
    const fits = Array.from({ length: Math.max(tp * 2, 8) }, (_, i) => i + 1).filter((t) => headsFit(t) && kvFit(t));
    const hint = [fits.filter((t) => t < tp).pop(), fits.find((t) => t > tp)].filter((t) => t !== undefined);
    const why = !headsFit(tp)
      ? `the ${a.attention_heads} attention heads of ${cfg.catalog!.id}: vLLM splits them evenly over the tensor-parallel ranks`
      : `the ${a.kv_heads} KV heads of ${cfg.catalog!.id}: vLLM splits them evenly over the tensor-parallel ranks, or gives each to tp / ${a.kv_heads} ranks, so tp must divide ${a.kv_heads} or be a multiple of it`;
    return fail(
      "parallel.tp",
      `tp = ${tp} does not fit ${why} (try {key:parallel.tp} = ${hint.join(" or ")})`,
      "model.name",
    );
  },
  "tp x dp fits a node": (cfg) => {
    const shape = shapeOf(cfg);
    const { tp, dp } = cfg.parallel;
    const gpn = cfg.deployment.gpus_per_node;
    if (shape === "wide_ep" || tp > gpn) return [];
    if (shape === "disaggregated" && !cfg.explicit.has("parallel.dp")) return [];
    if (tp * dp <= gpn) return [];
    const hint =
      shape === "single_node"
        ? "use a multi_node deployment for more GPUs"
        : shape === "multi_replica"
          ? "each replica lives on one node; set enable_expert_parallel = true for one replica spanning nodes"
          : "in a disaggregated deployment parallel.dp is per node";
    return fail(
      "parallel.dp",
      `tp x dp = ${tp} x ${dp} = ${tp * dp} GPUs exceeds {key:deployment.gpus_per_node} = ${gpn}: ${hint}`,
      "parallel.tp",
      "deployment.gpus_per_node",
    );
  },
  // prime-rl's rl.py (multi-node expert-parallel inference): gpus_per_node must divide by tp, and
  // dp x tp must equal every inference GPU; each node runs gpus_per_node / tp ranks.
  "wide-EP fills every GPU of its nodes": (cfg) => {
    if (shapeOf(cfg) !== "wide_ep" || cfg.deployment.type !== "multi_node") return [];
    const { tp, dp } = cfg.parallel;
    const n = cfg.deployment.num_nodes;
    const gpn = cfg.deployment.gpus_per_node;
    if (tp > gpn) return []; // "tensor parallelism fits a node"
    if (gpn % tp !== 0) {
      const divisors = Array.from({ length: gpn }, (_, i) => i + 1).filter((d) => gpn % d === 0);
      const below = divisors.filter((d) => d < tp).pop();
      const above = divisors.find((d) => d > tp);
      const hint = [below, above].filter((d) => d !== undefined).join(" or ");
      return fail(
        "parallel.tp",
        `wide-EP runs {key:deployment.gpus_per_node} / tp ranks on every node, but tp = ${tp} does not divide gpus_per_node = ${gpn} (try {key:parallel.tp} = ${hint})`,
        "deployment.gpus_per_node",
      );
    }
    const total = n * gpn;
    if (tp * dp === total) return [];
    return fail(
      "parallel.dp",
      `wide-EP puts one rank on every GPU of its nodes, so tp x dp must equal {key:deployment.num_nodes} x {key:deployment.gpus_per_node} = ${n} x ${gpn} = ${total} GPUs, but tp x dp = ${tp} x ${dp} = ${tp * dp} (try {key:parallel.dp} = ${total / tp})`,
      "parallel.tp",
      "deployment.num_nodes",
      "deployment.gpus_per_node",
    );
  },
  "offload forces prefix caching": (cfg) =>
    cfg.kv_cache_offload && cfg.explicit.has("enable_prefix_caching") && cfg.enable_prefix_caching === false
      ? fail(
          "enable_prefix_caching",
          "KV cache offload requires prefix caching: remove enable_prefix_caching = false (offload turns it on)",
          "kv_cache_offload",
        )
      : [],
  "per-rank engines each serve their API": (cfg) =>
    cfg.vllm_extra.headless === true && perRankEngines(cfg)
      ? fail(
          "vllm_extra.headless",
          'per-rank engines each serve their own API on their own port (external load balancing), so none runs headless; remove headless, or set {key:engine_processes} = "per_node" for one engine per node with the head serving for every rank',
          "engine_processes",
        )
      : [],
  "headless only for wide-EP": (cfg) =>
    cfg.vllm_extra.headless === true && shapeOf(cfg) !== "wide_ep"
      ? fail(
          "vllm_extra.headless",
          "headless engines serve no API; it only applies to wide-EP (multi_node with enable_expert_parallel), where the head node then serves for all ranks",
          "deployment.type",
          "enable_expert_parallel",
        )
      : [],
  "P/D sets all2all per role": (cfg) =>
    cfg.deployment.type === "disaggregated" && cfg.vllm_extra.all2all_backend !== undefined
      ? fail(
          "vllm_extra.all2all_backend",
          "disaggregated deployments set all2all_backend per role (prefill deepep_high_throughput, decode deepep_low_latency); remove it",
          "deployment.type",
        )
      : [],
  "EPLB needs expert parallelism": (cfg) =>
    cfg.enable_eplb && !cfg.enable_expert_parallel
      ? fail(
          "enable_eplb",
          "EPLB balances experts across expert-parallel ranks: set enable_expert_parallel = true or drop enable_eplb",
          "enable_expert_parallel",
        )
      : [],
  "LoRA keys need enable_lora": (cfg) =>
    !cfg.enable_lora && (cfg.explicit.has("max_loras") || cfg.explicit.has("max_lora_rank"))
      ? fail(
          cfg.explicit.has("max_loras") ? "max_loras" : "max_lora_rank",
          "has no effect without enable_lora = true",
          "enable_lora",
        )
      : [],
  "RL island size matches": (cfg) => {
    const n = rlInferNodes(cfg);
    if (n === undefined) return [];
    const island = islandNodes(cfg);
    return n !== island
      ? fail(
          "rl_deployment.num_infer_nodes",
          `is ${n}, but [inference.deployment] describes an island of ${island} node(s); drop num_infer_nodes or make them agree`,
          "deployment",
        )
      : [];
  },
  "RL single node holds one island": (cfg) =>
    rlType(cfg) === "single_node" && (cfg.deployment.type !== "single_node" || cfg.islands > 1)
      ? fail(
          "rl_deployment.type",
          'an RL single_node deployment runs one single-node inference server; use type = "multi_node" for more',
          "deployment.type",
          "islands",
        )
      : [],
  // rl.py SingleNodeDeploymentConfig.validate_gpu_count (prime-rl's layout gives these keys).
  "RL single node: trainer and inference GPUs fit the node": (cfg) => {
    const d = cfg.rl_deployment;
    if (d?.type !== "single_node" || d.num_infer_gpus === undefined || d.num_train_gpus === undefined) return [];
    const gpn = d.gpus_per_node ?? 8;
    const total = d.num_train_gpus + d.num_infer_gpus;
    return total > gpn
      ? fail(
          "rl_deployment.num_infer_gpus",
          `Total GPU count (${total} = ${d.num_train_gpus} train + ${d.num_infer_gpus} infer) exceeds {key:rl_deployment.gpus_per_node} (${gpn})`,
          "rl_deployment.num_train_gpus",
          "rl_deployment.gpus_per_node",
        )
      : [];
  },
  // rl.py auto_setup_deployment: the inference GPUs are split into tp-sized DP ranks.
  "RL single node: inference GPUs divide by tp": (cfg) => {
    const d = cfg.rl_deployment;
    if (d?.type !== "single_node" || d.num_infer_gpus === undefined || d.num_infer_gpus % cfg.parallel.tp === 0)
      return [];
    return fail(
      "rl_deployment.num_infer_gpus",
      `${d.num_infer_gpus} inference GPUs must be divisible by the tensor parallel size {key:parallel.tp} = ${cfg.parallel.tp}`,
      "parallel.tp",
    );
  },
  "ports do not collide": portCollisions,
  "sglang-router policy": (cfg) =>
    cfg.router.type === "sglang-router" && !(SGLANG_ROUTER_POLICIES as readonly string[]).includes(cfg.router.policy)
      ? fail(
          "router.policy",
          `sglang-router has no policy "${cfg.router.policy}"; its policies: ${SGLANG_ROUTER_POLICIES.join(", ")}`,
          "engine",
        )
      : [],
};

const rlInferNodes = (cfg: ConfigView) => cfg.rl_deployment?.num_infer_nodes;
const rlType = (cfg: ConfigView) => cfg.rl_deployment?.type;

/**
 * The name of every rule, in the order they run: the shared ones (RULES), each registered target's
 * own (run on its settings only), then each engine's (run when the config runs it).
 */
export function ruleNames(): string[] {
  return [
    ...Object.keys(RULES),
    ...TARGET_PARTS.flatMap((part) => Object.keys(part.rules)),
    ...ENGINE_PARTS.flatMap((part) => Object.keys(part.rules)),
  ];
}

/** Runs every rule; each violation names the canonical key to change. */
export function checkRules(cfg: ConfigView): RuleIssue[] {
  const part = targetPart(cfg.target.kind);
  return [
    ...Object.values(RULES).flatMap((rule) => rule(cfg)),
    ...Object.values(part.rules).flatMap((rule) => rule(cfg, cfg.target)),
    ...Object.values(enginePart(cfg.engine).rules).flatMap((rule) => rule(cfg)),
  ];
}
