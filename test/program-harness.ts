/**
 * Runs the Pulumi program (index.ts) under Pulumi's mocks and records what it registers: every
 * resource's inputs plus the resource options the engine would act on (replaceOnChanges,
 * deleteBeforeReplace, customTimeouts), which the mocks API alone does not expose.
 */
import * as pulumi from "@pulumi/pulumi";
import { parse as shellParse } from "shell-quote";
import { NEVER_STARTED, observeInTests, type Presence, type PresenceJob } from "../components/host/presence";
import { readReleasesInTests, type ClusterReader } from "../components/kubernetes";

export interface Registered {
  type: string;
  name: string;
  /** Inputs with secrets unwrapped (unknowns, in a preview, as UNKNOWN); `secretInputs` says which top-level inputs were secret. */
  inputs: Record<string, any>;
  secretInputs: string[];
  /** Top-level inputs that hold an unknown value (only in a preview). */
  unknownInputs: string[];
  options: {
    replaceOnChanges: string[];
    deleteBeforeReplace: boolean;
    customTimeouts?: { create: string; update: string; delete: string };
    parent: string;
    dependsOn: string[];
  };
}

const SECRET_SIG = "4dabf18193072939515e22adb298388d";
/** How an unknown input (a preview's computed value) appears in `Registered.inputs`. */
export const UNKNOWN = "<unknown>";

function unwrap(v: any): { value: any; secret: boolean; unknown: boolean } {
  if (pulumi.isUnknown(v)) return { value: UNKNOWN, secret: false, unknown: true };
  if (v && typeof v === "object" && v[SECRET_SIG] === "1b47061264138c4ac30d75fd1eb44270")
    return { ...unwrap(v.value), secret: true };
  if (Array.isArray(v)) {
    const us = v.map(unwrap);
    return { value: us.map((u) => u.value), secret: us.some((u) => u.secret), unknown: us.some((u) => u.unknown) };
  }
  if (v && typeof v === "object") {
    let secret = false;
    let unknown = false;
    const out: Record<string, any> = {};
    for (const [k, x] of Object.entries(v)) {
      const u = unwrap(x);
      out[k] = u.value;
      secret ||= u.secret;
      unknown ||= u.unknown;
    }
    return { value: out, secret, unknown };
  }
  return { value: v, secret: false, unknown: false };
}

/** Node hosts and addresses the fake scheduler "allocates" for island nodes. */
export const fakeHost = (node: number) => `node${node + 1}`;
export const fakeAddr = (node: number) => `10.0.0.${node + 11}`;
/** A planned URL (`http://<i0-n1>:8100/v1`) with the fake node address the mocked job reports. */
export const realUrl = (url: string) => url.replace(/<i\d+-n(\d+)>/, (_, n) => fakeAddr(Number(n)));
export const FAKE_JOB_ID = "4242";

/** The single-quoted word the create script assigns on a `name=...` line, unquoted as bash would. */
export function scriptAssignment(script: string, name: string): string {
  const line = script.split("\n").find((l) => l.startsWith(`${name}=`));
  if (!line) throw new Error(`the create script assigns no ${name}`);
  const words = shellParse(line.slice(name.length + 1));
  if (words.length !== 1 || typeof words[0] !== "string") throw new Error(`${name}= is not one plain word`);
  return words[0];
}

/**
 * What a successful create prints, made the way the create script makes it: the result template
 * from its stdin with the tokens filled in (fake job id, hosts and addresses).
 */
export function fakeCreateStdout(stdin: string): string {
  // A dry run's script (SLURM's or local's) prints its result line as it is.
  const dryRun = stdin.split("\n").find((l) => l.startsWith("printf '%s\\n' ") && l.includes('"dryRun":true'));
  if (dryRun) return (shellParse(dryRun.slice("printf '%s\\n' ".length))[0] as string) + "\n";
  const stray = "[fleet] progress goes to stderr, but a stray line on stdout must not confuse the parser\n";
  // A co-scheduled job's create (slurm/hetjob.ts): every island's result, its nodes after the previous islands'.
  if (stdin.split("\n").some((l) => l.startsWith("line="))) {
    let first = 0;
    const islands = stdin
      .split("\n")
      .filter((l) => /^result=['"]/.test(l))
      .map((l) => {
        const r = fakeResult(scriptAssignment(l, "result"), first);
        first += (JSON.parse(r).nodes as unknown[]).length;
        return r;
      });
    const line = scriptAssignment(stdin, "line")
      .replaceAll("__FLEET_JOB_ID__", FAKE_JOB_ID)
      .replace("__FLEET_ISLANDS__", () => islands.join(","));
    return `${stray}${line}\n`;
  }
  return `${stray}${fakeResult(scriptAssignment(stdin, "result"), 0)}\n`;
}

/** An island's result template with its tokens filled in; its node k is fake node `first + k`. */
function fakeResult(template: string, first: number): string {
  let result = template.replaceAll("__FLEET_JOB_ID__", FAKE_JOB_ID).replaceAll("__FLEET_ADOPTED__", "false");
  for (const t of ["SUBMITTED", "RUNNING", "READY"]) result = result.replaceAll(`__FLEET_T_${t}__`, "1795000000.5");
  return result
    .replace(/__FLEET_NODE_HOST_(\d+)__/g, (_, k) => fakeHost(first + Number(k)))
    .replace(/__FLEET_NODE_ADDR_(\d+)__/g, (_, k) => fakeAddr(first + Number(k)));
}

/** The island job (`timeout ... bash -s`) prints its result line; the secrets command (and any other) prints nothing. */
const defaultStdout = (inputs: Record<string, any>) =>
  / bash -s$/.test(inputs.create) ? fakeCreateStdout(inputs.stdin) : "";

/**
 * What the engine hands back for a resource a preview would create. Nothing exists yet, so:
 * - a Kubernetes object's id is unknown and its outputs are its inputs (pulumi-kubernetes
 *   provider/pkg/provider/provider.go, Create: `Id: ""` in a preview, the inputs or the server's
 *   dry-run object as properties), so what only the cluster fills in (status) is unknown;
 * - a provider's id is unknown (pulumi pkg/resource/deploy/providers/registry.go, Create: UnknownID
 *   unless applying);
 * - a remote.Command returns an id, but stdout and stderr are computed (pulumi-command
 *   provider/pkg/provider/remote/commandController.go, Create returns before running in a preview;
 *   pulumi-go-provider infer/resource.go, markComputed: an output not equal to an input is
 *   computed during a create preview);
 * - a StackReference is read, preview or not.
 * An output the state leaves out is unknown in a preview (@pulumi/pulumi runtime/rpc.ts,
 * resolveProperties: `isKnown = !isDryRun()`), and so is an id of "" (runtime/resource.ts).
 */
function previewResult(args: pulumi.runtime.MockResourceArgs): { id: string | undefined; state: Record<string, any> } {
  if (!args.custom) return { id: undefined, state: args.inputs };
  if (args.type.startsWith("command:")) {
    const { stdout: _stdout, stderr: _stderr, ...inputs } = args.inputs;
    return { id: `${args.name}-id`, state: inputs };
  }
  return { id: undefined, state: args.inputs };
}

/** A cluster under mocks: ConfigMaps' data by name, objects' annotations by API path, and every read made. */
export interface MockCluster {
  configMaps?: Record<string, Record<string, string>>;
  annotations?: Record<string, Record<string, string>>;
  reads?: string[];
}

/** The program's cluster reads (release-observe.ts) against a MockCluster; anything else it is asked throws. */
function mockClusterReader(c: MockCluster): ClusterReader {
  const refuse = () => {
    throw new Error("the mocked cluster answers only ConfigMaps and annotations");
  };
  return {
    server: "https://mocked-cluster",
    configMapData: async (_ns, name) => (c.reads?.push(`configmap ${name}`), c.configMaps?.[name]),
    objectAnnotations: async (path) => (c.reads?.push(path), c.annotations?.[path]),
    snapshot: refuse,
    podGet: refuse,
    podProxyText: refuse,
    podLog: refuse,
    mergePatch: refuse,
  };
}

/**
 * Installs the mocks; returns the live list of registrations. `preview`: run as `pulumi preview`
 * of a fresh stack does, with unknown ids and provider-computed outputs (previewResult).
 */
export function installMocks(
  stack: string,
  opts: {
    preview?: boolean;
    commandStdout?: (inputs: Record<string, any>) => string;
    /** What a StackReference to each stack name reads: its outputs and which of them are secret. */
    stackOutputs?: Record<string, { outputs: Record<string, unknown>; secretOutputNames: string[] }>;
    /** What the host says of each job before planning (host/presence.ts); never started unless said. */
    presence?: (job: PresenceJob) => Presence | undefined;
    /** What the Kubernetes cluster says before planning (release-observe.ts); nothing exists unless said. */
    cluster?: MockCluster;
  } = {},
): Registered[] {
  // No host answers under mocks: the program's presence check reads this instead.
  observeInTests(async (jobs) => Object.fromEntries(jobs.map((j) => [j.jobName, opts.presence?.(j) ?? NEVER_STARTED])));
  readReleasesInTests(async () => mockClusterReader(opts.cluster ?? {}));
  const registered: Registered[] = [];
  const pending = new Map<string, Registered["options"]>();
  pulumi.runtime.setMocks(
    {
      newResource: (args) => {
        const { value: inputs } = unwrap(args.inputs);
        const keys = (f: (u: ReturnType<typeof unwrap>) => boolean) =>
          Object.entries(args.inputs)
            .filter(([, v]) => f(unwrap(v)))
            .map(([k]) => k);
        registered.push({
          type: args.type,
          name: args.name,
          inputs,
          secretInputs: keys((u) => u.secret),
          unknownInputs: keys((u) => u.unknown),
          options: pending.get(`${args.type}::${args.name}`)!,
        });
        if (opts.preview && args.type !== "pulumi:pulumi:StackReference") return previewResult(args);
        const state =
          args.type === "command:remote:Command" || args.type === "command:local:Command"
            ? { ...args.inputs, stdout: (opts.commandStdout ?? defaultStdout)(inputs), stderr: "" }
            : args.type === "pulumi:pulumi:StackReference"
              ? { ...args.inputs, ...(opts.stackOutputs?.[inputs.name] ?? { outputs: {}, secretOutputNames: [] }) }
              : args.inputs;
        return { id: `${args.name}-id`, state };
      },
      call: (args) => args.inputs,
    },
    "vllm-fleet",
    stack,
    opts.preview ?? false,
  );
  // The mock monitor drops resource options; record them on their way in.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const monitor = require("@pulumi/pulumi/runtime/settings").getMonitor();
  const register = monitor.registerResource.bind(monitor);
  monitor.registerResource = (req: any, callback: any) => {
    const t = req.getCustomtimeouts?.();
    pending.set(`${req.getType()}::${req.getName()}`, {
      replaceOnChanges: req.getReplaceonchangesList(),
      deleteBeforeReplace: req.getDeletebeforereplace(),
      customTimeouts: t ? { create: t.getCreate(), update: t.getUpdate(), delete: t.getDelete() } : undefined,
      parent: req.getParent(),
      dependsOn: req.getDependenciesList(),
    });
    return register(req, callback);
  };
  return registered;
}

/** Config for a SLURM program run: the login node plus a private key stored as a secret. */
export function slurmConfig(
  extra: Record<string, unknown> = {},
  login: Record<string, unknown> = {
    host: "login.example",
    user: "alice",
    port: 22,
    hostKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOvlyGSkCuhc",
  },
) {
  const config: Record<string, string> = {
    "vllm-fleet:login": JSON.stringify(login),
    "vllm-fleet:sshPrivateKey": "-----BEGIN OPENSSH PRIVATE KEY-----\nfake\n-----END OPENSSH PRIVATE KEY-----\n",
  };
  for (const [k, v] of Object.entries(extra)) config[`vllm-fleet:${k}`] = typeof v === "string" ? v : JSON.stringify(v);
  return config;
}

export function setConfig(
  config: Record<string, string>,
  secretKeys = ["vllm-fleet:sshPrivateKey", "vllm-fleet:jumpPrivateKey"],
) {
  pulumi.runtime.setAllConfig(
    config,
    secretKeys.filter((k) => k in config),
  );
}

/** Whether an Output is marked secret (what `pulumi stack output` shows as [secret]). */
export function isSecret(o: unknown): Promise<boolean> {
  return (pulumi.output(o) as any).isSecret as Promise<boolean>;
}

/** Whether an Output is known (a preview leaves outputs of resources not yet created unknown). */
export function isKnown(o: unknown): Promise<boolean> {
  return (pulumi.output(o) as any).isKnown as Promise<boolean>;
}

/** Resolves an Output the way `pulumi stack output` would see it (never resolves while it is unknown). */
export function value<T>(input: pulumi.Input<T>): Promise<pulumi.Unwrap<T>> {
  return new Promise((resolve) => pulumi.output(input).apply((v) => resolve(v)));
}

/**
 * Waits until the Pulumi runtime's RPC queue is empty: registrations and components'
 * registerOutputs calls, which wait for their outputs. A test that ends before that leaves them to
 * reach the next test's mock monitor, which rejects them as unknown resources (unhandled).
 */
export function drainRpcs(): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require("@pulumi/pulumi/runtime/settings").waitForRPCs();
}

/** Waits until registrations stop arriving (outputs resolve asynchronously under mocks). */
export async function settle(registered: Registered[]): Promise<void> {
  await drainRpcs();
  let n = -1;
  while (n !== registered.length) {
    n = registered.length;
    await new Promise((r) => setTimeout(r, 20));
  }
}
