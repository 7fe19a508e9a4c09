import { rlLayout } from "./schema/layouts";
import { VLLM_CANONICAL_KEYS } from "./schema/prime";
import { TARGETS } from "./target-registry";

/**
 * Translates canonical config paths (the standalone layout's names) into the TOML path the user
 * actually wrote, so every error names a key that exists in their file.
 */
export class UserPaths {
  private readonly exact = new Map<string, string>();

  /** `prime`: the file uses prime-rl's current layout ([vllm], top-level [router]; schema/prime.ts). */
  constructor(
    public readonly layout: "standalone" | "rl",
    public readonly prime = false,
  ) {}

  /** Records where a canonical key came from when the layout alone cannot tell. */
  record(canonical: string, user: string): void {
    this.exact.set(canonical, user);
  }

  user(canonical: string): string {
    const hit = this.exact.get(canonical);
    if (hit !== undefined) return hit;
    if (this.prime) return primeUserPath(canonical, this.layout);
    const [head, ...rest] = canonical.split(".");
    const tail = rest.length ? "." + rest.join(".") : "";
    if (head === "router") return (this.layout === "rl" ? "inference.deployment.router" : "deployment.router") + tail;
    if (this.layout === "standalone") return canonical;
    if (head === "islands") return "deployment.num_infer_replicas";
    if (head === "rl_deployment") return "deployment" + tail;
    if (TOP_LEVEL_IN_RL.has(head)) return canonical;
    return "inference." + canonical;
  }
}

/**
 * Keys that stay at the root of an RL-layout file: the layout's own, except the tables the canonical
 * config reads as inference settings ([inference], and [model] and [deployment], as model and rl_deployment).
 */
const TOP_LEVEL_IN_RL = new Set(
  Object.keys(rlLayout.shape).filter((k) => !["inference", "model", "deployment"].includes(k)),
);

/** Canonical deployment keys prime-rl names differently (inference.py DisaggregatedInferenceDeploymentConfig). */
const PRIME_DEPLOYMENT: Record<string, string> = {
  num_prefill_nodes: "prefill_nodes_per_replica",
  num_decode_nodes: "decode_nodes_per_replica",
};

/** Where prime-rl's layout (standalone, or RL with inference under [inference]) keeps a canonical key. */
function primeUserPath(canonical: string, layout: "standalone" | "rl"): string {
  const [head, ...rest] = canonical.split(".");
  const tail = rest.length ? "." + rest.join(".") : "";
  const inference = (p: string) => (layout === "rl" ? "inference." + p : p);
  if (head === "islands") return "deployment.num_infer_replicas";
  if (head === "rl_deployment") return "deployment" + tail;
  if (head === "engine_processes" || head === "restart" || head === "idle_release_after")
    return "vllm_fleet." + canonical;
  if (canonical === "router.release") return "vllm_fleet.router_release";
  // prime_engine holds InferenceConfig's own keys, and [vllm_fleet]'s engine and prime_rl_commit.
  if (canonical === "prime_engine.engine") return "vllm_fleet.engine";
  if (canonical === "prime_engine.commit") return "vllm_fleet.prime_rl_commit";
  if (head === "prime_engine") return inference(rest.join("."));
  if (canonical === "vllm_version") return "vllm_fleet.vllm_version";
  if ([...TARGETS, "output_dir", "dry_run"].includes(head)) return canonical;
  if (head === "model")
    return inference(rest[0] === undefined || rest[0] === "name" ? "vllm.model" : `vllm.${rest.join(".")}`);
  if (head === "parallel")
    return inference(
      rest[0] === "tp" ? "vllm.tensor_parallel_size" : rest[0] === "dp" ? "vllm.data_parallel_size" : "vllm",
    );
  if (head === "vllm_extra") return inference("vllm" + tail);
  if (VLLM_CANONICAL_KEYS.has(head)) return inference("vllm." + canonical);
  if (head === "deployment" && rest[0] in PRIME_DEPLOYMENT)
    return inference(["deployment", PRIME_DEPLOYMENT[rest[0]], ...rest.slice(1)].join("."));
  return inference(canonical);
}
