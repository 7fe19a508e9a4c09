/**
 * The local target under Pulumi's mocks (issue 27): one local.Command per island, its credentials
 * in a secret `environment` and nowhere else; and the environment itself (secretEnvironment), which
 * refuses a credential that is not one line of text naming its config key, as on SLURM
 * (components/credentials.ts secretValueProblem).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { secretEnvironment } from "../../components/local";
import { drainRpcs, installMocks, setConfig, settle, value, type Registered } from "../program-harness";

afterEach(drainRpcs);

async function program(secrets: Record<string, string>) {
  const registered: Registered[] = installMocks("dev");
  const config: Record<string, string> = { "vllm-fleet:stackFile": "local-multi-replica" };
  for (const [k, v] of Object.entries(secrets)) config[`vllm-fleet:${k}`] = v;
  setConfig(
    config,
    Object.keys(secrets).map((k) => `vllm-fleet:${k}`),
  );
  vi.resetModules();
  const infra = await import("../../index");
  return { infra, registered };
}

describe("the local target's Pulumi program", () => {
  it("registers one local.Command whose credentials are a secret environment, in no command and no script", async () => {
    const key = "sk-local-program-key";
    const { infra, registered } = await program({ apiKey: key, hfToken: "hf_program_token" });
    await value(infra.islands);
    await settle(registered);
    const runs = registered.filter((r) => r.type === "command:local:Command");
    expect(runs).toHaveLength(1);
    const run = runs[0];
    expect(run.secretInputs).toContain("environment");
    expect(run.inputs.environment).toEqual({ FLEET_SECRET_API_KEY: key, FLEET_SECRET_HF_TOKEN: "hf_program_token" });
    for (const field of ["create", "stdin", "delete"]) expect(String(run.inputs[field])).not.toContain(key);
    expect(run.options.deleteBeforeReplace).toBe(true);
  });

  it.each([
    ["a line break", "sk-one\nsk-two", "a line break or NUL byte"],
    ["a carriage return", "sk-one\r", "a line break or NUL byte"],
    ["no characters", "", "no characters"],
  ])("refuses an API key with %s, naming vllm-fleet:apiKey and never the value", (_, key, problem) => {
    const configKey = (n: string) => `vllm-fleet:${n}`;
    expect(() => secretEnvironment({ apiKey: key, hfToken: "hf_ok" }, configKey)).toThrow(
      new Error(`vllm-fleet:apiKey must be one non-empty line of text (it has ${problem})`),
    );
  });

  it("puts each credential under its own variable", () => {
    expect(secretEnvironment({ hfToken: "hf", apiKey: "sk" }, (n) => n)).toEqual({
      FLEET_SECRET_HF_TOKEN: "hf",
      FLEET_SECRET_API_KEY: "sk",
    });
  });
});
