/**
 * `fleet status`'s one piece of Pulumi advice: for an island whose job (SLURM) or run (local) is
 * gone, the `pulumi up` that starts it again. remote.Command and local.Command have no Read
 * (pulumi-command v1.2.1 remote/commandController.go implements Create, Update and Delete), so the
 * program asks the host before planning (host/presence.ts) and `pulumi up` brings a gone island back
 * by itself, leaving the ones that serve untouched; `pulumi refresh` still sees nothing.
 */
import type { JobReport } from "../host/job-report";
import { presenceOf } from "../host/presence";
import type { FleetView } from "./fleet-view";

export interface ReplaceHint {
  /** The islands whose job was seen gone. */
  islands: number[];
  command: string;
}

/**
 * Islands whose job was observed gone, as `pulumi up` sees them (host/presence.ts presenceOf): a
 * job had been started and has ended, and `pulumi destroy` did not end it. A report exists only when
 * the host answered for every island (the queries' parsers throw otherwise, and status then prints
 * nothing but that); an island never started has nothing to bring back.
 */
export function jobsGone(jobs: Map<number, JobReport> | undefined): number[] {
  if (!jobs) return [];
  return [...jobs.values()].filter((j) => presenceOf(j).gone).map((j) => j.island);
}

/** The hint for a view with a known Pulumi stack, when some island's job was observed gone. */
export function replaceHint(view: FleetView, jobs: Map<number, JobReport> | undefined): ReplaceHint | undefined {
  const islands = jobsGone(jobs);
  if (!view.stack || !islands.length) return undefined;
  return { islands, command: `pulumi up --stack ${view.stack}` };
}

/** What `fleet status` prints for the hint: one message and the command. */
export function replaceHintText(h: ReplaceHint): string {
  const which =
    h.islands.length === 1 ? `island ${h.islands[0]}'s job is` : `the jobs of islands ${h.islands.join(", ")} are`;
  return (
    `${which} gone; \`pulumi up\` sees that (it asks the host before planning) and starts it again, ` +
    `leaving the islands that serve untouched:\n  ${h.command}\n`
  );
}
