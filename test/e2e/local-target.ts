/**
 * The local target's end-to-end helpers (issue 27): what the Pulumi program hands local.Command
 * (index.ts run under mocks), run here as the provider runs it (`/bin/sh -c <create>` with the
 * create script on stdin and the credentials in its environment: pulumi-command v1.2.1
 * provider/pkg/provider/local/commandOutputs.go run), and what a run leaves on this machine. No
 * root, no SLURM: everything runs as this user under a HOME of its own.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { vi } from "vitest";
import { parseIslandResult, type RunningIsland } from "../../components/host/island-result";
import { installMocks, setConfig, settle, value, type Registered } from "../program-harness";

export interface LocalCommand {
  name: string;
  create: string;
  stdin: string;
  delete: string;
  environment: Record<string, string>;
}

/** Runs index.ts under mocks with `stackText` as the stack file and returns its local.Command inputs and plan. */
export async function captureLocal(
  stackText: string,
  opts: { pulumiStack?: string; overrides?: Record<string, unknown>; secrets?: Record<string, string> } = {},
): Promise<{ commands: LocalCommand[]; planned: any }> {
  const stack = opts.pulumiStack ?? "dev";
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "fleet-local-stack-")), "stack.toml");
  fs.writeFileSync(file, stackText);
  const registered: Registered[] = installMocks(stack);
  const config: Record<string, string> = {
    "vllm-fleet:stackFile": file,
    ...(opts.overrides ? { "vllm-fleet:overrides": JSON.stringify(opts.overrides) } : {}),
    ...Object.fromEntries(Object.entries(opts.secrets ?? {}).map(([k, v]) => [`vllm-fleet:${k}`, v])),
  };
  setConfig(
    config,
    Object.keys(opts.secrets ?? {}).map((k) => `vllm-fleet:${k}`),
  );
  vi.resetModules();
  const infra = await import("../../index");
  const planned = await value(infra.planned);
  await value(infra.islands);
  await settle(registered);
  const commands = registered
    .filter((r) => r.type === "command:local:Command")
    .map((r) => ({
      name: r.name,
      create: r.inputs.create as string,
      stdin: r.inputs.stdin as string,
      delete: r.inputs.delete as string,
      environment: (r.inputs.environment ?? {}) as Record<string, string>,
    }));
  return { commands, planned };
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Where every test's HOME is. */
export const LOCAL_E2E_HOMES = path.join(os.tmpdir(), "fleet-local-e2e");

/** The HOMEs this test process made: killLeftovers stops only what runs under them. */
const OWN_HOMES = new Set<string>();

/** A HOME of the test's own: the island folders (relative output_dir) live under it. */
export function freshHome(name: string): string {
  const home = path.join(LOCAL_E2E_HOMES, `${name}-${process.pid}`);
  OWN_HOMES.add(home);
  fs.rmSync(home, { recursive: true, force: true });
  fs.mkdirSync(home, { recursive: true });
  return home;
}

/** `/bin/sh -c <command>`, as local.Command runs it; `onStderr` sees stderr as it comes. */
export function runLocal(
  command: string,
  opts: { home: string; stdin?: string; env?: Record<string, string>; onStart?: (pid: number) => void },
): Promise<Run> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", command], {
      env: { ...process.env, HOME: opts.home, ...opts.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    // 'close': both pipes are done, as the provider waits for them (nothing the run left may hold them).
    child.on("close", (code) => resolve({ code, stdout, stderr, ms: Date.now() - started }));
    if (child.pid !== undefined) opts.onStart?.(child.pid);
    child.stdin.end(opts.stdin ?? "");
  });
}

export async function create(c: LocalCommand, home: string, env: Record<string, string> = {}): Promise<Run> {
  return runLocal(c.create, { home, stdin: c.stdin, env: { ...c.environment, ...env } });
}

export async function destroy(c: LocalCommand, home: string): Promise<Run> {
  return runLocal(c.delete, { home, stdin: c.stdin, env: c.environment });
}

export function running(run: Run, what: string): RunningIsland {
  if (run.code !== 0) throw new Error(`${what} exited ${run.code}:\n${run.stderr.slice(-4000)}`);
  const result = parseIslandResult(run.stdout);
  if (result.dryRun) throw new Error(`${what}: a dry run's result`);
  return result;
}

/**
 * The live processes (not zombies) whose environment names a run folder under `home`, or whose
 * working folder lies under it: whatever a run of this test started and still runs, found by the
 * variable the supervisor hands every process and the node folder it starts each one in.
 */
export function processesUnder(home: string): string[] {
  const left: string[] = [];
  for (const pid of fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) continue;
      const env = fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
      // A process that writes its title over its environment (setproctitle: the real sglang-router's
      // `sglang::router`, SGLang's `sglang::scheduler`) shows none: its working folder, the node
      // folder of the run the supervisor starts every process in, names it too.
      if (
        env.some((e) => e.startsWith(`FLEET_ATTEMPT_DIR=${home}/`)) ||
        fs.readlinkSync(`/proc/${pid}/cwd`).startsWith(`${home}/`)
      ) {
        left.push(`${pid} ${fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim()}`);
      }
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return left;
}

/** Waits (up to `ms`) until nothing of the runs under `home` is left; returns what still is. */
export async function leftUnder(home: string, ms = 10_000): Promise<string[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const left = processesUnder(home);
    if (!left.length || Date.now() > deadline) return left;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * SIGKILLs every process a test of this vitest process left under its HOMEs, so a failed test never
 * holds the ports the next one uses; another process's runs (a suite beside this one) are not its to stop.
 */
export function killLeftovers(): void {
  for (const p of [...OWN_HOMES].flatMap(processesUnder)) {
    try {
      process.kill(Number(p.split(" ")[0]), "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
}
