import * as command from "@pulumi/command";
import * as pulumi from "@pulumi/pulumi";
import type { IslandJob } from "./island-job";
import type { SecretFilesJob } from "./secret-files";
import { providerTimeoutSeconds, type LoginBound } from "./login-bound";
import { sbatchCommandName, SLURM_JOB_TYPE } from "./urn";
import { atGeneration } from "../host/presence";

/**
 * customTimeouts past a command's login-node bound. They do not stop a running command (only its
 * own `timeout` does, login-bound.ts); the provider's context they end serves the dial and the logs.
 */
function customTimeouts(createOrUpdate: LoginBound, del: LoginBound): pulumi.CustomTimeouts {
  const c = `${providerTimeoutSeconds(createOrUpdate)}s`;
  return { create: c, update: c, delete: `${providerTimeoutSeconds(del)}s` };
}

export interface SlurmJobArgs<Result> {
  /** The login node (see login.ts); stored as a secret in the state by the provider. */
  connection: pulumi.Input<command.types.input.remote.ConnectionArgs>;
  /** The rendered create/delete commands of one island (island-job.ts) at a revival generation. */
  job: (generation: number) => IslandJob;
  /** The generation the job is created with (host/presence.ts): one more than recorded when it is gone. */
  generation: pulumi.Output<number>;
  /** The island's credentials: the commands that write and remove their 0600 files, and the values. */
  secrets?: { files: SecretFilesJob; payload: pulumi.Output<string>; fingerprint: pulumi.Output<string> };
  /** Reads the create's result line: an island's (island-result.ts), or a co-scheduled job's (hetjob.ts). */
  parse: (stdout: string) => Result;
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
 * - Credentials go first, as 0600 files written by their own command from a secret stdin; the job
 *   depends on it, so destroy cancels the job before the files go. A changed credential replaces
 *   the job (its fingerprint is a secret trigger): running engines only read them at start.
 * - Every command is bounded by `timeout` on the login node (login-bound.ts): remote.Command's
 *   customTimeouts do not stop a command that runs. A create stopped by its bound cancels every
 *   job of its name, so the next create submits afresh rather than adopting a half-started job.
 * - remote.Command has no Read, so the program asks the login node before planning
 *   (island-presence.ts): a job that ended behind Pulumi's back (scancel, a lost node, the time
 *   limit, an exhausted restart budget) comes with the next revival generation, which the trigger
 *   carries beside the script hash, so `pulumi preview` shows the replacement and `pulumi up`
 *   submits it again; the create records the generation in the island's folder.
 */
export class SlurmJob<Result> extends pulumi.ComponentResource {
  /** The island's result line: job id, nodes, router and admin URLs (or the dry-run script path). */
  public readonly result: pulumi.Output<Result>;
  public readonly jobName: string;
  public readonly command: command.remote.Command;

  constructor(name: string, args: SlurmJobArgs<Result>, opts?: pulumi.ComponentResourceOptions) {
    super(SLURM_JOB_TYPE, name, {}, opts);
    const { secrets } = args;
    // Commands, names and bounds do not depend on the generation; the create's stdin and the trigger do.
    const job = args.job(0);
    const current = args.generation.apply((g) => atGeneration(args.job, job, g));
    this.jobName = job.jobName;
    const secretFiles = secrets
      ? new command.remote.Command(
          `${name}-secrets`,
          {
            connection: args.connection,
            create: secrets.files.create,
            stdin: pulumi.secret(secrets.payload),
            delete: secrets.files.delete,
            addPreviousOutputInEnv: false,
            logging: "stderr",
          },
          { parent: this, customTimeouts: customTimeouts(secrets.files.bound, secrets.files.bound) },
        )
      : undefined;
    this.command = new command.remote.Command(
      sbatchCommandName(name),
      {
        connection: args.connection,
        create: job.create,
        stdin: current.stdin,
        delete: job.delete,
        triggers: secrets ? [current.hash, job.dryRun, pulumi.secret(secrets.fingerprint)] : [current.hash, job.dryRun],
        // The provider can only pass the old stdout through AcceptEnv; delete does not need it.
        addPreviousOutputInEnv: false,
        // Progress lines on stderr reach `pulumi up`; stdout is the result line the program parses.
        logging: "stderr",
      },
      {
        parent: this,
        dependsOn: secretFiles ? [secretFiles] : [],
        // The SDK marks `triggers` replaceOnChanges itself; the old job goes before the new one comes.
        deleteBeforeReplace: true,
        // The commands bound themselves on the login node (job.bounds); these only follow them.
        customTimeouts: customTimeouts(job.bounds.create, job.bounds.delete),
      },
    );
    this.result = this.command.stdout.apply(args.parse);
    this.registerOutputs({ result: this.result });
  }
}
