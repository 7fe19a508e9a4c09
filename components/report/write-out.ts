import * as fs from "node:fs";
import * as path from "node:path";
import type { DeploymentPlan } from "../plan/types";
import { renderIslandJob } from "../render/island-job";
import { generatedFiles, jobName, renderIslandScript } from "../render/sbatch";
import { planJson } from "./plan-json";

/**
 * `plan --out DIR`: everything that would be submitted, for people to read: plan.json, and per
 * island the sbatch script, the config files the job generates on its nodes, and the create script
 * (fed to `bash -s` on the login node) and delete command that `pulumi up` and `destroy` run.
 */
export function writePlanOut(plan: DeploymentPlan, dir: string): string[] {
  fs.mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  const write = (rel: string, text: string, mode = 0o644) => {
    const file = path.join(dir, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text, { mode });
    written.push(file);
  };
  write("plan.json", JSON.stringify(planJson(plan), null, 2) + "\n");
  if (plan.target === "slurm") {
    for (const island of plan.islands) {
      write(`${island.name}/${jobName(plan, island.index)}.sbatch`, renderIslandScript(plan, island).script, 0o755);
      for (const [name, text] of Object.entries(generatedFiles(island))) write(`${island.name}/${name}`, text);
      const job = renderIslandJob(plan, island);
      write(`${island.name}/create.sh`, job.stdin, 0o755);
      write(`${island.name}/delete.sh`, `${job.delete}\n`, 0o755);
    }
  }
  return written;
}
