import * as TOML from "@iarna/toml";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { fleetEndpoints } from "../components/outputs";

const plan = { model: "Qwen/Qwen3-8B", target: "slurm" as const, engine: "vllm" as const };

describe("fleetEndpoints and the trainer blocks", () => {
  it("a router-less island is served by its engines; a routed one by its router", () => {
    const e = fleetEndpoints(
      plan,
      [
        {
          island: 0,
          routerUrl: null,
          adminUrls: ["http://10.0.0.1:8100/v1", "http://10.0.0.1:8101/v1"],
          roles: ["replica", "replica"],
        },
        { island: 1, routerUrl: "http://10.0.0.2:8000/v1", adminUrls: ["http://10.0.0.2:8100/v1"], roles: ["replica"] },
      ],
      false,
    );
    expect(e.baseUrls).toEqual(["http://10.0.0.1:8100/v1", "http://10.0.0.1:8101/v1", "http://10.0.0.2:8000/v1"]);
    expect(e.adminUrls).toEqual(["http://10.0.0.1:8100/v1", "http://10.0.0.1:8101/v1", "http://10.0.0.2:8100/v1"]);
    expect(e.engineCount).toBe(3);
    expect(e.islands.map((i) => i.engineCount)).toEqual([2, 1]);
    expect(e.trainers.primeRl).toBe(
      [
        "[orchestrator.model.client]",
        "base_url = [",
        '  "http://10.0.0.1:8100/v1",',
        '  "http://10.0.0.1:8101/v1",',
        '  "http://10.0.0.2:8000/v1"',
        "]",
        "admin_base_url = [",
        '  "http://10.0.0.1:8100/v1",',
        '  "http://10.0.0.1:8101/v1",',
        '  "http://10.0.0.2:8100/v1"',
        "]",
        "",
      ].join("\n"),
    );
    // Replicas have no metric roles; prime-rl only takes prefill/decode there.
    expect((TOML.parse(e.trainers.primeRl!) as any).orchestrator.inference_metrics_roles).toBeUndefined();
    expect(parseYaml(e.islands[1].trainers.nexrl)).toEqual({
      inference_service: {
        api_key: "EMPTY",
        base_url: "http://10.0.0.2:8000",
        model: "Qwen/Qwen3-8B",
        tokenizer: "Qwen/Qwen3-8B",
        freeze_for_weight_sync: true,
      },
    });
    expect(e.islands[0].trainers.openaiEnv).toEqual({
      OPENAI_BASE_URL: "http://10.0.0.1:8100/v1",
      OPENAI_API_KEY: "EMPTY",
    });
  });

  it("a dry run (no URLs yet) gives empty lists, not a broken block", () => {
    const e = fleetEndpoints(plan, [{ island: 0, routerUrl: null, adminUrls: [], roles: [] }], false);
    expect(e).toMatchObject({ baseUrls: [], adminUrls: [], engineCount: 0 });
    expect(parseYaml(e.trainers.nexrl).inference_service.base_url).toBeNull();
    expect(e.trainers.openaiEnv).toEqual({ OPENAI_API_KEY: "EMPTY" });
  });
});
