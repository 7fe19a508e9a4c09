import { rlLayout } from "./schema/layouts";

/**
 * Translates canonical config paths (the standalone layout's names) into the TOML path the user
 * actually wrote, so every error names a key that exists in their file.
 */
export class UserPaths {
  private readonly exact = new Map<string, string>();

  constructor(public readonly layout: "standalone" | "rl") {}

  /** Records where a canonical key came from when the layout alone cannot tell. */
  record(canonical: string, user: string): void {
    this.exact.set(canonical, user);
  }

  user(canonical: string): string {
    const hit = this.exact.get(canonical);
    if (hit !== undefined) return hit;
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
const TOP_LEVEL_IN_RL = new Set(Object.keys(rlLayout.shape).filter((k) => !["inference", "model", "deployment"].includes(k)));
