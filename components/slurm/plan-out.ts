import type { PlanOutFile } from "../backend";
import type { StackPlan } from "../plan/stack-plan";
import { coScheduledGroups, coScheduledPlacements, hetjobName, renderHetjob, renderHetjobScript } from "./hetjob";
import { renderIslandJob } from "./island-job";
import { generatedFiles } from "../host/processes";
import { jobName, renderIslandScript } from "./sbatch";

/**
 * `plan --out` on SLURM, per island: the sbatch script, the config files the job generates on its
 * nodes, and the create script (fed to `bash -s` on the login node) and delete command that
 * `pulumi up` and `destroy` run. No credentials are configured: with hfToken or apiKey set, `pulumi
 * up` adds the secrets command and the script reads their files.
 */
export function slurmPlanOut(stack: StackPlan): PlanOutFile[] {
  const files: PlanOutFile[] = [];
  const grouped = coScheduledPlacements(stack);
  for (const plan of stack.services)
    for (const island of plan.islands) {
      // A co-scheduled island's job is the group's (below); its nodes still generate their files.
      if (!grouped.has(`${plan.service ?? ""}/${island.index}`)) {
        files.push({
          path: `${island.name}/${jobName(plan, island.index)}.sbatch`,
          text: renderIslandScript(plan, island).script,
          mode: 0o755,
        });
        const job = renderIslandJob(plan, island);
        files.push({ path: `${island.name}/create.sh`, text: job.stdin, mode: 0o755 });
        files.push({ path: `${island.name}/delete.sh`, text: `${job.delete}\n`, mode: 0o755 });
      }
      for (const [name, text] of Object.entries(generatedFiles(island)))
        files.push({ path: `${island.name}/${name}`, text });
    }
  for (const members of coScheduledGroups(stack)) {
    const name = hetjobName(members);
    files.push({ path: `cosched/${name}.sbatch`, text: renderHetjobScript(members), mode: 0o755 });
    const job = renderHetjob(members);
    files.push({ path: "cosched/create.sh", text: job.stdin, mode: 0o755 });
    files.push({ path: "cosched/delete.sh", text: `${job.delete}\n`, mode: 0o755 });
  }
  return files;
}
