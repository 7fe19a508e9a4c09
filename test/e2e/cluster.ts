/** The test cluster's facts (test/e2e/cluster/up.sh) and the capture of what the program hands remote.Command. */
import * as fs from "node:fs";
import * as path from "node:path";
import { expect, vi } from "vitest";
import { stringify as toYaml } from "yaml";
import {
  captureCommands,
  isPrimeStack,
  loginOf,
  readClusterEnv,
  standinOverrides,
  type CaptureOptions,
  type CapturedCommand,
} from "./program-capture";
import { main as fleet } from "../../bin/fleet";
import type { FleetStatusReport } from "../../components/ops/commands";
import { suiteBinDir } from "./real-parts";
import type { RemoteRun } from "./ssh";

export { ROOT, STANDINS, type CapturedCommand } from "./program-capture";
/** vLLM stand-ins listen after this delay (their default), standing for weight loading. */
export const STANDIN_STARTUP_DELAY_MS = 300;

export const env = readClusterEnv();
export const login = loginOf(env);
export const privateKey = fs.readFileSync(env.FLEET_E2E_SSH_KEY, "utf8");

/**
 * The `overrides` config every e2e stack deploys with: the launcher folder of suiteBinDir (the real
 * vllm-router and Mooncake, stand-in engines), the test partition, short timeouts.
 */
export function e2eOverrides(
  pulumiStack: string,
  extra: Record<string, unknown> = {},
  stack = pulumiStack,
): Record<string, unknown> {
  return standinOverrides(env.FLEET_E2E_PARTITION, pulumiStack, extra, isPrimeStack(stack), suiteBinDir());
}

/**
 * Runs index.ts under mocks for `stack` and returns the remote.Command inputs it registers.
 * `secrets` are Pulumi config secrets (apiKey, hfToken) set as `pulumi config set --secret` would.
 */
export function capture(
  stack: string,
  extra: Record<string, unknown> = {},
  pulumiStack = stack,
  secrets: Record<string, string> = {},
  presence?: CaptureOptions["presence"],
): Promise<{ commands: CapturedCommand[]; planned: any }> {
  return captureCommands({
    stackFile: stack,
    pulumiStack,
    overrides: e2eOverrides(pulumiStack, extra, stack),
    login,
    privateKey,
    secrets,
    presence,
    loadProgram: async () => {
      vi.resetModules();
      return import("../../index");
    },
  });
}

/**
 * Pulumi.<stack>.yaml in `dir` as `pulumi config set` writes it: the fleet CLI reads stackFile,
 * overrides and login from it (the key is only a placeholder; the CLI gets it with -i).
 */
export function pulumiConfig(
  dir: string,
  pulumiStack: string,
  stackFile: string,
  extra: Record<string, unknown> = {},
  loginConfig: Record<string, unknown> = login,
  overrides: Record<string, unknown> = e2eOverrides(pulumiStack, extra, stackFile),
): string {
  const file = path.join(dir, `Pulumi.${pulumiStack}.yaml`);
  const config = {
    "vllm-fleet:stackFile": stackFile,
    "vllm-fleet:overrides": overrides,
    "vllm-fleet:login": loginConfig,
    "vllm-fleet:sshPrivateKey": { secure: "v1:AAAA" },
  };
  fs.writeFileSync(file, toYaml({ config }));
  return file;
}

export function expectOk(run: RemoteRun, what: string) {
  expect(run.code, `${what} failed (exit ${run.code}); stderr:\n${run.stderr}`).toBe(0);
}

/** `fleet status <stack> --json` in-process, with the stack's config written under `dir`: its exit code, report and stderr. */
export async function fleetStatusIn(
  dir: string,
  pulumiStack: string,
  stackFile: string,
  extra: Record<string, unknown> = {},
): Promise<{ code: number; report?: FleetStatusReport; err: string }> {
  const cfg = pulumiConfig(dir, pulumiStack, stackFile, extra);
  let out = "";
  let err = "";
  const code = await fleet(
    ["status", pulumiStack, "--json", "--pulumi-config", cfg, "-i", env.FLEET_E2E_SSH_KEY],
    (s) => (out += s),
    (s) => (err += s),
  );
  return { code, err, ...(out ? { report: JSON.parse(out) as FleetStatusReport } : {}) };
}
