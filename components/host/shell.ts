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

/** Runs `cmd args` with `script` on stdin; killed, and an error, past `timeoutMs`. */
export function spawnScript(cmd: string, args: string[], script: string, timeoutMs: number): ReturnType<Shell["run"]> {
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

/** This machine: bash with the script on stdin, in this process's environment. */
export function localShell(): Shell {
  return {
    describe: "this machine",
    run: (script, timeoutMs = 60_000) => spawnScript("bash", ["-s"], script, timeoutMs),
  };
}
