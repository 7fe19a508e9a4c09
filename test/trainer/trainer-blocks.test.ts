/**
 * The trainer blocks per engine, and the VERL block against VERL's own config keys
 * (fixtures/verl-config-keys.json, derived from volcengine/verl's generated PPO config at the
 * commit it names).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as TOML from "@iarna/toml";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import {
  fleetEndpointsSchema,
  TRAINER_ENGINES,
  trainerBlocksSchema,
  type TrainerEngine,
} from "../../components/trainer/contract";
import { trainerBlocks, type TrainerBlockInput } from "../../components/trainer/trainer-blocks";

interface VerlKeys {
  commit: string;
  file: string;
  subtrees: string[];
  declared: string[];
  readByCode: { key: string; where: string; anyChild?: boolean }[];
}

const verlKeys: VerlKeys = JSON.parse(
  fs.readFileSync(path.join(__dirname, "fixtures", "verl-config-keys.json"), "utf8"),
);

/** Each engine's admin base, as the lead's outputs pass it: vLLM and prime-rl under /v1, SGLang at the root. */
const ADMIN: Record<TrainerEngine, string[]> = {
  vllm: ["http://10.0.0.1:8100/v1", "http://10.0.0.2:8100/v1"],
  "prime-rl": ["http://10.0.0.1:8100/v1", "http://10.0.0.2:8100/v1"],
  sglang: ["http://10.0.0.1:30000", "http://10.0.0.2:30000"],
};

const input = (engine: TrainerEngine, over: Partial<TrainerBlockInput> = {}): TrainerBlockInput => ({
  engine,
  model: "Qwen/Qwen3-0.6B",
  baseUrls: ["http://10.0.0.1:8000/v1"],
  adminUrls: ADMIN[engine],
  roles: ["replica", "replica"],
  apiKeyRequired: false,
  ...over,
});

/** A Hydra override line: `key=value` or, for a key the defaults do not declare, `+key=value`. */
function overrides(block: string): { append: boolean; key: string; value: string }[] {
  return block
    .split("\n")
    .filter((l) => l.trim() !== "" && !l.startsWith("#"))
    .map((line) => {
      const m = /^(\+?)([A-Za-z_][\w.]*)=(.*)$/.exec(line);
      if (!m) throw new Error(`not a Hydra override: ${line}`);
      return { append: m[1] === "+", key: m[2], value: m[3] };
    });
}

/** Whether VERL's code reads the key although its YAML does not declare it (fixture `readByCode`). */
function readByCode(key: string): boolean {
  return verlKeys.readByCode.some(
    (r) => r.key === key || (r.anyChild && key.startsWith(`${r.key}.`) && !key.slice(r.key.length + 1).includes(".")),
  );
}

describe("the VERL block", () => {
  it("uses only keys VERL has at the pinned commit: declared ones plainly, code-read ones with Hydra's +", () => {
    const declared = new Set(verlKeys.declared);
    for (const apiKeyRequired of [false, true]) {
      const lines = overrides(trainerBlocks(input("sglang", { apiKeyRequired })).verl);
      expect(lines.length).toBeGreaterThan(0);
      for (const { append, key } of lines) {
        if (append) {
          // Hydra refuses `+` on a declared key, and an undeclared key without `+`.
          expect(declared.has(key), key).toBe(false);
          expect(readByCode(key), `${key} is read by VERL's code (fixture readByCode)`).toBe(true);
          // ...under a table VERL's YAML declares.
          expect(declared.has(key.split(".").slice(0, 2).join(".")), key).toBe(true);
        } else {
          expect(declared.has(key), `${key} is declared in ${verlKeys.file}`).toBe(true);
        }
      }
    }
  });

  it("hands every VERL Ray worker the fleet's OpenAI endpoint, never the key", () => {
    const open = overrides(trainerBlocks(input("vllm")).verl);
    expect(Object.fromEntries(open.map((o) => [o.key.split(".").pop(), o.value]))).toEqual({
      OPENAI_BASE_URL: "http://10.0.0.1:8000/v1",
      OPENAI_API_KEY: "EMPTY",
    });
    const keyed = trainerBlocks(input("vllm", { apiKeyRequired: true })).verl;
    expect(overrides(keyed).map((o) => o.key.split(".").pop())).toEqual(["OPENAI_BASE_URL"]);
    // Where the key goes instead, in words.
    expect(keyed).toMatch(/^# Set OPENAI_API_KEY in the Ray nodes' environment/m);
  });

  it("says VERL's rollout cannot use the fleet, and points no rollout key at it", () => {
    const block = trainerBlocks(input("sglang")).verl;
    expect(block).toMatch(/^# VERL starts and updates its own rollout engines/m);
    expect(overrides(block).filter((o) => o.key.startsWith("actor_rollout_ref."))).toEqual([]);
  });

  it("the finding it rests on: VERL's rollout config has no key for a server address at the pinned commit", () => {
    expect(verlKeys.commit).toMatch(/^[0-9a-f]{40}$/);
    const rollout = verlKeys.declared.filter((k) => k.startsWith("actor_rollout_ref.rollout."));
    expect(rollout.length).toBeGreaterThan(50);
    // custom_async_server names a server class (path, name) and is read nowhere in verl/ at that commit.
    expect(rollout.filter((k) => /url|address|endpoint|host|server/i.test(k))).toEqual([
      "actor_rollout_ref.rollout.agent.custom_async_server",
      "actor_rollout_ref.rollout.agent.custom_async_server.path",
      "actor_rollout_ref.rollout.agent.custom_async_server.name",
    ]);
  });
});

describe("the blocks per engine", () => {
  it.each(TRAINER_ENGINES)("%s: the blocks fit the contract's schema", (engine) => {
    expect(() => trainerBlocksSchema.parse(trainerBlocks(input(engine)))).not.toThrow();
  });

  it.each(["vllm", "prime-rl"] as const)("%s: prime-rl's client gets every engine's admin base", (engine) => {
    const client = (TOML.parse(trainerBlocks(input(engine)).primeRl!) as any).orchestrator.model.client;
    expect(client).toEqual({ base_url: ["http://10.0.0.1:8000/v1"], admin_base_url: ADMIN[engine] });
  });

  it("sglang: no prime-rl block, since prime-rl's orchestrator cannot update SGLang's weights", () => {
    expect(trainerBlocks(input("sglang")).primeRl).toBeNull();
    // Not even for P/D, where the block would otherwise carry the roles.
    expect(trainerBlocks(input("sglang", { roles: ["prefill", "decode"] })).primeRl).toBeNull();
  });

  it("NexRL, VERL and the OpenAI env are engine-neutral: the same for every engine", () => {
    const neutral = (engine: TrainerEngine) => {
      const { nexrl, verl, openaiEnv } = trainerBlocks(input(engine));
      return { nexrl, verl, openaiEnv };
    };
    expect(neutral("sglang")).toEqual(neutral("vllm"));
    expect(neutral("prime-rl")).toEqual(neutral("vllm"));
    const nexrl = parseYaml(neutral("sglang").nexrl).inference_service;
    expect(nexrl.base_url).toBe("http://10.0.0.1:8000");
    expect(nexrl.freeze_for_weight_sync).toBe(true);
  });
});

describe("the contract names the engine", () => {
  const contract = (engine: string) => {
    const blocks = trainerBlocks(input("sglang"));
    return {
      model: "Qwen/Qwen3-0.6B",
      target: "slurm",
      engine,
      baseUrls: ["http://10.0.0.1:8000/v1"],
      adminUrls: ADMIN.sglang,
      roles: ["replica", "replica"],
      engineCount: 2,
      apiKeyRequired: false,
      islands: [
        {
          island: 0,
          model: "Qwen/Qwen3-0.6B",
          routerUrl: "http://10.0.0.1:8000/v1",
          adminUrls: ADMIN.sglang,
          roles: ["replica", "replica"],
          engineCount: 2,
          trainers: blocks,
        },
      ],
      trainers: blocks,
    };
  };

  it("accepts an SGLang fleet, with its admin bases at the root and no prime-rl block", () => {
    const parsed = fleetEndpointsSchema.parse(contract("sglang"));
    expect(parsed.engine).toBe("sglang");
    expect(parsed.trainers.primeRl).toBeNull();
  });

  it("refuses a contract without an engine, or with one it does not know", () => {
    const { engine: _, ...without } = contract("sglang");
    expect(fleetEndpointsSchema.safeParse(without).success).toBe(false);
    expect(fleetEndpointsSchema.safeParse(contract("tgi")).success).toBe(false);
  });
});
