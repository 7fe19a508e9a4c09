/**
 * `npm run schema` (or `npx vllm-fleet schema`): writes schema/stack.schema.json, the JSON Schema of
 * a stack file, from the zod schema, so TOML editors (Even Better TOML / Taplo) complete and check
 * keys. Stack files point at it with a first line `#:schema ../schema/stack.schema.json`.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { z } from "zod";
import { stackFileSchema } from "../components/config/schema/layouts";
import { packagePath } from "../components/package-root";
import { ourCommand, runCommand, type CommandFactory } from "./cli";

/** `type` may be omitted on these tables (the loader inserts the default), so it is not required. */
const OPTIONAL_TYPE_DEFAULTS = new Set(["single_node", "vllm-router", "vllm"]);

function relaxDefaultTypes(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(relaxDefaultTypes);
  if (!node || typeof node !== "object") return;
  const obj = node as Record<string, any>;
  const constType = obj.properties?.type?.const;
  if (typeof constType === "string" && OPTIONAL_TYPE_DEFAULTS.has(constType) && Array.isArray(obj.required)) {
    obj.required = obj.required.filter((k: string) => k !== "type");
  }
  Object.values(obj).forEach(relaxDefaultTypes);
}

/** `model = "<id>"` is accepted as shorthand for the [model] table (the loader expands it). */
function allowModelShorthand(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(allowModelShorthand);
  if (!node || typeof node !== "object") return;
  const obj = node as Record<string, any>;
  if (obj.properties?.model?.properties?.name && obj.properties.model.type === "object") {
    obj.properties.model = { anyOf: [{ type: "string", minLength: 1, description: "Model id (shorthand for [model] name)" }, obj.properties.model] };
  }
  Object.values(obj).forEach(allowModelShorthand);
}

export function stackJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(stackFileSchema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  relaxDefaultTypes(schema);
  allowModelShorthand(schema);
  return { ...schema, title: "vllm-fleet stack file", description: "One deployment shape of a vLLM inference fleet (standalone or RL-embedded layout)." };
}

export const schemaCommand: CommandFactory = (io, exit) =>
  ourCommand("schema", io, false)
    .description("Writes schema/stack.schema.json, the JSON Schema of a stack file made from the zod schema, so TOML editors (Even Better TOML / Taplo) complete and check keys; stack files point at it with a first line `#:schema ../schema/stack.schema.json`. Takes no arguments.")
    .action(() => {
      const out = packagePath("schema", "stack.schema.json");
      fs.mkdirSync(path.dirname(out), { recursive: true });
      fs.writeFileSync(out, JSON.stringify(stackJsonSchema(), null, 2) + "\n");
      io.out(`wrote ${path.relative(process.cwd(), out)}\n`);
      exit(0);
    });

export function main(argv: string[]): number {
  return runCommand(schemaCommand, argv);
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
