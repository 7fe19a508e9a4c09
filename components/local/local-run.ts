import * as command from "@pulumi/command";
import * as pulumi from "@pulumi/pulumi";
import { parseIslandResult, type IslandResult } from "../host/island-result";
import type { TimeBound } from "../host/time-bound";
import type { LocalRun } from "./island-run";
import { atGeneration } from "../host/presence";

/** components/local/local-run.ts */
export const LOCAL_RUN_TYPE = "vllm-fleet:local:Run";

/**
 * customTimeouts past a command's own bound, so `timeout` (island-run.ts) is the one that acts and
 * the cleanup's last lines still reach `pulumi up`.
 */
const after = (b: TimeBound) => `${b.seconds + b.killAfter + 60}s`;

export interface LocalRunArgs {
  /** The rendered create/delete commands of one island (island-run.ts) at a revival generation. */
  run: (generation: number) => LocalRun;
  /** The generation the run is created with (host/presence.ts): one more than recorded when it is gone. */
  generation: pulumi.Output<number>;
  /** The island's credentials, each in its environment variable (secretEnv), and their fingerprint. */
  secrets?: { environment: pulumi.Output<Record<string, string>>; fingerprint: pulumi.Output<string> };
}

/**
 * One island's run on this machine, with the semantics of a SLURM island's job:
 *
 * - Create starts the supervisor detached (or adopts the one this same script started) and returns
 *   only when every endpoint serves; an engine that dies at start fails it, named, with its log tail,
 *   and nothing is left running.
 * - A new script hash (any change to what runs) or a new credential replaces the run, the old one
 *   stopped first (deleteBeforeReplace). Any other change is an in-place update that re-runs
 *   create, which adopts the running fleet.
 * - Delete stops exactly the recorded run (pid, start time, log folder) and succeeds when it is gone.
 * - local.Command has no Read, so the program asks this machine before planning (presence.ts): a
 *   run that ended behind Pulumi's back (an exhausted restart budget, a kill, a reboot) comes with
 *   the next revival generation in its trigger, so `pulumi preview` shows the replacement and
 *   `pulumi up` starts it again.
 * - Credentials reach create in its environment (a secret input, kept encrypted in the state), and
 *   it writes them to 0600 files; no command line holds them.
 */
export class LocalIslandRun extends pulumi.ComponentResource {
  public readonly result: pulumi.Output<IslandResult>;
  public readonly command: command.local.Command;

  constructor(name: string, args: LocalRunArgs, opts?: pulumi.ComponentResourceOptions) {
    super(LOCAL_RUN_TYPE, name, {}, opts);
    const { secrets } = args;
    // Commands and bounds do not depend on the generation; the create's stdin and the trigger do.
    const run = args.run(0);
    const current = args.generation.apply((g) => atGeneration(args.run, run, g));
    this.command = new command.local.Command(
      `${name}-run`,
      {
        create: run.create,
        stdin: current.stdin,
        delete: run.delete,
        ...(secrets ? { environment: pulumi.secret(secrets.environment) } : {}),
        triggers: secrets ? [current.hash, run.dryRun, pulumi.secret(secrets.fingerprint)] : [current.hash, run.dryRun],
        addPreviousOutputInEnv: false,
        // Progress on stderr reaches `pulumi up`; stdout is the result line the program parses.
        logging: "stderr",
      },
      {
        parent: this,
        deleteBeforeReplace: true,
        customTimeouts: {
          create: after(run.bounds.create),
          update: after(run.bounds.create),
          delete: after(run.bounds.delete),
        },
      },
    );
    this.result = this.command.stdout.apply(parseIslandResult);
    this.registerOutputs({ result: this.result });
  }
}
