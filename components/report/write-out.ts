import * as fs from "node:fs";
import * as path from "node:path";
import type { DeploymentPlan } from "../plan/deployment-plan";
import YAML from "yaml";
import { renderIslandJob } from "../slurm/island-job";
import { islandK8sObjects, renderK8sFleet } from "../kubernetes/fleet-objects";
import type { K8sObject } from "../kubernetes/objects";
import { generatedFiles, jobName, renderIslandScript } from "../slurm/sbatch";
import { planJson } from "./plan-json";

/** `<kind>-<name>.yaml`, one object per file, as `kubectl apply -f DIR` reads them. */
const objectFile = (o: K8sObject) => `${o.kind.toLowerCase()}-${o.metadata.name}.yaml`;
const objectYaml = (o: K8sObject) => YAML.stringify(o, { aliasDuplicateObjects: false, blockQuote: "literal", lineWidth: 0 });

/**
 * `plan --out DIR`: everything that would be submitted, for people to read: plan.json, and per
 * island either the sbatch script, the config files the job generates on its nodes, and the create
 * script (fed to `bash -s` on the login node) and delete command that `pulumi up` and `destroy`
 * run; or every Kubernetes object as YAML (no credentials configured: `pulumi up` adds the Secret
 * and its references when hfToken or apiKey is set).
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
  if (plan.target === "kubernetes") {
    const fleet = renderK8sFleet(plan, []);
    for (const island of fleet.islands) {
      const dir = plan.islands[island.island].name;
      for (const o of islandK8sObjects(island)) write(`${dir}/${objectFile(o)}`, objectYaml(o));
    }
  }
  return written;
}
