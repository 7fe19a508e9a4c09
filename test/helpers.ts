import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { vi } from "vitest";
import { main as planMain } from "../bin/plan";
import { main as fleetMain } from "../bin/fleet";
import { newerSource, PROGRAM_SOURCES } from "../components/build-freshness";
import { ConfigError, loadConfigText, type FleetConfig } from "../components/config";
import { loadStackText } from "../components/config/load";
import { buildPlan, buildStackPlan } from "../components/planner";
import type { DeploymentPlan } from "../components/plan/deployment-plan";
import type { StackPlan } from "../components/plan/stack-plan";

export const ROOT = path.resolve(__dirname, "..");
export const STACK_NAMES = fs
  .readdirSync(path.join(ROOT, "stacks"))
  .filter((f) => f.endsWith(".toml"))
  .map((f) => f.slice(0, -5))
  .sort();
export function stackText(name: string): string {
  return fs.readFileSync(path.join(ROOT, "stacks", `${name}.toml`), "utf8");
}

/** Stacks of several services ([services.<name>]): their own suites (test/config/services.test.ts, ...). */
export const SERVICES_STACKS = STACK_NAMES.filter((n) => /^\[services\./m.test(stackText(n)));
const ONE_SERVICE = STACK_NAMES.filter((n) => !SERVICES_STACKS.includes(n));
/** Single-service stacks by target: k8s-* carry [kubernetes], local-* [local], the rest [slurm]. */
export const K8S_STACKS = ONE_SERVICE.filter((n) => n.startsWith("k8s-"));
export const LOCAL_STACKS = ONE_SERVICE.filter((n) => n.startsWith("local-"));
export const SLURM_STACKS = ONE_SERVICE.filter((n) => !n.startsWith("k8s-") && !n.startsWith("local-"));

/** Minimal valid SLURM target appended to inline test configs. */
export const SLURM = `\n[slurm]\njob_name = "t"\n`;

export function load(text: string): FleetConfig {
  return loadConfigText(text, "test.toml");
}

export function plan(text: string, stack = "test"): DeploymentPlan {
  return buildPlan(load(text), stack);
}

/** The issues a config produces; fails the test if it loads. */
export function issuesOf(text: string) {
  try {
    loadConfigText(text, "test.toml");
  } catch (err) {
    if (err instanceof ConfigError) return err.issues;
    throw err;
  }
  throw new Error("expected the config to be rejected, but it loaded");
}

/** Runs the fleet CLI (`npm run fleet -- <args>`) in-process and captures what it prints. */
export async function runFleetCli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await fleetMain(
    args,
    (s) => (out += s),
    (s) => (err += s),
  );
  return { code, out, err };
}

/** Runs the plan CLI (`npm run plan -- <args>`) in-process and captures what it prints. */
export function runPlanCli(args: string[]): { code: number; stdout: string; stderr: string } {
  let stdout = "";
  let stderr = "";
  vi.spyOn(process.stdout, "write").mockImplementation((s: any) => ((stdout += s), true));
  vi.spyOn(process.stderr, "write").mockImplementation((s: any) => ((stderr += s), true));
  const code = planMain(args);
  vi.restoreAllMocks();
  return { code, stdout, stderr };
}

/** What `npm run build` compiles into dist/: the program, the CLIs and the build's own configuration. */
const BUILD_SOURCES = [...PROGRAM_SOURCES, "bin", "tsconfig.json", "tsconfig.build.json", "package.json"];

let checkedDist = false;

/**
 * A compiled CLI's file, dist/bin/<name>.js. `npm test` builds dist/ first; run by hand (`npx vitest
 * run ...`), this fails with what to do when dist/ is missing or older than the source, rather than
 * test stale code.
 */
export function builtCli(name: "plan" | "fleet" | "schema" | "vllm-fleet"): string {
  const file = path.join(ROOT, "dist", "bin", `${name}.js`);
  if (!checkedDist) {
    if (!fs.existsSync(file))
      throw new Error(`${path.relative(ROOT, file)} is missing: run \`npm run build\` (npm test does)`);
    const newer = newerSource(ROOT, file, BUILD_SOURCES);
    if (newer)
      throw new Error(
        `dist/ is older than ${path.relative(ROOT, newer)}, which it is built from: run \`npm run build\` (npm test does)`,
      );
    checkedDist = true;
  }
  return file;
}

/** Runs a compiled CLI as its own process, `node dist/bin/<name>.js <args>`, as `npm run <name>` does. */
export function runBuiltCli(
  name: "plan" | "fleet" | "schema" | "vllm-fleet",
  args: string[],
  opts: { cwd?: string } = {},
): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [builtCli(name), ...args], {
    cwd: opts.cwd ?? ROOT,
    encoding: "utf8",
    timeout: 60_000,
  });
}

/** A stack output of a stack without [services] (the one-service shape), refusing a stack of several. */
export function singleService<T extends object>(out: T): Exclude<T, { services: unknown }> {
  if ("services" in out) throw new Error("expected the output of a stack without [services]");
  return out as Exclude<T, { services: unknown }>;
}

/** A shipped stack planned whole, as `pulumi up` plans it: one plan per service (one, unnamed, without [services]). */
export function stackPlanOf(name: string): StackPlan {
  return buildStackPlan(loadStackText(stackText(name), `${name}.toml`), name);
}
