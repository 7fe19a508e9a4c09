/**
 * Render snapshot: `npx tsx test/snapshot/snapshot.ts <out dir>` writes, for every stack in stacks/,
 * what the Pulumi program registers under mocks (each resource's inputs, one JSON file per stack,
 * plain and with credentials configured), the stack outputs, and everything `plan --out` writes.
 * Two snapshots taken before and after a refactor compare with `diff -r`: the rendered scripts and
 * objects must be byte-identical unless a named fix changed them.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { installMocks, settle, setConfig, slurmConfig, value } from "../program-harness";
import { requireProgramFresh, ROOT } from "../e2e/program-capture";

const CREDS = { hfToken: "hf_SNAPSHOT_token", apiKey: "sk-SNAPSHOT-key" };

async function programSnapshot(stack: string, creds: boolean): Promise<unknown> {
  const registered = installMocks(stack);
  const k8s = stack.startsWith("k8s-");
  const base: Record<string, string> = k8s ? {} : slurmConfig();
  if (creds) for (const [k, v] of Object.entries(CREDS)) base[`vllm-fleet:${k}`] = v;
  setConfig(
    base,
    ["vllm-fleet:sshPrivateKey", "vllm-fleet:hfToken", "vllm-fleet:apiKey"].filter((k) => k in base),
  );
  const infra = await requireProgramFresh();
  const outputs: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(infra).sort(([a], [b]) => a.localeCompare(b))) outputs[k] = await value(v as any);
  await settle(registered);
  const resources = registered
    .map((r) => ({
      type: r.type,
      name: r.name,
      inputs: r.inputs,
      secretInputs: r.secretInputs,
      // dependsOn as sorted URN tails (type::name): what the engine orders, independent of registration order.
      options: {
        ...r.options,
        parent: undefined,
        dependsOn: r.options.dependsOn.map((urn) => urn.split("::").slice(-2).join("::")).sort(),
      },
    }))
    .sort((a, b) => `${a.type}/${a.name}`.localeCompare(`${b.type}/${b.name}`));
  return { outputs, resources };
}

async function main(out: string) {
  const stacks = fs
    .readdirSync(path.join(ROOT, "stacks"))
    .filter((f) => f.endsWith(".toml"))
    .map((f) => f.slice(0, -5))
    .sort();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { main: planMain } = require("../../bin/plan");
  for (const stack of stacks) {
    for (const creds of [false, true]) {
      const snap = await programSnapshot(stack, creds);
      fs.mkdirSync(path.join(out, "program"), { recursive: true });
      fs.writeFileSync(
        path.join(out, "program", `${stack}${creds ? "+creds" : ""}.json`),
        JSON.stringify(snap, null, 1) + "\n",
      );
    }
    const write = process.stdout.write.bind(process.stdout);
    let text = "";
    (process.stdout as any).write = (s: string) => ((text += s), true);
    const err = process.stderr.write.bind(process.stderr);
    (process.stderr as any).write = () => true;
    try {
      planMain([stack, "--out", path.join(out, "plan-out", stack)]);
      planMain([stack, "--json"]);
    } finally {
      process.stdout.write = write;
      process.stderr.write = err;
    }
    // A stack plan --out writes nothing for (one it refuses) still gets its stdout.txt.
    fs.mkdirSync(path.join(out, "plan-out", stack), { recursive: true });
    fs.writeFileSync(path.join(out, "plan-out", stack, "stdout.txt"), text);
    console.log(`snapshot ${stack}`);
  }
}

main(path.resolve(process.argv[2] ?? "snapshot")).catch((e) => {
  console.error(e);
  process.exit(1);
});
