/**
 * The Python client's e2e pytest files (clients/python/tests/e2e), run from the e2e suite against a
 * fleet it deployed: the client venv (clients/python/tests/env.sh, the package installed from a wheel
 * built here) and pytest's JUnit report into FLEET_PYTEST_REPORTS, which .ci/run counts.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { expect } from "vitest";
import { ROOT } from "./program-capture";

export const CLIENT = path.join(ROOT, "clients", "python");

let python: string | undefined;

/** The client venv's python, built once per lock (about 25 s cold, instant after). */
export function clientPython(): string {
  python ??= spawnSync("bash", [path.join(CLIENT, "tests", "env.sh")], {
    encoding: "utf8",
    timeout: 20 * 60_000,
    stdio: ["ignore", "pipe", "inherit"],
  }).stdout.trim();
  expect(fs.existsSync(python), "clients/python/tests/env.sh printed the client venv's python").toBe(true);
  return python;
}

/** Runs one pytest file against a fleet; fails with pytest's own output, and when nothing ran. */
export function runClientPytest(file: string, vars: NodeJS.ProcessEnv, report: string, baseEnv = process.env) {
  const reports = process.env.FLEET_PYTEST_REPORTS;
  const args = ["-m", "pytest", "-v", "-p", "no:cacheprovider", path.join(CLIENT, "tests", "e2e", file)];
  if (reports) args.push(`--junitxml=${path.join(reports, `${report}.xml`)}`);
  const run = spawnSync(clientPython(), args, {
    cwd: CLIENT,
    env: { ...baseEnv, ...vars },
    encoding: "utf8",
    timeout: 20 * 60_000,
  });
  console.log(`pytest ${file}:\n${run.stdout}\n${run.stderr}`);
  expect(run.status, `pytest ${file} failed:\n${run.stdout.slice(-6000)}\n${run.stderr.slice(-3000)}`).toBe(0);
  // A run that skipped its tests proves nothing here.
  expect(run.stdout).toMatch(/\d+ passed/);
  expect(run.stdout).not.toMatch(/\d+ skipped/);
}
