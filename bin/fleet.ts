/**
 * Operating a fleet: `npm run fleet -- <verb> <stack> [options]`. See README "Fleet CLI".
 *
 *   status     PENDING / LAUNCHING / READY / FAILED / SHUTDOWN per island and process
 *   metrics    load, KV cache, throughput and prefix-cache hits of every engine (--watch)
 *   logs       the tail of each engine's (and the router's) log; --job adds the batch output
 *   endpoints  the trainer contract as the fleet reports it now
 *   list       the model catalog
 *   jobs       every fleet's job of yours on the cluster
 *   keep       checks the fleet every --every seconds and runs `pulumi up` when an island is gone
 *   cost       GPU-hours held per island, in all and since the last up, and the share spent serving
 *   wake       brings back the islands idle release scaled to zero (Kubernetes)
 *
 * Exit status: 0 when the question was answered (whatever the fleet's state), 1 when it could not
 * be (ssh or scheduler failure), 2 for a usage or stack-file error.
 */
import { Command } from "commander";
import { ConfigError, parseOverrides, type Override } from "../components/config";
import {
  endpointsCommand,
  engineTargets,
  logsScript,
  metricsRows,
  scrapeAll,
  scrapeThroughCluster,
  logsThroughCluster,
  statusCommand,
  type FleetStatusReport,
} from "../components/ops/commands";
import { replaceHintText } from "../components/ops/replace-hint";
import { endpointsText, jobsText, metricsText, statusText } from "../components/ops/render-text";
import { jobsSource, resolveSource, type SourceOptions } from "../components/ops/source";
import { runChecked } from "../components/ops/remote";
import { catalogCommand } from "../components/ops/catalog-list";
import { keep, KEEP_DEFAULTS, type KeepOptions } from "../components/ops/keep";
import { pulumiUp } from "../components/ops/pulumi-up";
import { costCommand } from "../components/ops/cost-command";
import { costText } from "../components/ops/cost";
import { targetOf } from "../components/targets";
import { addOptions, type Opts, type Verb } from "./fleet-options";
import { OVERRIDES_HELP, ourCommand, runCommandAsync, UsageError, type CommandFactory } from "./cli";

const STACK_HELP =
  "a stack name (a file under stacks/, or a Pulumi stack with Pulumi.<stack>.yaml) or the path of a stack file";

function source(stack: string | undefined, o: Opts, overrides: Override[], cmd: Command) {
  const so: SourceOptions = {
    stack,
    endpoints: o.endpoints,
    service: o.service,
    pulumiConfig: o.pulumiConfig,
    overrides,
    login: o.login,
    identity: o.identity,
    sshOptions: o.sshOption ?? [],
    local: o.local ?? false,
    ...(o.kubeconfig ? { kubeconfig: o.kubeconfig } : {}),
    ...(o.context ? { context: o.context } : {}),
  };
  if (!so.stack && !so.endpoints) throw new UsageError("name a stack (or pass --endpoints <file>)", cmd);
  return resolveSource(so);
}

function needShell(src: ReturnType<typeof resolveSource>, cmd: Command) {
  const target = targetOf(src.view.target);
  if (target.fleet.shell === "login" && !src.shell) {
    throw new UsageError(
      `${cmd.name()} on a ${target.title} fleet needs the login node: --login user@host[:port], --local on the login node, or vllm-fleet:login in Pulumi.<stack>.yaml`,
      cmd,
    );
  }
}

/** A verb's fleet: its stack and overrides planned, with the shell its target needs. */
function fleetOf(o: Opts, cmd: Command) {
  const { stack, overrides } = stackAndOverrides(cmd);
  const src = source(stack, o, overrides, cmd);
  needShell(src, cmd);
  return src;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A job that ended is invisible to `pulumi up` and `refresh` (remote.Command has no read): when
 * status saw one gone, it says so on stderr with the `pulumi up --replace` that starts a new one.
 */
function printReplaceHint(report: FleetStatusReport, err: (s: string) => void): void {
  if (report.replace) err(replaceHintText(report.replace));
}

/** The stack (first argument) and overrides of a verb: commander leaves both, in order, in args. */
function stackAndOverrides(cmd: Command): { stack?: string; overrides: Override[] } {
  const { overrides, rest } = parseOverrides(cmd.args);
  if (rest.length > 1) throw new UsageError(`one stack, not ${rest.length}: ${rest.join(" ")}`, cmd);
  return { stack: rest[0], overrides };
}

const FLEET_HELP_AFTER = `
Each verb has its own --help (fleet status --help).

Exit status: 0 when the question was answered, whatever the fleet's state; 1
when it could not be (ssh or scheduler failure); 2 for a usage or stack-file
error.
`;

export const fleetCommand: CommandFactory = (io, exit) => {
  const { out, err } = io;
  /** A verb's action: errors other than usage and stack-file ones (ssh, scheduler, files) are printed, exit 1. */
  const answer =
    <A extends unknown[]>(fn: (...a: A) => Promise<void> | void) =>
    async (...a: A) => {
      try {
        await fn(...a);
      } catch (e) {
        if (e instanceof UsageError || e instanceof ConfigError) throw e;
        err(`${(e as Error).message}\n`);
        exit(1);
      }
    };
  const program = ourCommand("fleet", io, true)
    .description(
      "What is my fleet doing: the state, load, logs and endpoints of a deployed stack, read from SLURM (over ssh) and the engines themselves, without Pulumi.",
    )
    .usage("<verb> [options] [stack] [--<key.path> <value> ...]")
    .enablePositionalOptions()
    .addHelpText("after", FLEET_HELP_AFTER)
    .action((_opts: unknown, self: Command) => {
      throw new UsageError(self.args.length ? `unknown verb "${self.args[0]}"` : "no verb", self);
    });
  const verb = (name: Verb, summary: string, description: string) => {
    const cmd = addOptions(ourCommand(name, io, true), name)
      .summary(summary)
      .description(description);
    program.addCommand(cmd);
    return cmd;
  };
  const fleetVerb = (name: Verb, summary: string, description: string) =>
    verb(name, summary, description)
      .usage("[options] [stack] [--<key.path> <value> ...]")
      .argument("[stack]", STACK_HELP)
      .addHelpText("after", OVERRIDES_HELP + "\n");

  fleetVerb(
    "status",
    "PENDING / LAUNCHING / READY / FAILED / SHUTDOWN per island and process",
    "The state of every island and process: PENDING (queued, with SLURM's reason), LAUNCHING, READY (/health and /v1/models answer), FAILED (which process, and why) or SHUTDOWN. A Kubernetes fleet named by its stack is read from the API server (pods, workloads, events): READY means its pods are Ready.",
  ).action(
    answer(async (_stack: unknown, o: Opts, cmd: Command) => {
      const src = fleetOf(o, cmd);
      const report = await statusCommand(src.view, src.shell, src.cluster);
      out(o.json ? JSON.stringify(report, null, 2) + "\n" : statusText(report) + "\n");
      printReplaceHint(report, err);
      exit(0);
    }),
  );

  fleetVerb(
    "metrics",
    "load, KV cache, throughput and prefix-cache hits of every engine (--watch)",
    "Every engine's /metrics, scraped twice --interval apart: running and waiting requests, KV-cache usage, tokens/s and requests/s, prefix-cache hit rate, and the fleet's total.",
  ).action(
    answer(async (_stack: unknown, o: Opts, cmd: Command) => {
      const src = fleetOf(o, cmd);
      const interval = Number(o.interval ?? 2);
      if (!(interval > 0)) throw new UsageError("--interval must be a positive number of seconds", cmd);
      // Kubernetes: through the API server's pod proxy (the engines' addresses are in-cluster).
      const viaCluster = await scrapeThroughCluster(src.view, src.cluster);
      const engines = viaCluster?.engines ?? (await engineTargets(src.view, src.shell));
      if (!engines.length) {
        err("no engine has an address yet (is the job running? try `fleet status`)\n");
        return exit(1);
      }
      const scrape = viaCluster?.scrape ?? (() => scrapeAll(engines));
      let before = await scrape();
      for (;;) {
        await sleep(interval * 1000);
        const now = await scrape();
        const { rows, total } = metricsRows(engines, now, before);
        if (o.json)
          out(JSON.stringify({ at: new Date().toISOString(), model: src.view.model, total, engines: rows }) + "\n");
        else out((o.watch ? "\x1b[2J\x1b[H" : "") + metricsText(src.view.model, rows, total) + "\n");
        if (!o.watch) return exit(0);
        before = now;
      }
    }),
  );

  fleetVerb(
    "logs",
    "the tail of each engine's (and the router's) log; --job adds the batch output",
    "The tail of each engine's and the router's log in the job's (or local run's) latest attempt, read on the login node or this machine; on Kubernetes each engine container's log through the API server (as kubectl logs --tail).",
  ).action(
    answer(async (_stack: unknown, o: Opts, cmd: Command) => {
      const src = fleetOf(o, cmd);
      const wantedIds = o.process;
      const tail = Number(o.n ?? 40);
      if (!Number.isInteger(tail) || tail < 1) throw new UsageError("-n must be a positive whole number", cmd);
      if (src.cluster) {
        if (o.job) throw new UsageError("--job reads a batch job's output: a Kubernetes fleet has none", cmd);
        const logs = await logsThroughCluster(
          src.view,
          src.cluster,
          (id) => !wantedIds || wantedIds.includes(id),
          tail,
        );
        out(logs.text);
        return exit(logs.failed ? 1 : 0);
      }
      if (!src.shell)
        throw new UsageError(
          "logs reads the log files where the fleet runs (the login node for SLURM, this machine for local) or, from a Kubernetes stack, through the API server: give the stack, not --endpoints",
          cmd,
        );
      if (src.view.islands.some((i) => !i.islandDir))
        throw new UsageError("logs needs the stack file (where the logs are), not --endpoints", cmd);
      const run = await src.shell.run(
        logsScript(src.view, (id) => !wantedIds || wantedIds.includes(id), tail, o.job ?? false),
      );
      out(run.stdout);
      if (run.code !== 0) {
        err(run.stderr);
        return exit(1);
      }
      exit(0);
    }),
  );

  fleetVerb(
    "endpoints",
    "the trainer contract as the fleet reports it now",
    "The trainer contract (router and admin URLs, client blocks) as each island's job wrote it to endpoints.json.",
  ).action(
    answer(async (_stack: unknown, o: Opts, cmd: Command) => {
      const { stack, overrides } = stackAndOverrides(cmd);
      const src = source(stack, o, overrides, cmd);
      const { endpoints, missing } = await endpointsCommand(src.view, src.shell);
      // The contract is whole or it is not given: a trainer must not start on part of a fleet.
      if (missing.length) {
        err(
          `island(s) ${missing.join(", ")}: no endpoints.json yet (it is written once every endpoint serves; see \`fleet status\`)\n`,
        );
        return exit(1);
      }
      out(o.json ? JSON.stringify(endpoints, null, 2) + "\n" : endpointsText(endpoints) + "\n");
      exit(0);
    }),
  );

  fleetVerb(
    "keep",
    "checks the fleet every --every seconds and runs `pulumi up` when an island is gone",
    "For the hours nobody watches: checks the fleet as `fleet status` does, and when an island's job (SLURM) or run (local) is gone (ended, and not by pulumi destroy), runs `pulumi up --yes --stack <stack>` in this project, which starts exactly the gone islands again. At most --max-ups ups within --window seconds; past that it gives up (exit 1). Every line it logs is timestamped; a failed check does nothing and says so.",
  ).action(
    answer(async (_stack: unknown, o: Opts, cmd: Command) => {
      const src = fleetOf(o, cmd);
      const pulumiStack = src.view.stack;
      if (!pulumiStack || !targetOf(src.view.target).fleet.scheduler)
        throw new UsageError("keep needs a stack deployed on SLURM or this machine (not --endpoints alone)", cmd);
      const number = (flag: string, v: string | undefined, d: number, min: number) => {
        const n = v === undefined ? d : Number(v);
        if (!Number.isInteger(n) || n < min) throw new UsageError(`${flag} must be a whole number >= ${min}`, cmd);
        return n;
      };
      const opts: KeepOptions = {
        every: number("--every", o.every, KEEP_DEFAULTS.every, 1),
        maxUps: number("--max-ups", o.maxUps, KEEP_DEFAULTS.maxUps, 0),
        window: number("--window", o.window, KEEP_DEFAULTS.window, 1),
        once: o.once ?? false,
      };
      let stop = false;
      const onSignal = () => (stop = true);
      process.on("SIGINT", onSignal).on("SIGTERM", onSignal);
      try {
        const code = await keep(opts, {
          check: () => statusCommand(src.view, src.shell, src.cluster),
          up: () => pulumiUp(pulumiStack),
          log: (line) => out(`[${new Date().toISOString()}] ${line}\n`),
          sleep: async (seconds) => {
            for (let t = 0; t < seconds * 10 && !stop; t++) await sleep(100);
          },
          now: () => Date.now(),
          stopped: () => stop,
        });
        exit(code);
      } finally {
        process.off("SIGINT", onSignal).off("SIGTERM", onSignal);
      }
    }),
  );

  fleetVerb(
    "cost",
    "GPU-hours held per island, in all and since the last up, and the share spent serving",
    "The GPU-hours each island has held, over every job (SLURM) or run (local) it has had and since the last `pulumi up` (its current one), from the scheduler's own accounting: sacct's elapsed time x allocated GPUs (scontrol where sacct does not know the job; the plan's GPU count where the cluster counts none), or the run's start time on this machine x the plan's GPUs. Each split by the island's activity ledger into busy (serving), idle, paused, unseen and unrecorded; priced by cost.gpu_hour_price when the stack sets one. Exit 1 when the scheduler did not answer, or some job's time was not seen (the report names it and its sums are lower bounds).",
  ).action(
    answer(async (_stack: unknown, o: Opts, cmd: Command) => {
      const src = fleetOf(o, cmd);
      const report = await costCommand(src.view, src.shell, src.cluster);
      out(o.json ? JSON.stringify(report, null, 2) + "\n" : costText(report) + "\n");
      if (!report.complete) {
        err("some jobs' time was not seen (listed in the report): the sums are lower bounds\n");
        return exit(1);
      }
      exit(0);
    }),
  );

  fleetVerb(
    "wake",
    "brings back the islands idle release scaled to zero (Kubernetes)",
    "Kubernetes: each island whose activity monitor released it after idle_release_after (`fleet status` says IDLE-RELEASED) has its engine workloads scaled back to their planned replicas and its release mark cleared; islands that were not released are left as they are. On SLURM and this machine a released island's job or run has ended: `pulumi up` starts it again (docs/idle-release.md). Exit 1 when the API server did not answer.",
  ).action(
    answer(async (_stack: unknown, o: Opts, cmd: Command) => {
      const src = fleetOf(o, cmd);
      const target = targetOf(src.view.target);
      const wake = target.fleet.cluster?.wake;
      if (!wake)
        throw new UsageError(
          `wake scales a Kubernetes fleet's released islands back; a ${target.title} fleet's released island ended: pulumi up starts it again`,
          cmd,
        );
      if (!src.cluster) throw new UsageError("wake reads the cluster's API: name the stack, not --endpoints", cmd);
      const woken = await wake(src.cluster.plan, src.cluster.access);
      if (o.json) out(JSON.stringify({ woken }, null, 2) + "\n");
      else if (!woken.length) out("no island is idle-released: nothing to wake\n");
      else for (const w of woken) out(`island ${w.island}: woken; ${w.detail}\n`);
      exit(0);
    }),
  );

  verb(
    "jobs",
    "every fleet's job of yours on the cluster",
    "Every job vllm-fleet submitted for you that SLURM still knows (queued or running), whatever its stack: id (a co-scheduled island's as <id>+<k>), name, state, elapsed and limit, nodes, and where it runs or why it waits. Asks the login node of --login, --local or a stack's Pulumi config.",
  )
    .usage("[options] [stack]")
    .argument("[stack]", `${STACK_HELP}: where its login node is (vllm-fleet:login)`)
    .action(
      answer(async (_stack: unknown, o: Opts, cmd: Command) => {
        const { stack, overrides } = stackAndOverrides(cmd);
        const { target, shell } = jobsSource({
          stack,
          overrides,
          pulumiConfig: o.pulumiConfig,
          login: o.login,
          identity: o.identity,
          sshOptions: o.sshOption ?? [],
          local: o.local ?? false,
        });
        const jobs = targetOf(target).fleet.jobs;
        if (!jobs) throw new UsageError(`a ${targetOf(target).title} fleet has no jobs to list`, cmd);
        if (!shell)
          throw new UsageError(
            "jobs asks the login node: --login user@host[:port], --local on the login node, or a stack whose Pulumi.<stack>.yaml sets vllm-fleet:login",
            cmd,
          );
        const listed = jobs.parse(await runChecked(shell, jobs.script(), "the job listing"));
        out(o.json ? JSON.stringify(listed, null, 2) + "\n" : jobsText(listed) + "\n");
        exit(0);
      }),
    );

  verb(
    "list",
    "the model catalog",
    "The model catalog (components/config/catalog/models.yaml, and --catalog's file merged over it), or one entry in full.",
  )
    .usage("[options] [model]")
    .argument("[model]", "a Hugging Face model id or one of its aliases: show that entry in full")
    .action(
      answer((_model: unknown, o: Opts, cmd: Command) => {
        const { rest } = parseOverrides(cmd.args);
        out(catalogCommand(rest[0], o.catalog, o.json ?? false) + "\n");
        exit(0);
      }),
    );
  return program;
};

export async function main(
  argv: string[],
  out: (s: string) => void = (s) => process.stdout.write(s),
  err: (s: string) => void = (s) => process.stderr.write(s),
): Promise<number> {
  try {
    return await runCommandAsync(fleetCommand, argv, { out, err });
  } catch (e) {
    err(`${(e as Error).message}\n`);
    return 1;
  }
}

if (require.main === module) void main(process.argv.slice(2)).then((code) => (process.exitCode = code));
