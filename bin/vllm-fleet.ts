#!/usr/bin/env node
/**
 * The package's executable: `npx vllm-fleet <plan|fleet|schema> ...` runs the same commands as
 * `npm run plan`, `npm run fleet` and `npm run schema`, each with its own --help.
 */
import { fleetCommand } from "./fleet";
import { ourCommand, runCommandAsync, type CommandFactory } from "./cli";
import { planCommand } from "./plan";
import { schemaCommand } from "./schema";

export const vllmFleetCommand: CommandFactory = (io, exit) =>
  ourCommand("vllm-fleet", io, false)
    .description(
      "Plans and operates vLLM inference fleets described by TOML stack files (the deployment itself is `pulumi up`).",
    )
    .usage("<command> [options]")
    .enablePositionalOptions()
    .addCommand(planCommand(io, exit).summary("the dry run: the plan of a stack file, without a cluster"))
    .addCommand(
      fleetCommand(io, exit).summary(
        "what a deployed fleet is doing: status, metrics, logs, endpoints; the model catalog",
      ),
    )
    .addCommand(schemaCommand(io, exit).summary("write schema/stack.schema.json for TOML editors"))
    .addHelpText("after", "\nEach command has its own --help (vllm-fleet plan --help).\n");

export function main(argv: string[]): Promise<number> {
  return runCommandAsync(vllmFleetCommand, argv);
}

if (require.main === module) void main(process.argv.slice(2)).then((code) => (process.exitCode = code));
