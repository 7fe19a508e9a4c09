import { spawn } from "node:child_process";

/** Where scheduler commands run: the login node over ssh, or this machine when it is the login node. */
export interface Shell {
  describe: string;
  /** Runs a bash script (sent on stdin, so no quoting through ssh's command line). */
  run(script: string, timeoutMs?: number): Promise<{ code: number | null; stdout: string; stderr: string }>;
}

/** Runs a script and returns its stdout; a non-zero exit is an error that says where and shows stderr's tail. */
export async function runChecked(shell: Shell, script: string, what: string): Promise<string> {
  const run = await shell.run(script);
  if (run.code !== 0)
    throw new Error(`${what} on ${shell.describe} failed (exit ${run.code}): ${run.stderr.trim().slice(-500)}`);
  return run.stdout;
}

export interface SshTarget {
  user?: string;
  host: string;
  port?: number;
  identity?: string;
  /** Extra `-o Key=Value` options (e.g. a known_hosts file). */
  options: string[];
}

/** `user@host[:port]` as the --login flag and the login config give it. */
export function parseLoginFlag(text: string): Pick<SshTarget, "user" | "host" | "port"> {
  const m = /^(?:([A-Za-z0-9._-]+)@)?([A-Za-z0-9._-]+)(?::(\d{1,5}))?$/.exec(text);
  if (!m) throw new Error(`--login ${JSON.stringify(text)}: expected [user@]host[:port]`);
  return { ...(m[1] ? { user: m[1] } : {}), host: m[2], ...(m[3] ? { port: Number(m[3]) } : {}) };
}

function spawnScript(cmd: string, args: string[], script: string, timeoutMs: number): ReturnType<Shell["run"]> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${cmd} did not finish within ${timeoutMs} ms`));
    }, timeoutMs);
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(script);
  });
}

/** OpenSSH in batch mode: the user's agent, keys and ~/.ssh/config apply; it never prompts. */
export function sshShell(t: SshTarget): Shell {
  const dest = t.user ? `${t.user}@${t.host}` : t.host;
  const args = [
    "-T",
    "-o",
    "BatchMode=yes",
    "-o",
    "ConnectTimeout=10",
    ...(t.port ? ["-p", String(t.port)] : []),
    ...(t.identity ? ["-i", t.identity, "-o", "IdentitiesOnly=yes"] : []),
    ...t.options.flatMap((o) => ["-o", o]),
    dest,
    "bash -s",
  ];
  return {
    describe: `ssh ${dest}${t.port ? `:${t.port}` : ""}`,
    run: (script, timeoutMs = 60_000) => spawnScript("ssh", args, script, timeoutMs),
  };
}

export function localShell(): Shell {
  return {
    describe: "this machine",
    run: (script, timeoutMs = 60_000) => spawnScript("bash", ["-s"], script, timeoutMs),
  };
}
