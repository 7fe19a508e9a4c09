/**
 * Global setup of the end-to-end suite: builds (or finds cached) the pinned Python environment of
 * the real parts before any test runs, so no test's timeout includes a first install, and hands its
 * env file to the test workers through FLEET_PYENV_FILE.
 */
import { pythonEnvFile } from "./python-env";

export default function setup() {
  if (process.env.FLEET_PYENV_FILE) return;
  const started = Date.now();
  process.env.FLEET_PYENV_FILE = pythonEnvFile();
  console.log(`python env: ${process.env.FLEET_PYENV_FILE} (${Math.round((Date.now() - started) / 1000)} s)`);
}
