import type { PlanOutFile } from "../backend";
import { generatedFiles } from "../host/processes";
import type { DeploymentPlan } from "../plan/deployment-plan";
import { renderLocalRun } from "./island-run";

/**
 * `plan --out` on the local target, per island: the supervisor script, the config files it writes,
 * and the start (create.sh, fed to `bash -s`) and stop (delete.sh) commands `pulumi up` and
 * `destroy` run. No credentials are configured: with hfToken or apiKey set, `pulumi up` hands them
 * to create.sh in its environment.
 */
export function localPlanOut(plan: DeploymentPlan): PlanOutFile[] {
  return plan.islands.flatMap((island) => {
    const run = renderLocalRun(plan, island);
    return [
      { path: `${island.name}/${run.runName}.sh`, text: run.script, mode: 0o755 },
      ...Object.entries(generatedFiles(island)).map(([name, text]) => ({ path: `${island.name}/${name}`, text })),
      { path: `${island.name}/create.sh`, text: run.stdin, mode: 0o755 },
      { path: `${island.name}/delete.sh`, text: `${run.delete}\n`, mode: 0o755 },
    ];
  });
}
