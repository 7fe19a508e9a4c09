import * as fs from "node:fs";
import * as path from "node:path";
import type { FleetConfig } from "../config/types";
import type { StackPlan } from "../plan/stack-plan";
import { targetOf } from "../targets";
import { stackPlanJson } from "./plan-json";

/**
 * `plan --out DIR`: everything that would be submitted, for people to read: plan.json, and per
 * island what the target's backend would submit (SLURM: the sbatch script, the files the job
 * generates, the create and delete commands; Kubernetes: every object as YAML).
 */
export function writePlanOut(stack: StackPlan, configs: FleetConfig[], dir: string): string[] {
  fs.mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  const write = (rel: string, text: string, mode = 0o644) => {
    const file = path.join(dir, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text, { mode });
    written.push(file);
  };
  write("plan.json", JSON.stringify(stackPlanJson(stack, configs), null, 2) + "\n");
  for (const f of targetOf(stack.services[0].target).planOut(stack)) write(f.path, f.text, f.mode);
  return written;
}
