/**
 * The pinned Python environment of the end-to-end suite's real parts, found one way by every caller
 * (the suite's global setup, the real-parts tests, the upstream and vec-inf checks, the bench):
 * test/e2e/python-env.sh builds it once per lock and prints the path of its env file.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { pythonEnvDir } from "../../bin/sync-upstream";

export interface PythonEnv {
  /** The venv: its bin/ holds vllm, vllm-router, mooncake_master, ... */
  FLEET_PYENV: string;
  /** A random-weight Llama-style model with a locally trained tokenizer (test/e2e/real/tiny-model.py). */
  FLEET_TINY_MODEL: string;
  FLEET_PYENV_VLLM: string;
  FLEET_PYENV_BUILD_S: string;
}

/**
 * The env file: FLEET_PYENV_FILE (an environment built elsewhere), else what python-env.sh prints
 * (minutes on a fresh machine, instant after).
 */
export function pythonEnvFile(): string {
  return (
    process.env.FLEET_PYENV_FILE ??
    execFileSync("bash", [path.join(__dirname, "python-env.sh")], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
      timeout: 40 * 60_000,
    }).trim()
  );
}

export function pythonEnv(): PythonEnv {
  const vars = Object.fromEntries(
    fs
      .readFileSync(pythonEnvFile(), "utf8")
      .split("\n")
      .filter((l) => l.includes("="))
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
  );
  return vars as unknown as PythonEnv;
}

/** Just the venv: FLEET_PYENV or FLEET_PYENV_FILE as sync-upstream reads them, else the built one. */
export function pythonVenv(): string {
  return pythonEnvDir() ?? pythonEnv().FLEET_PYENV;
}
