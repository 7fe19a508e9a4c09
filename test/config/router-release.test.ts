/**
 * router.release: which vllm-router build the launcher provides (vllm-router-releases.json). A
 * policy only PrimeIntellect's router v0.2.1 has (sticky_least_loaded, least_loaded) loads in every
 * layout, and plans only where that release is configured or, in prime-rl's layout, where no
 * release is named (the one release serving it is implied); the refusals are in the invalid corpus
 * (rule-router-release-*.toml).
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_ROUTER_RELEASE, ROUTER_POLICIES } from "../../components/config/schema/router";
import { issuesOf, load, plan, SLURM } from "../helpers";

const V021 = "primeintellect-v0.2.1";

/** The first island's vllm-router command line. */
function routerArgv(text: string): unknown[] {
  const r = plan(text).islands[0].router!;
  if (r.kind === "llm-d") throw new Error("not an HTTP router");
  return r.argv;
}

/** The same fleet in each layout, with the policy and (when given) the release where that layout keeps it. */
const LAYOUTS: Record<string, (policy: string, release?: string) => string> = {
  older: (policy, release) =>
    `[model]\nname = "Qwen/Qwen3-8B"\n[deployment]\ntype = "multi_node"\n[deployment.router]\npolicy = "${policy}"\n${release ? `release = "${release}"\n` : ""}${SLURM}`,
  "older RL": (policy, release) =>
    `[inference]\nmodel = "Qwen/Qwen3-8B"\n[inference.deployment]\ntype = "multi_node"\n[inference.deployment.router]\npolicy = "${policy}"\n${release ? `release = "${release}"\n` : ""}${SLURM}`,
  "prime-rl": (policy, release) =>
    `[vllm]\nmodel = "Qwen/Qwen3-8B"\n[deployment]\ntype = "multi_node"\n[router]\npolicy = "${policy}"\n${release ? `[vllm_fleet]\nrouter_release = "${release}"\n` : ""}${SLURM}`,
  "prime-rl RL": (policy, release) =>
    `[model]\nname = "Qwen/Qwen3-8B"\n[orchestrator]\n[deployment]\ntype = "multi_node"\nnum_train_nodes = 1\n[inference.router]\npolicy = "${policy}"\n${release ? `[vllm_fleet]\nrouter_release = "${release}"\n` : ""}${SLURM}`,
};

const policyPath: Record<string, string> = {
  older: "deployment.router.policy",
  "older RL": "inference.deployment.router.policy",
  "prime-rl": "router.policy",
  "prime-rl RL": "inference.router.policy",
};

describe("router.release", () => {
  it("defaults to the pinned upstream, and the schema takes every build's policies", () => {
    expect(DEFAULT_ROUTER_RELEASE).toBe("vllm-router-0.1.17");
    expect(load(LAYOUTS.older("consistent_hash")).router).toMatchObject({ release: DEFAULT_ROUTER_RELEASE });
    expect(ROUTER_POLICIES).toEqual(expect.arrayContaining(["sticky_least_loaded", "least_loaded", "consistent_hash"]));
  });

  for (const [layout, text] of Object.entries(LAYOUTS)) {
    for (const policy of ["sticky_least_loaded", "least_loaded"]) {
      it(`${layout}: ${policy} loads and plans with release ${V021}`, () => {
        const cfg = load(text(policy, V021));
        expect(cfg.router).toMatchObject({ type: "vllm-router", policy, release: V021 });
        expect(routerArgv(text(policy, V021)).slice(0, 3)).toEqual(["vllm-router", "--policy", policy]);
      });

      // A prime-rl file naming no release plans with the one release serving the policy (prime-rl installs it).
      if (layout.startsWith("prime-rl"))
        it(`${layout}: ${policy} with no release plans with ${V021}, and the notes say so`, () => {
          const cfg = load(text(policy));
          expect(cfg.router).toMatchObject({ type: "vllm-router", policy, release: V021 });
          expect(cfg.notes.join("\n")).toContain(`router policy "${policy}" is served only by`);
        });

      const refusedWith = layout.startsWith("prime-rl") ? DEFAULT_ROUTER_RELEASE : undefined;
      it(`${layout}: ${policy} is refused with the ${refusedWith ? "named upstream" : "default"} release, at the policy`, () => {
        const issues = issuesOf(text(policy, refusedWith));
        expect(issues.map((i) => i.path)).toEqual([policyPath[layout]]);
        expect(issues[0].message).toContain(`needs PrimeIntellect's router v0.2.1`);
        expect(issues[0].message).toContain(`= "${V021}"`);
      });
    }
  }

  it("the pinned upstream's policies plan with either release", () => {
    for (const release of [undefined, V021])
      expect(routerArgv(LAYOUTS.older("round_robin", release)).slice(1, 3)).toEqual(["--policy", "round_robin"]);
  });
});
