/**
 * Starting and talking to the TEST STAND-IN executables of test/fixtures/standins (and, through
 * their python3 shim, real programs): the unit suite's stand-in tests and the end-to-end file that
 * puts the stand-ins behind the real sglang-router share these.
 */
import { spawn, type ChildProcess } from "node:child_process";
import * as net from "node:net";
import * as path from "node:path";

export const BIN = path.join(__dirname, "fixtures", "standins", "bin");

export const baseEnv: Record<string, string> = {};
for (const [k, v] of Object.entries(process.env))
  if (v !== undefined && !k.startsWith("STANDIN_") && k !== "VLLM_API_KEY") baseEnv[k] = v;
baseEnv.STANDIN_STARTUP_DELAY_MS = "100";
// Routers started by hand here carry no --worker-startup-check-interval; poll as a planned one would.
baseEnv.STANDIN_ROUTER_POLL_MS = "200";

export interface Proc {
  proc: ChildProcess;
  name: string;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Its stdout and stderr were read to the end (after `exit`: Node may still hold their last data). */
  drained: Promise<void>;
}
export const procs: Proc[] = [];

export function start(prog: string, args: string[], env: Record<string, string> = {}): Proc {
  const proc = spawn(path.join(BIN, prog), args, { env: { ...baseEnv, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  proc.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  proc.stderr!.on("data", (d: Buffer) => (err += d.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on("exit", (code, signal) => resolve({ code, signal })),
  );
  const drained = new Promise<void>((resolve) => proc.on("close", () => resolve()));
  const p: Proc = { proc, name: prog, stdout: () => out, stderr: () => err, exit, drained };
  procs.push(p);
  return p;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs a program to its exit. The bound catches a hung program, not a slow start: many of these run at
 * once, and beside a CI run 8 s was once not enough for a stand-in's Node start on 2 cores.
 */
export async function runToExit(prog: string, args: string[], env: Record<string, string> = {}, timeoutMs = 30_000) {
  const p = start(prog, args, env);
  const res = await Promise.race([p.exit, sleep(timeoutMs).then(() => null)]);
  if (!res) {
    p.proc.kill("SIGKILL");
    throw new Error(`${prog} ${args.join(" ")} did not exit within ${timeoutMs} ms\n${p.stderr()}`);
  }
  // 'exit' can come before the last of stderr is read (seen under load: exit 2 with an empty
  // stderr); wait for the streams to close, bounded, as a grandchild may hold them open.
  await Promise.race([p.drained, sleep(2000)]);
  return { code: res.code, signal: res.signal, stdout: p.stdout(), stderr: p.stderr() };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export async function waitHttp(url: string, status = 200, timeoutMs = 10000, proc?: Proc): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < deadline) {
    try {
      const r = await fetch(url);
      await r.arrayBuffer();
      if (r.status === status) return;
      last = `status ${r.status}`;
    } catch (e) {
      last = String(e);
    }
    if (proc && proc.proc.exitCode !== null)
      throw new Error(`${proc.name} exited early (${proc.proc.exitCode}): ${proc.stderr()}`);
    await sleep(50);
  }
  throw new Error(`timeout waiting for ${url} -> ${status} (${last})${proc ? `\n${proc.stderr()}` : ""}`);
}

export async function waitTcp(port: number, timeoutMs = 10000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect({ host: "127.0.0.1", port });
      s.once("connect", () => (s.destroy(), resolve(true)));
      s.once("error", () => resolve(false));
    });
    if (ok) return;
    await sleep(50);
  }
  throw new Error(`timeout waiting for tcp ${port}`);
}

export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}) {
  const r = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const text = await r.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: r.status, headers: r.headers, text, json };
}

export async function getJson(url: string): Promise<any> {
  const r = await fetch(url);
  return r.json();
}

/** Sum of all samples of a Prometheus metric (exact name), optionally filtered by a label substring. */
export function metric(text: string, name: string, labelFilter = ""): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const m = /^([^\s{]+)(\{[^}]*\})?\s+(\S+)$/.exec(line.trim());
    if (m && m[1] === name && (m[2] || "").includes(labelFilter)) sum += Number(m[3]);
  }
  return sum;
}

/** Stops every process `start` began: SIGTERM, then SIGKILL for those still running after 3 s. */
export async function stopAll(): Promise<void> {
  for (const p of procs) if (p.proc.exitCode === null && p.proc.signalCode === null) p.proc.kill("SIGTERM");
  await Promise.race([Promise.all(procs.map((p) => p.exit)), sleep(3000)]);
  for (const p of procs) if (p.proc.exitCode === null && p.proc.signalCode === null) p.proc.kill("SIGKILL");
}

// =================================================================================================
// SGLang: `python3 -m sglang.launch_server` reaches the stand-in through bin/python3 (a shim that
// execs the real interpreter for anything else).

export const SGL = ["-m", "sglang.launch_server"];

/** The REAL sglang-router of the pinned venv at `venv`, started as the fleet starts it (`python3 -m sglang_router.launch_router`) through the shim. */
export const realSglangRouter = (venv: string, args: string[]) =>
  start("python3", ["-m", "sglang_router.launch_router", ...args], {
    STANDIN_REAL_PYTHON3: path.join(venv, "bin", "python3"),
  });
export const TINY = "Qwen/Qwen3-0.6B";

export async function sglServer(args: string[], env: Record<string, string> = {}) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const P = start(
    "python3",
    [...SGL, "--model-path", TINY, "--host", "127.0.0.1", "--port", String(port), ...args],
    env,
  );
  await waitHttp(`${base}/health`, 200, 10000, P);
  return { P, port, base };
}
