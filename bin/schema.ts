/**
 * `npm run schema` (or `npx vllm-fleet schema`): writes schema/stack.schema.json, the JSON Schema of
 * a stack file, from the zod schema, so TOML editors (Even Better TOML / Taplo) complete and check
 * keys. Stack files point at it with a first line `#:schema ../schema/stack.schema.json`. From the
 * same JSON Schema it writes docs/stack-file.md, the key reference
 * (components/config/key-reference.ts). Also schema/endpoints.schema.json, the trainer contract
 * (the `endpoints` output) from its zod schema.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { z } from "zod";
import { keyReference } from "../components/config/key-reference";
import { stackFileSchema } from "../components/config/schema/layouts";
import { fleetEndpointsSchema } from "../components/trainer/contract";
import { packagePath } from "../components/package-root";
import { ourCommand, runCommand, type CommandFactory } from "./cli";

/**
 * `model = "<id>"` is accepted as shorthand for the [model] table where the loader expands it: at
 * the root of a standalone file and under [inference] (not the RL layout's top-level [model]).
 */
function allowModelShorthand(schema: Record<string, any>): void {
  for (const layout of schema.anyOf as Record<string, any>[]) {
    const holder = layout.properties.inference ?? layout;
    if (holder.properties?.model?.properties?.name && holder.properties.model.type === "object") {
      holder.properties.model = {
        anyOf: [
          { type: "string", minLength: 1, description: "Model id (shorthand for [model] name)" },
          holder.properties.model,
        ],
      };
    }
  }
}

/** The input side: a key with a default (a table's `type` among them) is optional and shows its default. */
export function stackJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(stackFileSchema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  allowModelShorthand(schema);
  return {
    ...schema,
    title: "vllm-fleet stack file",
    description: "One deployment shape of a vLLM inference fleet (standalone or RL-embedded layout).",
  };
}

/** docs/stack-file.md: every key of the stack file, from the same JSON Schema. */
export function stackKeyReference(): string {
  return keyReference(stackJsonSchema());
}

/** The trainer contract as JSON Schema: what `pulumi stack output endpoints --json` prints. */
export function endpointsJsonSchema(): Record<string, unknown> {
  return {
    ...(z.toJSONSchema(fleetEndpointsSchema, { io: "output" }) as Record<string, unknown>),
    title: "vllm-fleet trainer contract",
  };
}

export const schemaCommand: CommandFactory = (io, exit) =>
  ourCommand("schema", io, false)
    .description(
      "Writes schema/stack.schema.json (the JSON Schema of a stack file, made from the zod schema, so TOML editors such as Even Better TOML / Taplo complete and check keys; stack files point at it with a first line `#:schema ../schema/stack.schema.json`), schema/endpoints.schema.json (the trainer contract) and docs/stack-file.md (the key reference). Takes no arguments.",
    )
    .action(() => {
      const outputs: [string, string][] = [
        [packagePath("schema", "stack.schema.json"), JSON.stringify(stackJsonSchema(), null, 2) + "\n"],
        [packagePath("schema", "endpoints.schema.json"), JSON.stringify(endpointsJsonSchema(), null, 2) + "\n"],
        [packagePath("docs", "stack-file.md"), stackKeyReference()],
      ];
      for (const [out, text] of outputs) {
        fs.mkdirSync(path.dirname(out), { recursive: true });
        fs.writeFileSync(out, text);
        io.out(`wrote ${path.relative(process.cwd(), out)}\n`);
      }
      exit(0);
    });

export function main(argv: string[]): number {
  return runCommand(schemaCommand, argv);
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
