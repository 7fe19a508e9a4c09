/**
 * The dry run: `npm run plan -- <stack name or file> [--json] [--<key.path> <value> ...]`.
 * Needs no cluster and no Pulumi CLI. Invalid input exits 2 with every problem listed.
 */
import * as fs from "node:fs";
import { ConfigError, loadConfigFile, parseOverrides, TARGETS, type Target } from "../components/config";
import { buildPlan } from "../components/plan/plan";
import { planJson } from "../components/report/plan-json";
import { planText } from "../components/report/plan-text";
import { writePlanOut } from "../components/report/write-out";
import { listStacks, resolveStackFile } from "../components/stack-file";

const USAGE = "usage: npm run plan -- <stack name or file.toml> [--json] [--out <dir>] [--target slurm|kubernetes] [--<key.path> <value> ...]";

/** `--target slurm|kubernetes`: the backend of a file without a [slurm] or [kubernetes] table; the other arguments, or a problem. */
function takeTarget(argv: string[]): { target?: Target; rest: string[] } | string {
  const at = argv.indexOf("--target");
  if (at < 0) return { rest: argv };
  const target = argv[at + 1] as Target;
  if (!TARGETS.includes(target)) return `--target needs ${TARGETS.join(" or ")}`;
  return { target, rest: argv.filter((_, i) => i !== at && i !== at + 1) };
}

export function main(args: string[]): number {
  const picked = takeTarget(args);
  if (typeof picked === "string") {
    process.stderr.write(`${picked}\n${USAGE}\n`);
    return 2;
  }
  const { target, rest: argv } = picked;
  const json = argv.includes("--json");
  const outAt = argv.indexOf("--out");
  const out = outAt >= 0 ? argv[outAt + 1] : undefined;
  if (outAt >= 0 && !out) {
    process.stderr.write(`--out needs a directory\n${USAGE}\n`);
    return 2;
  }
  const own = new Set([outAt, outAt + 1].filter((i) => outAt >= 0 && i >= 0));
  const { overrides, rest } = parseOverrides(argv.filter((a, i) => a !== "--json" && !own.has(i)));
  if (rest.length !== 1) {
    process.stderr.write(`${USAGE}\nstacks: ${listStacks().join(", ")}\n`);
    return 2;
  }
  const { file, stack } = resolveStackFile(rest[0]);
  if (!fs.existsSync(file)) {
    process.stderr.write(`no stack "${rest[0]}": ${file} does not exist\nstacks: ${listStacks().join(", ")}\n`);
    return 2;
  }
  try {
    const plan = buildPlan(loadConfigFile(file, overrides, { target }), stack);
    process.stdout.write((json ? JSON.stringify(planJson(plan), null, 2) : planText(plan, file)) + "\n");
    if (out) {
      const files = writePlanOut(plan, out);
      process.stderr.write(`wrote ${files.length} files to ${out}\n`);
    }
    return 0;
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(err.message + "\n");
      return 2;
    }
    throw err;
  }
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
