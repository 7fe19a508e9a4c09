import { afterEach, describe, expect, it, vi } from "vitest";
import { loadStackFile } from "../components/config/load";
import { plannedStackOutputs } from "../components/outputs";
import { buildStackPlan } from "../components/planner";
import { resolveStackFile } from "../components/stack-file";
import { STACK_NAMES } from "./helpers";
import { drainRpcs, installMocks, isKnown, setConfig, settle, slurmConfig, value } from "./program-harness";

// A finished test's outstanding Pulumi RPCs must not reach the next test's mocks.
afterEach(drainRpcs);

const CREDS = { hfToken: "hf_PREVIEW_token", apiKey: "sk-PREVIEW-key" };

/**
 * `pulumi preview` of a fresh stack: every resource is new, so ids and what providers compute
 * (command stdout, Kubernetes status) are unknown (program-harness.ts previewResult, which cites
 * the providers and the engine). The program must not throw on them, and must not turn them into
 * known values: an output built from an unknown is unknown, not a guess.
 */
describe.each(STACK_NAMES)("%s under `pulumi preview` (unknown ids and computed outputs)", (stack) => {
  it("nothing throws; planned stays known, outputs built from the deployment are unknown", async () => {
    const rejections: unknown[] = [];
    const onRejection = (e: unknown) => rejections.push(e);
    process.on("unhandledRejection", onRejection);
    try {
      const registered = installMocks(stack, { preview: true });
      const k8s = stack.startsWith("k8s-");
      const config: Record<string, string> = k8s ? {} : slurmConfig();
      for (const [k, v] of Object.entries(CREDS)) config[`vllm-fleet:${k}`] = v;
      setConfig(config, ["vllm-fleet:sshPrivateKey", "vllm-fleet:hfToken", "vllm-fleet:apiKey"]);
      vi.resetModules();
      const infra = await import("../index");
      await settle(registered);

      expect(await isKnown(infra.planned)).toBe(true);
      const plan = buildStackPlan(loadStackFile(resolveStackFile(stack).file), stack);
      expect(await value(infra.planned)).toEqual(plannedStackOutputs(plan));
      // Config is known in a preview: the key the trainers need is there.
      expect(await isKnown(infra.apiKey)).toBe(true);
      // Islands wait for the SLURM job's result line or the workloads' ids: neither exists yet.
      expect(await isKnown(infra.islands)).toBe(false);
      expect(await isKnown(infra.endpoints)).toBe(false);

      const custom = registered.filter((r) => r.type.startsWith("kubernetes:") || r.type.startsWith("command:"));
      expect(custom.length).toBeGreaterThan(0);
      if (k8s) {
        // Every object is fully known at preview (the secrets digest comes from config, not from the
        // Secret), so pulumi-kubernetes validates it and dry-runs it on the server (provider.go
        // Check and Create skip both for inputs with computed values).
        for (const r of custom) expect(r.unknownInputs, `${r.type} ${r.name}`).toEqual([]);
      }
      await drainRpcs();
      expect(rejections).toEqual([]);
    } finally {
      process.off("unhandledRejection", onRejection);
    }
  });
});
