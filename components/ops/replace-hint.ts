/**
 * `fleet status`'s one piece of Pulumi advice: for a SLURM island whose job is gone, the
 * `pulumi up --replace` that starts a new one. remote.Command has no Read (pulumi-command v1.2.1
 * remote/commandController.go implements Create, Update and Delete; pulumi-go-provider v1.3.0
 * infer/resource.go Read then hands the stored state back unchanged), so neither `pulumi up` nor
 * `pulumi refresh` notices that a job ended: the command stays "created" and nothing is resubmitted.
 */
import * as fs from "node:fs";
import { parse as parseYaml } from "yaml";
import { packagePath } from "../package-root";
import type { JobReport } from "../slurm";
import { targetOf } from "../targets";
import type { FleetView } from "./fleet-view";

export interface ReplaceHint {
  /** The islands whose job was seen gone. */
  islands: number[];
  command: string;
}

/**
 * Islands whose job was observed gone: squeue answered and lists no job of the island's name, and a
 * job had been submitted (its id is known from scontrol, sacct or the job_id file). A report exists
 * only when squeue answered for every island (parseSchedulerReport throws SchedulerUnobservable
 * otherwise, and status then prints nothing but that); an island never submitted has nothing to
 * replace.
 */
export function jobsGone(jobs: Map<number, JobReport> | undefined): number[] {
  if (!jobs) return [];
  return [...jobs.values()]
    .filter((j) => j.source !== "squeue" && j.source !== "none" && j.jobId !== null)
    .map((j) => j.island);
}

/** The Pulumi project's name, from the package's Pulumi.yaml (vllm-fleet if it cannot be read). */
export function pulumiProject(file = packagePath("Pulumi.yaml")): string {
  try {
    const name = (parseYaml(fs.readFileSync(file, "utf8")) as { name?: unknown } | null)?.name;
    return typeof name === "string" && name ? name : "vllm-fleet";
  } catch {
    return "vllm-fleet";
  }
}

/** The hint for a SLURM view with a known Pulumi stack, when some island's job was observed gone. */
export function replaceHint(
  view: FleetView,
  jobs: Map<number, JobReport> | undefined,
  project = pulumiProject(),
): ReplaceHint | undefined {
  const islands = jobsGone(jobs);
  const urn = targetOf(view.target).fleet.replaceUrn;
  if (!urn || !view.stack || !islands.length) return undefined;
  // Co-scheduled islands share one job: one --replace starts them all again.
  const byIsland = new Map(view.islands.map((i) => [i.island, i]));
  const urns = [
    ...new Set(
      islands.map((k) => `--replace '${urn(project, view.stack!, k, view.service, byIsland.get(k)?.component)}'`),
    ),
  ];
  return { islands, command: `pulumi up --stack ${view.stack} ${urns.join(" ")}` };
}

/** What `fleet status` prints for the hint: one message and the command. */
export function replaceHintText(h: ReplaceHint): string {
  const which =
    h.islands.length === 1 ? `island ${h.islands[0]}'s job is` : `the jobs of islands ${h.islands.join(", ")} are`;
  return (
    `${which} gone, and Pulumi cannot see that (remote.Command has no read, so \`pulumi up\` and \`refresh\` ` +
    `leave it as it is). If this stack is still up, start a new job with:\n  ${h.command}\n`
  );
}
