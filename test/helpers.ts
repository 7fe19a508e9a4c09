import * as fs from "node:fs";
import * as path from "node:path";
import { vi } from "vitest";
import { main as planMain } from "../bin/plan";
import { ConfigError, loadConfigText, type FleetConfig } from "../components/config";
import { buildPlan } from "../components/plan/plan";
import type { DeploymentPlan } from "../components/plan/deployment-plan";

export const ROOT = path.resolve(__dirname, "..");
export const STACK_NAMES = fs.readdirSync(path.join(ROOT, "stacks")).filter((f) => f.endsWith(".toml")).map((f) => f.slice(0, -5)).sort();
/** Stacks by target: k8s-* carry [kubernetes], the rest [slurm]. */
export const K8S_STACKS = STACK_NAMES.filter((n) => n.startsWith("k8s-"));
export const SLURM_STACKS = STACK_NAMES.filter((n) => !n.startsWith("k8s-"));

export function stackText(name: string): string {
  return fs.readFileSync(path.join(ROOT, "stacks", `${name}.toml`), "utf8");
}

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
