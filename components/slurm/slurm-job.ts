import * as command from "@pulumi/command";
import * as pulumi from "@pulumi/pulumi";
import type { IslandJob } from "../render/island-job";
import { parseIslandResult, type IslandResult } from "../report/island-result";

export interface SlurmJobArgs {
  /** The login node (see login.ts); stored as a secret in the state by the provider. */
  connection: pulumi.Input<command.types.input.remote.ConnectionArgs>;
  /** The rendered create/delete commands of one island (render/island-job.ts). */
  job: IslandJob;
}

/**
 * One island's sbatch job, driven over ssh on the login node.
 *
 * - Create submits (or adopts) the job and returns only when every endpoint serves.
 * - A new script hash (any change to what runs) replaces the job, and the old one is cancelled
 *   first, so there is never a second job beside it. Both the hash and dry_run are triggers.
 * - Any other change (a timeout, the ssh connection) is an in-place update. It re-runs create,
 *   which adopts the running job, so rotating a key or raising a timeout restarts nothing.
 * - Delete cancels by the job's unique name, which works without AcceptEnv on the login sshd. It
 *   succeeds when the job is already gone.
 */
export class SlurmJob extends pulumi.ComponentResource {
  /** The island's result line: job id, nodes, router and admin URLs (or the dry-run script path). */
  public readonly result: pulumi.Output<IslandResult>;
  public readonly jobName: string;
  public readonly command: command.remote.Command;

  constructor(name: string, args: SlurmJobArgs, opts?: pulumi.ComponentResourceOptions) {
    super("vllm-fleet:slurm:Job", name, {}, opts);
    const { job } = args;
    this.jobName = job.jobName;
    this.command = new command.remote.Command(
      `${name}-sbatch`,
      {
        connection: args.connection,
        create: job.create,
        stdin: job.stdin,
        delete: job.delete,
        triggers: [job.scriptHash, job.dryRun],
        // The provider can only pass the old stdout through AcceptEnv; delete does not need it.
        addPreviousOutputInEnv: false,
        // Progress lines on stderr reach `pulumi up`; stdout is the result line the program parses.
        logging: "stderr",
      },
      {
        parent: this,
        // The SDK marks `triggers` replaceOnChanges itself; the old job goes before the new one comes.
        deleteBeforeReplace: true,
        customTimeouts: { create: `${job.timeouts.createSeconds}s`, update: `${job.timeouts.createSeconds}s`, delete: `${job.timeouts.deleteSeconds}s` },
      },
    );
    this.result = this.command.stdout.apply(parseIslandResult);
    this.registerOutputs({ result: this.result });
  }
}
