/**
 * A whole RL file as prime-rl's docs/inference.md wrote one (test/fixtures/rl-whole-file, assembled
 * from that page's blocks) in its own, older layout: [inference] model = "..." and [inference.parallel] decide the layout, not the RL
 * tables ([trainer], [orchestrator], the top-level [deployment]) beside them, which are accepted
 * and listed as ignored. The values it plans are the ones the page states.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { readsAsPrime } from "../../components/config/load";
import { parseToml } from "../../components/config/toml";
import { issuesOf, load, plan, ROOT } from "../helpers";

const FILE = path.join(ROOT, "test/fixtures/rl-whole-file/docs-disaggregated-x3.toml");
const TEXT = fs.readFileSync(FILE, "utf8");

const asPrime = (text: string) => {
  const parsed = parseToml(text);
  if (!parsed.ok) throw new Error(parsed.issue.message);
  return readsAsPrime(parsed.value);
};

describe("a whole RL file in prime-rl's docs' older layout", () => {
  it("is read in the older layout, its RL tables accepted and listed as ignored", () => {
    expect(asPrime(TEXT)).toBe(false);
    const cfg = load(TEXT);
    expect(cfg.prime_rl).toBeUndefined();
    expect(cfg.ignored).toEqual(["orchestrator"]);
    expect(cfg.notes.join("\n")).toMatch(/ignored \(.*\): orchestrator/);
    // [trainer] enable_router_replay is read: routed experts on.
    expect(cfg.enable_return_routed_experts).toBe(true);
    expect(cfg.model.name).toBe("PrimeIntellect/INTELLECT-3");
    expect(cfg.parallel.tp).toBe(2);
  });

  it("plans 3 replicas of 6 nodes: 18 nodes behind 3 vllm-routers", () => {
    const p = plan(TEXT);
    expect(p.shape).toBe("disaggregated");
    expect(p.islands).toHaveLength(3);
    expect(p.islands.map((i) => i.nodes.length)).toEqual([6, 6, 6]);
    expect(p.totals).toMatchObject({ nodes: 18, routers: 3 });
    // 2 prefill replicas of 2 nodes, 1 decode replica of 2 nodes.
    expect(p.islands[0].nodes.map((n) => n.role)).toEqual([
      "prefill",
      "prefill",
      "prefill",
      "prefill",
      "decode",
      "decode",
    ]);
    expect(p.islands.every((i) => i.router?.kind === "vllm-router")).toBe(true);
  });

  it("the RL tables with prime-rl's [vllm] still read as prime-rl's layout", () => {
    const prime = TEXT.replace(
      /^\[inference\]$[\s\S]*?(?=^\[inference\.deployment\]$)/m,
      "[inference.vllm]\ntensor_parallel_size = 2\n\n",
    );
    expect(asPrime(prime)).toBe(true);
    // And mixing the layouts under [inference] is still refused, naming both.
    const mixed = TEXT.replace(
      /^\[inference\.parallel\]$/m,
      "[inference.vllm]\nenforce_eager = true\n\n[inference.parallel]",
    );
    expect(issuesOf(mixed).map((i) => i.path)).toEqual([
      "inference.model",
      "inference.parallel",
      "inference.enable_return_routed_experts",
    ]);
  });

  it("an unknown key in [trainer] beside enable_router_replay is the trainer's: ignored", () => {
    const cfg = load(TEXT.replace("enable_router_replay = true", "enable_router_replay = true\nlearning_rate = 1e-6"));
    expect(cfg.ignored).toEqual(["trainer.learning_rate", "orchestrator"]);
  });
});
