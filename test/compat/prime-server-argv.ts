/**
 * Prints, as JSON, the command line of every engine vllm-fleet would start with prime-rl's server for
 * each stack in stacks/ written in prime-rl's layout (engine forced to "prime-rl"), host references
 * resolved to placeholder addresses. test/compat/prime-server-argv.py parses each with prime-rl's own
 * CLI (prime_rl.utils.config.cli on InferenceConfig), the way its `inference` entrypoint does. Not part
 * of `npm test` (it needs prime-rl's config package):
 *
 *   npx tsx test/compat/prime-server-argv.ts > /tmp/prime-argv.json
 *   PRIME_RL_DIR=/tmp/prime-rl /tmp/prl-venv/bin/python test/compat/prime-server-argv.py /tmp/prime-argv.json
 */
import { loadConfigFile, parseOverrides } from "../../components/config";
import { readsAsPrime } from "../../components/config/load";
import { parseToml } from "../../components/config/toml";
import { PRIME_INFERENCE_PROGRAM } from "../../components/plan/engines/vllm/argv";
import { buildPlan } from "../../components/planner";
import { resolveValue } from "../../components/plan/values";
import { listStacks, resolveStackFile } from "../../components/stack-file";
import * as fs from "node:fs";

const rows: { stack: string; engine: string; argv: string[] }[] = [];
for (const stack of listStacks()) {
  const { file } = resolveStackFile(stack);
  const parsed = parseToml(fs.readFileSync(file, "utf8"));
  if (!parsed.ok || !readsAsPrime(parsed.value)) continue;
  const cfg = loadConfigFile(file, parseOverrides(["--vllm_fleet.engine", "prime-rl"]).overrides);
  for (const island of buildPlan(cfg, stack).islands)
    for (const e of island.engines) {
      const argv = e.argv.map((v) => resolveValue(v, (r) => (r.ref === "file" ? "/tmp/x" : "10.0.0.1")));
      if (argv[0] !== PRIME_INFERENCE_PROGRAM) throw new Error(`${stack} ${e.id}: not prime-rl's server`);
      rows.push({ stack, engine: e.id, argv: argv.slice(1) });
    }
}
process.stdout.write(JSON.stringify(rows, null, 1) + "\n");
