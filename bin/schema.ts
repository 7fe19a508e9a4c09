/**
 * `npm run schema` (or `npx vllm-fleet schema`): writes schema/stack.schema.json, the JSON Schema of
 * a stack file, from the zod schema, so TOML editors (Even Better TOML / Taplo) complete and check
 * keys. Stack files point at it with a first line `#:schema ../schema/stack.schema.json`.
 * schema/prime-rl.schema.json is the same for prime-rl's layout (schema/prime.ts, with the
 * descriptions and prime-rl defaults of schema/prime-docs.ts). From the same JSON Schemas it writes
 * docs/stack-file.md, the key reference (components/config/key-reference.ts). Also
 * schema/endpoints.schema.json, the trainer contract (the `endpoints` output) from its zod schema, and
 * schema/island.schema.json, a running island's endpoints.json (what a trainer beside a SLURM job reads),
 * and schema/engines.json, each engine's routes and metric names for the Python client.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { z } from "zod";
import { keyReference } from "../components/config/key-reference";
import { stackFileSchema } from "../components/config/schema/layouts";
import {
  OLDER_ONLY,
  PRIME_MARKERS,
  primeRlLayout,
  primeSftLayout,
  primeStandaloneLayout,
} from "../components/config/schema/prime";
import { primeDocs } from "../components/config/schema/prime-docs";
import { endpointsOutputSchema } from "../components/trainer/contract";
import { runningIslandSchema } from "../components/host/island-result";
import { packagePath } from "../components/package-root";
import { engineFacts } from "../components/plan/engines";
import { ourCommand, runCommand, type CommandFactory } from "./cli";

/**
 * `model = "<id>"` is accepted as shorthand for the [model] table where the loader expands it: at
 * the root of a standalone file and under [inference] (not the RL layout's top-level [model]).
 */
function allowModelShorthand(schema: Record<string, any>): void {
  const holders = (schema.anyOf as Record<string, any>[]).flatMap((layout) =>
    layout.properties.services ? [layout.properties.services.additionalProperties] : [layout],
  );
  for (const layout of holders) {
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

/** Where prime-rl's layout's JSON Schema is written, relative to the package root. */
export const PRIME_SCHEMA_FILE = "schema/prime-rl.schema.json";

/**
 * prime-rl's layout (a standalone inference file, an RL file with [inference], or an SFT file whose
 * [inference] serves its online evals), with each key's
 * description and prime-rl default from schema/prime-docs.ts. A file in this layout points at it
 * with a first line `#:schema <path to>/schema/prime-rl.schema.json`.
 */
export function primeJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(z.union([primeStandaloneLayout, primeRlLayout, primeSftLayout]), {
    io: "input",
    unrepresentable: "any",
    override: (ctx) => {
      const doc = primeDocs.get(ctx.zodSchema);
      if (doc) Object.assign(ctx.jsonSchema, doc);
    },
  }) as Record<string, unknown>;
  return {
    ...schema,
    title: "vllm-fleet stack file in prime-rl's layout",
    description:
      "A prime-rl inference config (standalone, or an RL or SFT config with [inference]) as vllm-fleet deploys it; defaults are prime-rl's.",
  };
}

/** docs/stack-file.md: every key of the stack file, from the same JSON Schemas. */
export function stackKeyReference(): string {
  return keyReference(stackJsonSchema(), {
    schema: primeJsonSchema(),
    primeMarkers: PRIME_MARKERS,
    olderMarkers: OLDER_ONLY,
    schemaFile: PRIME_SCHEMA_FILE,
  });
}

/** The trainer contract as JSON Schema: what `pulumi stack output endpoints --json` prints. */
export function endpointsJsonSchema(): Record<string, unknown> {
  return {
    ...(z.toJSONSchema(endpointsOutputSchema, { io: "output" }) as Record<string, unknown>),
    title: "vllm-fleet trainer contract",
  };
}

/** A running island's result: <output_dir>/island-<k>/endpoints.json beside a SLURM or local job. */
export function islandJsonSchema(): Record<string, unknown> {
  return {
    ...(z.toJSONSchema(runningIslandSchema, { io: "input" }) as Record<string, unknown>),
    title: "vllm-fleet island result (<output_dir>/island-<k>/endpoints.json)",
  };
}

export const schemaCommand: CommandFactory = (io, exit) =>
  ourCommand("schema", io, false)
    .description(
      "Writes schema/stack.schema.json (the JSON Schema of a stack file, made from the zod schema, so TOML editors such as Even Better TOML / Taplo complete and check keys; stack files point at it with a first line `#:schema ../schema/stack.schema.json`), schema/prime-rl.schema.json (the same for a file in prime-rl's layout), schema/endpoints.schema.json (the trainer contract), schema/island.schema.json (a running island's endpoints.json), schema/engines.json (each engine's routes and metric names, which the Python client reads) and docs/stack-file.md (the key reference). Takes no arguments.",
    )
    .action(() => {
      const outputs: [string, string][] = [
        [packagePath("schema", "stack.schema.json"), JSON.stringify(stackJsonSchema(), null, 2) + "\n"],
        [packagePath(...PRIME_SCHEMA_FILE.split("/")), JSON.stringify(primeJsonSchema(), null, 2) + "\n"],
        [packagePath("schema", "endpoints.schema.json"), JSON.stringify(endpointsJsonSchema(), null, 2) + "\n"],
        [packagePath("schema", "island.schema.json"), JSON.stringify(islandJsonSchema(), null, 2) + "\n"],
        [packagePath("schema", "engines.json"), JSON.stringify(engineFacts(), null, 2) + "\n"],
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
