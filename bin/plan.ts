/**
 * The dry run: `npm run plan -- <stack name or file> [--json] [--out <dir>] [--<key.path> <value> ...]`
 * (or `npx vllm-fleet plan ...`). Needs no cluster and no Pulumi CLI. Invalid input exits 2 with every
 * problem listed; `--help` prints the usage.
 */
import * as fs from "node:fs";
import { loadStackFile, parseOverrides, TARGETS, type TargetKind } from "../components/config";
import { buildStackPlan } from "../components/planner";
import { stackPlanJson } from "../components/report/plan-json";
import { stackPlanText } from "../components/report/plan-text";
import { writePlanOut } from "../components/report/write-out";
import { listStacks, missingStack, resolveStackFile } from "../components/stack-file";
import { Command, Help, Option } from "commander";
import { OVERRIDES_HELP, ourCommand, runCommand, UsageError, type CommandFactory } from "./cli";

/** The shipped stacks, wrapped and indented as commander lays out its own help. */
const stacksList = () =>
  new Help()
    .boxWrap(listStacks().join(", "), 78)
    .split("\n")
    .map((l) => `  ${l}`)
    .join("\n");

export const planCommand: CommandFactory = (io, exit) => {
  const cmd = ourCommand("plan", io, true)
    .description(
      "The dry run: the plan of a stack file (islands, nodes, GPU memory, engine and router command lines, endpoints), without a cluster or the Pulumi CLI. Invalid input exits 2 with every problem listed.",
    )
    .usage("[options] <stack> [--<key.path> <value> ...]")
    .argument("[stack]", "a stack name (a file under stacks/, with or without .toml) or the path of a stack file")
    .option("--json", "print the plan as one JSON object (with totals {nodes, gpus, routers, engines}) instead of text")
    .addOption(
      new Option(
        "--target <target>",
        "the backend for a stack file without a [slurm] or [kubernetes] table (a prime-rl file as prime-rl writes it); its keys then come from overrides",
      ).choices(TARGETS),
    )
    .option(
      "--out <dir>",
      "also write into <dir> what would be submitted: plan.json and, per island, the sbatch script, the files it generates and the create/delete commands (SLURM), or every Kubernetes object as YAML",
    )
    .addHelpText("after", () => `${OVERRIDES_HELP}\n\nStacks (under stacks/):\n${stacksList()}\n`)
    .action(
      (_stack: string | undefined, opts: { json?: boolean; out?: string; target?: TargetKind }, self: Command) => {
        // args holds the stack and the options commander does not know (the overrides, with their values).
        const { overrides, rest } = parseOverrides(self.args);
        if (rest.length !== 1)
          throw new UsageError(
            `${rest.length ? `one stack, not ${rest.length}: ${rest.join(" ")}` : "name a stack"}\nstacks: ${listStacks().join(", ")}`,
            self,
          );
        const { file, stack } = resolveStackFile(rest[0]);
        if (!fs.existsSync(file)) throw new UsageError(missingStack(rest[0]), self);
        const configs = loadStackFile(file, overrides, { target: opts.target });
        const plan = buildStackPlan(configs, stack);
        io.out((opts.json ? JSON.stringify(stackPlanJson(plan, configs), null, 2) : stackPlanText(plan, file)) + "\n");
        if (opts.out) {
          const files = writePlanOut(plan, configs, opts.out);
          io.err(`wrote ${files.length} files to ${opts.out}\n`);
        }
        exit(0);
      },
    );
  return cmd;
};

export function main(argv: string[]): number {
  return runCommand(planCommand, argv);
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
