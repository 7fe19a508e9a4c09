/** The test cluster's facts (test/e2e/cluster/up.sh) and the capture of what the program hands remote.Command. */
import * as fs from "node:fs";
import * as path from "node:path";
import { expect, vi } from "vitest";
import { stringify as toYaml } from "yaml";
import { installMocks, setConfig, settle, slurmConfig, value, type Registered } from "../program-harness";
import type { Connection, RemoteRun } from "./ssh";

export const ROOT = path.resolve(__dirname, "..", "..");
export const STANDINS = path.join(ROOT, "test", "fixtures", "standins", "bin");
const ENV_FILE = process.env.FLEET_E2E_ENV ?? "/var/lib/fleet-e2e/cluster.env";
/** vLLM stand-ins listen after this delay (their default), standing for weight loading. */
export const STANDIN_STARTUP_DELAY_MS = 300;

function clusterEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of fs.readFileSync(ENV_FILE, "utf8").split("\n")) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line);
    if (m) env[m[1]] = m[2].replace(/^"(.*)"$/, "$1");
  }
  return env;
}

export const env = clusterEnv();
export const login = { host: env.FLEET_E2E_SSH_HOST, port: Number(env.FLEET_E2E_SSH_PORT), user: env.FLEET_E2E_SSH_USER, hostKey: env.FLEET_E2E_HOST_KEY };
export const privateKey = fs.readFileSync(env.FLEET_E2E_SSH_KEY, "utf8");

export interface CapturedCommand {
  name: string;
  connection: Connection;
  create: string;
  stdin: string;
  delete: string;
}

/** The `overrides` config every e2e stack deploys with: stand-ins, the test partition, short timeouts. */
export function e2eOverrides(pulumiStack: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    "slurm.launcher": { type: "vllm", bin_dir: STANDINS },
    "slurm.partition": env.FLEET_E2E_PARTITION,
    "slurm.pending_timeout": 60,
    "slurm.ready_timeout": 90,
    output_dir: `/tmp/fleet-e2e/${pulumiStack}`,
    ...extra,
  };
}

/**
 * Runs index.ts under mocks for `stack` and returns the remote.Command inputs it registers.
 * `secrets` are Pulumi config secrets (apiKey, hfToken) set as `pulumi config set --secret` would.
 */
export async function capture(stack: string, extra: Record<string, unknown> = {}, pulumiStack = stack, secrets: Record<string, string> = {}): Promise<{ commands: CapturedCommand[]; planned: any }> {
  const registered: Registered[] = installMocks(pulumiStack);
  const overrides = e2eOverrides(pulumiStack, extra);
  const secretConfig = Object.fromEntries(Object.entries(secrets).map(([k, v]) => [`vllm-fleet:${k}`, v]));
  setConfig({ ...slurmConfig({ overrides, stackFile: stack }, login), "vllm-fleet:sshPrivateKey": privateKey, ...secretConfig }, ["vllm-fleet:sshPrivateKey", ...Object.keys(secretConfig)]);
  vi.resetModules();
  const infra = await import("../../index");
  const planned = await value(infra.planned);
  await value(infra.islands!);
  await settle(registered);
  const commands = registered
    .filter((r) => r.type === "command:remote:Command")
    .map((r) => ({ name: r.name, connection: r.inputs.connection as Connection, create: r.inputs.create, stdin: r.inputs.stdin, delete: r.inputs.delete }));
  return { commands, planned };
}


/**
 * Pulumi.<stack>.yaml in `dir` as `pulumi config set` writes it: the fleet CLI reads stackFile,
 * overrides and login from it (the key is only a placeholder; the CLI gets it with -i).
 */
export function pulumiConfig(dir: string, pulumiStack: string, stackFile: string, extra: Record<string, unknown> = {}, loginConfig: Record<string, unknown> = login): string {
  const file = path.join(dir, `Pulumi.${pulumiStack}.yaml`);
  const config = { "vllm-fleet:stackFile": stackFile, "vllm-fleet:overrides": e2eOverrides(pulumiStack, extra), "vllm-fleet:login": loginConfig, "vllm-fleet:sshPrivateKey": { secure: "v1:AAAA" } };
  fs.writeFileSync(file, toYaml({ config }));
  return file;
}

export function expectOk(run: RemoteRun, what: string) {
  expect(run.code, `${what} failed (exit ${run.code}); stderr:\n${run.stderr}`).toBe(0);
}
