import eppManifest from "./llm-d-epp.json";
import mooncakeManifest from "./mooncake.json";
import routerManifest from "./vllm-router.json";
import slurmManifest from "./slurm.json";
import vllmManifest from "./vllm-serve.json";

interface Spec {
  type: string;
  negatable?: boolean;
  negative_form?: string;
  nargs?: string;
  choices?: (string | number)[];
  aliases?: string[];
  value_optional?: boolean;
}

export type Program = "vllm" | "vllm-router" | "epp" | "mooncake_master" | "mooncake_client" | "sbatch" | "srun";

const TABLES: Record<Program, Record<string, Spec>> = {
  vllm: vllmManifest.flags as Record<string, Spec>,
  "vllm-router": routerManifest.flags as Record<string, Spec>,
  epp: eppManifest.flags as Record<string, Spec>,
  mooncake_master: mooncakeManifest.master_flags as Record<string, Spec>,
  mooncake_client: mooncakeManifest.client_flags as Record<string, Spec>,
  sbatch: slurmManifest.sbatch_flags as Record<string, Spec>,
  srun: slurmManifest.srun_flags as Record<string, Spec>,
};

/** Flags that take several values until the next flag (clap num_args / argparse nargs). */
const MULTI = (s: Spec) => s.type === "list" && (s.nargs === "+" || s.nargs === "*" || s.nargs === "0..");

/**
 * Checks a generated command line against the upstream flag manifest: every flag exists, takes a
 * value when it must, and values match choices and numeric types. Returns the problems found. It
 * reads `--flag value` and `--flag=value`; gflags programs use `--name=value` as we emit them.
 */
export function checkArgv(program: Program, args: string[]): string[] {
  const table = TABLES[program];
  const problems: string[] = [];
  const negations = new Map<string, Spec>();
  for (const spec of Object.values(table)) if (spec.negative_form) negations.set(spec.negative_form, spec);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith("-") || arg === "-") continue; // positional (model, script path)
    const eq = arg.indexOf("=");
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    const spec = table[name] ?? negations.get(name);
    if (!spec) {
      problems.push(`${program}: unknown flag ${name}`);
      continue;
    }
    if (negations.has(name) || spec.type === "bool") {
      if (eq > 0 && !["mooncake_master", "mooncake_client", "epp"].includes(program))
        problems.push(`${program}: ${name} takes no value`);
      continue;
    }
    if (eq > 0) {
      problems.push(...checkValue(program, name, spec, arg.slice(eq + 1)));
      continue;
    }
    // getopt optional_argument: a value only ever comes as --flag=value; the bare flag is valid alone.
    if (spec.value_optional) continue;
    const value = args[i + 1];
    if (value === undefined || (value.startsWith("--") && spec.type !== "str")) {
      problems.push(`${program}: ${name} needs a value`);
      continue;
    }
    i++;
    problems.push(...checkValue(program, name, spec, value));
    if (MULTI(spec)) while (i + 1 < args.length && !args[i + 1].startsWith("--")) i++;
  }
  return problems;
}

function checkValue(program: Program, name: string, spec: Spec, value: string): string[] {
  if (spec.choices && !spec.choices.map(String).includes(value))
    return [`${program}: ${name} ${value} is not one of ${spec.choices.join(", ")}`];
  if (spec.type === "int" && !/^-?\d+$/.test(value)) return [`${program}: ${name} expects an integer, got ${value}`];
  if (spec.type === "float" && Number.isNaN(Number(value)))
    return [`${program}: ${name} expects a number, got ${value}`];
  if (spec.type === "json") {
    try {
      JSON.parse(value);
    } catch {
      return [`${program}: ${name} expects JSON, got ${value}`];
    }
  }
  return [];
}
