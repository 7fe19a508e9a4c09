/**
 * The trainer contract under mocks: `endpoints` for every stack keeps the planner's order, the API
 * key is a secret output, and a trainer stack reads both through a StackReference.
 */
import * as TOML from "@iarna/toml";
import * as k8s from "@pulumi/kubernetes";
import { afterEach, describe, expect, it, vi } from "vitest";
import { parse as parseYaml } from "yaml";
import type { FleetEndpoints } from "../../components/trainer/contract";
import { K8S_STACKS, SLURM_STACKS, singleService, stackPlanOf } from "../helpers";
import {
  drainRpcs,
  installMocks,
  isSecret,
  realUrl,
  type Registered,
  setConfig,
  settle,
  slurmConfig,
  value,
} from "../program-harness";

// A finished test's outstanding Pulumi RPCs must not reach the next test's mocks.
afterEach(drainRpcs);

const API_KEY = "sk-SECRET-contract-key-31c9";

async function program(stack: string, config: Record<string, string>, secretKeys: string[] = []) {
  const registered = installMocks(stack);
  setConfig(config, ["vllm-fleet:sshPrivateKey", ...secretKeys]);
  vi.resetModules();
  const infra = await import("../../index");
  const endpoints = (await value(infra.endpoints)) as FleetEndpoints;
  await settle(registered);
  return { infra, endpoints, registered };
}

const k8sConfig = (extra: Record<string, string> = {}) =>
  Object.fromEntries(Object.entries(extra).map(([k, v]) => [`vllm-fleet:${k}`, v]));

describe("endpoints: the trainer contract every stack exports", () => {
  it.each([...SLURM_STACKS, ...K8S_STACKS])(
    "%s: admin URLs, roles and routers in the planner's order, island by island",
    async (stack) => {
      const config = stack.startsWith("k8s-") ? k8sConfig() : slurmConfig();
      const { infra, endpoints } = await program(stack, config);
      const planned = singleService(await value(infra.planned));
      const show = stack.startsWith("k8s-") ? (u: string) => u : realUrl;
      expect(endpoints.model).toBe(planned.model);
      expect(endpoints.target).toBe(planned.target);
      expect(endpoints.adminUrls).toEqual(planned.islands.flatMap((i) => i.adminUrls.map(show)));
      expect(endpoints.roles).toEqual(planned.islands.flatMap((i) => i.roles));
      // Every engine that serves an API: a node that only joins its head's process group (SGLang's
      // --nnodes) is an engine process of the plan's totals but no URL of its own.
      const headless = stackPlanOf(stack)
        .services[0].islands.flatMap((i) => i.engines)
        .filter((e) => e.headless);
      expect(endpoints.engineCount).toBe(planned.totals.engines - headless.length);
      expect(endpoints.islands.map((i) => i.engineCount)).toEqual(planned.islands.map((i) => i.adminUrls.length));
      const routers = planned.islands.map((i) => (i.routerUrl ? show(i.routerUrl) : null));
      expect(endpoints.islands.map((i) => i.routerUrl)).toEqual(routers);
      // Requests go to each island's router, or to its engines when it has none.
      expect(endpoints.baseUrls).toEqual(planned.islands.flatMap((i, k) => routers[k] ?? i.adminUrls.map(show)));
      expect(endpoints.engine).toBe(stackPlanOf(stack).services[0].engine);
      // prime-rl's orchestrator drives vLLM's (and its own server's) weight updates, not SGLang's.
      if (endpoints.engine === "sglang") {
        expect(endpoints.trainers.primeRl).toBeNull();
      } else {
        const client = (TOML.parse(endpoints.trainers.primeRl!) as any).orchestrator.model.client;
        expect(client).toEqual({ base_url: endpoints.baseUrls, admin_base_url: endpoints.adminUrls });
      }
      expect(endpoints.apiKeyRequired).toBe(false);
    },
  );

  it("disaggregated ×3: 12 engines across 3 islands, 3 routers, P/D metric roles for prime-rl", async () => {
    const { endpoints } = await program("disaggregated-x3", slurmConfig());
    expect(endpoints.islands).toHaveLength(3);
    expect(endpoints.baseUrls).toHaveLength(3);
    const orchestrator = (TOML.parse(endpoints.trainers.primeRl!) as any).orchestrator;
    expect(orchestrator.inference_metrics_roles).toEqual(endpoints.roles);
    expect(endpoints.roles.slice(0, endpoints.islands[0].engineCount)).toEqual(endpoints.islands[0].roles);
    // Each island's own blocks name only that island.
    const island1 = (TOML.parse(endpoints.islands[1].trainers.primeRl!) as any).orchestrator.model.client;
    expect(island1).toEqual({
      base_url: [endpoints.islands[1].routerUrl],
      admin_base_url: endpoints.islands[1].adminUrls,
    });
    const nexrl = parseYaml(endpoints.islands[2].trainers.nexrl).inference_service;
    expect(nexrl.base_url).toBe(endpoints.islands[2].routerUrl!.replace(/\/v1$/, ""));
  });

  it("the API key is a secret output; the blocks point at it without containing it", async () => {
    const { infra, endpoints } = await program("k8s-llm-d", k8sConfig({ apiKey: API_KEY }), ["vllm-fleet:apiKey"]);
    expect(await value(infra.apiKey)).toBe(API_KEY);
    expect(await isSecret(infra.apiKey)).toBe(true);
    expect(await isSecret(infra.endpoints)).toBe(false);
    expect(endpoints.apiKeyRequired).toBe(true);
    expect(JSON.stringify(endpoints)).not.toContain(API_KEY);
    expect(parseYaml(endpoints.trainers.nexrl).inference_service.api_key).toBe("${oc.env:VLLM_API_KEY}");
    expect(endpoints.trainers.openaiEnv).toEqual({ OPENAI_BASE_URL: endpoints.baseUrls[0] });
    // VERL's overrides end up in its printed ray.init kwargs: the key is left to the Ray nodes' environment.
    expect(endpoints.trainers.verl).not.toMatch(/^\+.*OPENAI_API_KEY=/m);
    expect(endpoints.trainers.verl).toMatch(/^\+ray_kwargs\.ray_init\.runtime_env\.env_vars\.OPENAI_BASE_URL=/m);
  });

  it("without a key the outputs say so and no apiKey output exists", async () => {
    const { infra, endpoints } = await program("k8s-single-node", k8sConfig());
    expect(await value(infra.apiKey)).toBeUndefined();
    expect(endpoints.trainers.openaiEnv).toEqual({ OPENAI_BASE_URL: endpoints.baseUrls[0], OPENAI_API_KEY: "EMPTY" });
    expect(parseYaml(endpoints.trainers.nexrl).inference_service.api_key).toBe("EMPTY");
  });
});

describe("a trainer stack reads the fleet through a StackReference", () => {
  /** The fleet stack's outputs as `pulumi stack output --json --show-secrets` would give them. */
  async function fleetOutputs(stack: string) {
    const { infra } = await program(stack, k8sConfig({ apiKey: API_KEY }), ["vllm-fleet:apiKey"]);
    return {
      endpoints: await value(infra.endpoints),
      apiKey: await value(infra.apiKey),
      planned: await value(infra.planned),
    };
  }

  /** A trainer program: its config carries the prime-rl client block, its Secret the key. */
  async function trainerProgram(outputs: Record<string, unknown>, secretOutputNames: string[]) {
    const registered: Registered[] = installMocks("trainer", {
      stackOutputs: { "acme/vllm-fleet/k8s-disaggregated-x3": { outputs, secretOutputNames } },
    });
    setConfig({});
    vi.resetModules();
    const { readFleet } = await import("../../components/trainer/fleet-reference");
    const fleet = readFleet("acme/vllm-fleet/k8s-disaggregated-x3");
    // primeRl is null only on an SGLang fleet (no prime-rl orchestrator can drive it); this one is vLLM.
    new k8s.core.v1.ConfigMap("orchestrator", {
      data: { "client.toml": fleet.endpoints.trainers.primeRl.apply((t) => t ?? "") },
    });
    new k8s.core.v1.Secret("inference-key", { stringData: { VLLM_API_KEY: fleet.apiKey.apply((k) => k ?? "") } });
    return { fleet, registered };
  }

  it("gets the same URLs, in order, and the key as a secret", async () => {
    const fleetSide = await fleetOutputs("k8s-disaggregated-x3");
    const { fleet, registered } = await trainerProgram({ endpoints: fleetSide.endpoints, apiKey: fleetSide.apiKey }, [
      "apiKey",
    ]);
    const endpoints = await value(fleet.endpoints);
    await settle(registered);
    const planned = singleService(fleetSide.planned);
    expect(endpoints.adminUrls).toEqual(planned.islands.flatMap((i) => i.adminUrls));
    expect(endpoints.adminUrls).toHaveLength(planned.totals.engines);
    expect(await value(fleet.apiKey)).toBe(API_KEY);
    expect(await isSecret(fleet.apiKey)).toBe(true);
    const ref = registered.find((r) => r.type === "pulumi:pulumi:StackReference")!;
    expect(ref.inputs.name).toBe("acme/vllm-fleet/k8s-disaggregated-x3");
    const cm = registered.find((r) => r.type === "kubernetes:core/v1:ConfigMap")!;
    expect((TOML.parse(cm.inputs.data["client.toml"]) as any).orchestrator.model.client.admin_base_url).toEqual(
      endpoints.adminUrls,
    );
    const secret = registered.find((r) => r.type === "kubernetes:core/v1:Secret")!;
    expect(secret.inputs.stringData).toEqual({ VLLM_API_KEY: API_KEY });
    expect(secret.secretInputs).toContain("stringData");
  });

  it("a stack without the contract fails with the stack's name and what is wrong", async () => {
    const { parseFleetEndpoints } = await import("../../components/trainer/fleet-reference");
    const fleetSide = await fleetOutputs("k8s-single-node");
    expect(parseFleetEndpoints(fleetSide.endpoints, "acme/vllm-fleet/prod")).toEqual(fleetSide.endpoints);
    expect(() =>
      parseFleetEndpoints({ ...fleetSide.endpoints, adminUrls: "http://x" }, "acme/vllm-fleet/prod"),
    ).toThrow(
      /^stack acme\/vllm-fleet\/prod: its "endpoints" output is not a vllm-fleet trainer contract \(adminUrls: .*expected array/,
    );
    expect(() => parseFleetEndpoints(undefined, "acme/other/prod")).toThrow(/stack acme\/other\/prod: .*\(\(top\): /);
  });

  it("a stack of services: readFleet's service picks one contract; none named, or one it lacks, fails naming them", async () => {
    const { parseFleetEndpoints } = await import("../../components/trainer/fleet-reference");
    const { endpoints } = await fleetOutputs("k8s-policy-and-judge");
    const judge = parseFleetEndpoints(endpoints, "acme/vllm-fleet/rl", "judge");
    if (!("services" in endpoints)) throw new Error("expected the endpoints of a stack of services");
    expect(judge).toEqual(endpoints.services.judge);
    expect(judge.model).toBe("Qwen/Qwen3-8B");
    expect(() => parseFleetEndpoints(endpoints, "acme/vllm-fleet/rl")).toThrow(
      /stack acme\/vllm-fleet\/rl has 2 services \(policy, judge\): name one/,
    );
    expect(() => parseFleetEndpoints(endpoints, "acme/vllm-fleet/rl", "critic")).toThrow(/none is "critic"/);
    const single = (await fleetOutputs("k8s-single-node")).endpoints;
    expect(() => parseFleetEndpoints(single, "acme/vllm-fleet/prod", "judge")).toThrow(
      /has no services: drop service "judge"/,
    );
  });
});
