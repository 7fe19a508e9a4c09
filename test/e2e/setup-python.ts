/**
 * Global setup of the end-to-end suite: builds (or finds cached) the pinned Python environment of
 * the real parts before any test runs, so no test's timeout includes a first install, and hands its
 * env file to the test workers through FLEET_PYENV_FILE.
 */
import { execFileSync } from "node:child_process";
import * as path from "node:path";

export default function setup() {
  if (process.env.FLEET_PYENV_FILE) return;
  const started = Date.now();
  process.env.FLEET_PYENV_FILE = execFileSync("bash", [path.join(__dirname, "python-env.sh")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    timeout: 40 * 60_000,
  }).trim();
  console.log(`python env: ${process.env.FLEET_PYENV_FILE} (${Math.round((Date.now() - started) / 1000)} s)`);
}
