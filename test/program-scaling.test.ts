/**
 * Scaling a fleet must not restart what it keeps (issue 25): an island's resources, with their
 * inputs and options, are the same whether the stack has k or k+1 islands. On SLURM the job
 * script's hash is a replace trigger (components/slurm/slurm-job.ts), so one value in the script
 * that depended on the island count ("island 0 of 2") cancelled every running island on 1 -> 2.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { STACK_NAMES } from "./helpers";
import { drainRpcs, installMocks, setConfig, settle, slurmConfig, value, type Registered } from "./program-harness";

afterEach(drainRpcs);

/** The island count's key in an RL-layout file (standalone files have exactly one island). */
const ISLANDS_KEY = "deployment.num_infer_replicas";

async function registrations(stack: string, islands: number): Promise<Map<string, unknown> | undefined> {
  const registered: Registered[] = installMocks(stack);
  const extra = { stackFile: stack, overrides: { [ISLANDS_KEY]: islands } };
  const config = stack.startsWith("k8s-")
    ? Object.fromEntries(
        Object.entries(extra).map(([k, v]) => [`vllm-fleet:${k}`, typeof v === "string" ? v : JSON.stringify(v)]),
      )
    : slurmConfig(extra);
  setConfig(config);
  vi.resetModules();
  let infra: any;
  try {
    infra = await import("../index");
  } catch (e) {
    // Standalone and prime-rl layouts have no island count to scale (the key is refused, by name).
    if (String(e).includes(ISLANDS_KEY)) return undefined;
    throw e;
  }
  if ((await value(infra.islands)).length !== islands) return undefined;
  await settle(registered);
  return new Map(
    registered.map((r) => [
      `${r.type}::${r.name}`,
      {
        inputs: r.inputs,
        secretInputs: r.secretInputs,
        options: {
          ...r.options,
          parent: r.options.parent.split("::").slice(-1)[0],
          dependsOn: r.options.dependsOn.map((urn) => urn.split("::").slice(-1)[0]).sort(),
        },
      },
    ]),
  );
}

describe("scaling from k to k+1 islands leaves the first k untouched", () => {
  const scaled: string[] = [];
  for (const stack of STACK_NAMES) {
    it(`${stack}: every resource of 1 island is registered alike with 2 and with 3`, async () => {
      const one = await registrations(stack, 1);
      if (!one) return;
      const two = (await registrations(stack, 2))!;
      const three = (await registrations(stack, 3))!;
      for (const [before, after] of [
        [one, two],
        [two, three],
      ]) {
        expect(after.size).toBeGreaterThan(before.size);
        for (const [key, registration] of before) expect(after.get(key), key).toEqual(registration);
      }
      scaled.push(stack);
    });
  }
  it("covers both targets' multi-island stacks", () => {
    expect(scaled).toEqual(expect.arrayContaining(["multi-replica", "disaggregated-x3", "k8s-multi-replica"]));
    expect(scaled.length).toBeGreaterThanOrEqual(15);
  });
});
