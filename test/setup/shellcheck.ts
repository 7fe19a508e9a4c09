/**
 * vitest global setup: makes sure shellcheck is there for the script tests (test/shellcheck.ts).
 * Missing, it is installed with apt-get when this process is root on a Debian-like machine; if that
 * cannot be done, one loud line says which assertions are skipped and how to install it. CI
 * (CI=true) must have it: there a missing shellcheck fails the run.
 */
import { spawnSync } from "node:child_process";
import { INSTALL_HINT } from "../shellcheck";

const present = () => !spawnSync("shellcheck", ["--version"]).error;

function tryAptInstall(): string | undefined {
  if (process.getuid?.() !== 0) return "not root";
  if (spawnSync("apt-get", ["--version"]).error) return "no apt-get";
  process.stderr.write("shellcheck is missing: installing it with apt-get (the script tests run it)...\n");
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const update = spawnSync("apt-get", ["update", "-qq"], { env, encoding: "utf8", timeout: 300_000 });
  if (update.status !== 0) return `apt-get update failed: ${(update.stderr ?? "").trim().slice(-300)}`;
  const install = spawnSync("apt-get", ["install", "-y", "-qq", "--no-install-recommends", "shellcheck"], {
    env,
    encoding: "utf8",
    timeout: 300_000,
  });
  if (install.status !== 0) return `apt-get install shellcheck failed: ${(install.stderr ?? "").trim().slice(-300)}`;
  return present() ? undefined : "installed, but no shellcheck on PATH";
}

export default function setup(): void {
  if (present()) return;
  const why = tryAptInstall();
  if (why === undefined) return;
  const line = `SKIPPING every shellcheck assertion: shellcheck is not installed and could not be installed here (${why}). Install it: ${INSTALL_HINT}.`;
  if (process.env.CI === "true") throw new Error(`CI needs shellcheck. ${line}`);
  process.stderr.write(`\n!!! ${line}\n\n`);
}
