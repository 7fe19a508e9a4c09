/**
 * The test cluster's facts (test/e2e/cluster/up.sh writes them to cluster.env) and the capture of
 * what the Pulumi program hands remote.Command, without vitest: the e2e tests (test/e2e/cluster.ts)
 * and the benchmarks (bench/readiness.ts, plain tsx) share it. Nothing here reads the cluster at
 * import time, so a caller can start the cluster first.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import type { Presence, PresenceJob } from "../../components/host/presence";
import { readsAsPrime } from "../../components/config/load";
import { parseToml } from "../../components/config/toml";
import { installMocks, setConfig, settle, slurmConfig, value, type Registered } from "../program-harness";
import type { Connection } from "./ssh";

export const ROOT = path.resolve(__dirname, "..", "..");
export const STANDINS = path.join(ROOT, "test", "fixtures", "standins", "bin");
export const CLUSTER_ENV_FILE = process.env.FLEET_E2E_ENV ?? "/var/lib/fleet-e2e/cluster.env";

/** cluster.env as a map (shell/dotenv syntax, values optionally double-quoted). */
export function readClusterEnv(file = CLUSTER_ENV_FILE): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line);
    if (m) env[m[1]] = m[2].replace(/^"(.*)"$/, "$1");
  }
  return env;
}

// A type alias, not an interface: it stays assignable to the Record<string, unknown> config shapes.
export type Login = { host: string; port: number; user: string; hostKey: string };

/** The login node as the program's `login` config names it. */
export const loginOf = (env: Record<string, string>): Login => ({
  host: env.FLEET_E2E_SSH_HOST,
  port: Number(env.FLEET_E2E_SSH_PORT),
  user: env.FLEET_E2E_SSH_USER,
  hostKey: env.FLEET_E2E_HOST_KEY,
});

export interface CapturedCommand {
  name: string;
  connection: Connection;
  create: string;
  stdin: string;
  delete: string;
}

/** Whether stacks/<stack>.toml is written in prime-rl's layout (its [slurm] has no launcher or timeouts). */
export function isPrimeStack(stack: string): boolean {
  const file = path.join(ROOT, "stacks", `${stack}.toml`);
  if (!fs.existsSync(file)) return false;
  const parsed = parseToml(fs.readFileSync(file, "utf8"));
  // A stack of services keeps our [slurm] at its top level whatever layout each service is in.
  return parsed.ok && !("services" in parsed.value) && readsAsPrime(parsed.value, path.dirname(file));
}

/**
 * The `overrides` config every e2e stack deploys with: stand-ins, the test partition, short timeouts.
 * A prime-rl-layout stack takes vllm-fleet's own SLURM keys under [vllm_fleet.slurm].
 */
export function standinOverrides(
  partition: string,
  pulumiStack: string,
  extra: Record<string, unknown> = {},
  prime = false,
  binDir = STANDINS,
): Record<string, unknown> {
  const ours = prime ? "vllm_fleet.slurm" : "slurm";
  return {
    [`${ours}.launcher`]: { type: "vllm", bin_dir: binDir },
    "slurm.partition": partition,
    [`${ours}.pending_timeout`]: 60,
    [`${ours}.ready_timeout`]: 90,
    output_dir: `/tmp/fleet-e2e/${pulumiStack}`,
    ...extra,
  };
}

export interface CaptureOptions {
  /** stacks/<stackFile>.toml */
  stackFile: string;
  /** The Pulumi stack name (job names carry it). */
  pulumiStack: string;
  overrides: Record<string, unknown>;
  login: Login;
  privateKey: string;
  /** Pulumi config secrets (apiKey, hfToken) set as `pulumi config set --secret` would. */
  secrets?: Record<string, string>;
  /**
   * Loads index.ts afresh (it reads config and registers resources at import time): vitest's
   * resetModules plus import, or require after dropping the project's modules from require.cache.
   */
  loadProgram: () => Promise<any>;
  /** What the host says of each job before planning (host/presence.ts); never started unless said. */
  presence?: (job: PresenceJob) => Presence | undefined;
}

/** Runs index.ts under mocks and returns the remote.Command inputs it registers, plus its plan. */
export async function captureCommands(o: CaptureOptions): Promise<{ commands: CapturedCommand[]; planned: any }> {
  const registered: Registered[] = installMocks(o.pulumiStack, { presence: o.presence });
  const secretConfig = Object.fromEntries(Object.entries(o.secrets ?? {}).map(([k, v]) => [`vllm-fleet:${k}`, v]));
  setConfig(
    {
      ...slurmConfig({ overrides: o.overrides, stackFile: o.stackFile }, { ...o.login }),
      "vllm-fleet:sshPrivateKey": o.privateKey,
      ...secretConfig,
    },
    ["vllm-fleet:sshPrivateKey", ...Object.keys(secretConfig)],
  );
  const infra = await o.loadProgram();
  const planned = await value(infra.planned);
  await value(infra.islands!);
  await settle(registered);
  const commands = registered
    .filter((r) => r.type === "command:remote:Command")
    .map((r) => ({
      name: r.name,
      connection: r.inputs.connection as Connection,
      create: r.inputs.create,
      stdin: r.inputs.stdin,
      delete: r.inputs.delete,
    }));
  return { commands, planned };
}

/** loadProgram for plain node/tsx: index.ts and every project module it pulls in, loaded anew. */
export async function requireProgramFresh(): Promise<any> {
  const nodeModules = `${path.sep}node_modules${path.sep}`;
  for (const key of Object.keys(require.cache)) {
    if (key.startsWith(ROOT + path.sep) && !key.includes(nodeModules)) delete require.cache[key];
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require("../../index");
}
