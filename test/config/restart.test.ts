/**
 * The `restart` table (issue 41): its defaults, its home in each layout ([restart], [inference.restart],
 * prime-rl's [vllm_fleet.restart]), a stack's table as every service's default that a service's own
 * replaces, refusals naming the key, and what the plan hands the keeper.
 */
import { describe, expect, it } from "vitest";
import { loadStackText } from "../../components/config";
import { buildPlan } from "../../components/planner";
import { issuesOf, load, stackText } from "../helpers";

const STANDALONE = `[model]\nname = "Qwen/Qwen3-8B"\n[slurm]\njob_name = "r"\npartition = "cluster"\n`;

describe("restart", () => {
  it("defaults: 5 restarts within an hour, 0.5 s doubling up to 60 s; the plan counts in tenths of a second", () => {
    const cfg = load(stackText("single-node"));
    expect(cfg.restart).toEqual({ max_restarts: 5, window: 3600, backoff: 0.5, max_backoff: 60 });
    expect(buildPlan(cfg, "dev").restart).toEqual({ maxRestarts: 5, windowS: 3600, backoffDs: 5, maxBackoffDs: 600 });
  });

  it("lives at the root of a standalone file, under [inference] in the RL layout, in [vllm_fleet] in prime-rl's", () => {
    expect(load(`${STANDALONE}[restart]\nmax_restarts = 0\n`).restart.max_restarts).toBe(0);
    expect(load(`${stackText("multi-replica")}\n[inference.restart]\nwindow = 60\n`).restart.window).toBe(60);
    const prime = load(`${stackText("prime-single-node")}\n[vllm_fleet.restart]\nbackoff = 2\n`);
    expect(prime.restart).toMatchObject({ backoff: 2, max_restarts: 5 });
    // In the RL layout the root is not its home, and the message says where it goes.
    expect(issuesOf(`${stackText("multi-replica")}\n[restart]\nmax_restarts = 1\n`)).toEqual([
      expect.objectContaining({ path: "restart", message: expect.stringContaining("belongs under [inference]") }),
    ]);
  });

  it("refuses what it cannot mean, naming the key", () => {
    const by = (text: string) => Object.fromEntries(issuesOf(text).map((i) => [i.path, i.message]));
    expect(by(`${STANDALONE}[restart]\nmax_restarts = -1\nbackoff = 0\nwindow = 0.05\nmax_backof = 3\n`)).toEqual({
      "restart.max_restarts": expect.stringContaining("must be >= 0"),
      "restart.backoff": expect.stringContaining("must be > 0 seconds"),
      "restart.window": expect.stringContaining("whole number of tenths of a second"),
      "restart.max_backof": expect.stringMatching(/unknown key "max_backof" \(did you mean "max_backoff"\?\)/),
    });
    expect(by(`${STANDALONE}[restart]\nmax_restarts = 2.5\n`)).toEqual({
      "restart.max_restarts": "must be a whole number",
    });
  });

  it("a stack's [restart] is every service's default (prime-rl's layout too); a service's own replaces it", () => {
    const text = `[slurm]\njob_name = "pj"\npartition = "cluster"\n[restart]\nmax_restarts = 1\n
[services.policy]
model = "Qwen/Qwen3-32B"
[services.policy.restart]
max_restarts = 9
[services.judge]
model = "Qwen/Qwen3-8B"
[services.legacy.vllm]
model = "Qwen/Qwen3-8B"
`;
    const services = loadStackText(text, "t.toml");
    expect(Object.fromEntries(services.map((s) => [s.service, s.restart.max_restarts]))).toEqual({
      policy: 9,
      judge: 1,
      legacy: 1,
    });
    // Replaced whole: the service's table leaves the rest at the defaults.
    expect(services.find((s) => s.service === "policy")!.restart.window).toBe(3600);
  });

  it("on Kubernetes a [restart] the file sets is noted as the host targets' (the kubelet restarts containers)", () => {
    const k8s = stackText("k8s-single-node");
    expect(load(k8s).notes.join("\n")).not.toContain("kubelet restarts");
    const noted = load(
      `${k8s}\n${/^\[inference\]/m.test(k8s) ? "[inference.restart]" : "[restart]"}\nmax_restarts = 2\n`,
    );
    expect(noted.notes.join("\n")).toMatch(
      /restart applies on SLURM and the local target: on Kubernetes the kubelet restarts/,
    );
  });
});
