/** A co-scheduled stack under Pulumi mocks: ONE sbatch command for every island of every service. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { loadStackText } from "../../components/config";
import { buildStackPlan } from "../../components/planner";
import { coScheduledGroups, renderHetjob } from "../../components/slurm/hetjob";
import type { SlurmIslandOutputs } from "../../components/slurm/deploy";
import { stackText } from "../helpers";
import {
  drainRpcs,
  FAKE_JOB_ID,
  fakeAddr,
  installMocks,
  type Registered,
  setConfig,
  settle,
  slurmConfig,
  value,
} from "../program-harness";

afterEach(drainRpcs);

async function program(stack: string, config: Record<string, string>, secretKeys?: string[]) {
  const registered = installMocks(stack);
  setConfig(config, secretKeys);
  vi.resetModules();
  const infra = await import("../../index");
  return { infra, registered };
}

const commands = (rs: Registered[]) => rs.filter((r) => r.type === "command:remote:Command");

describe("the Pulumi program under mocks (SLURM, co-scheduled services)", () => {
  it("policy-and-judge: one heterogeneous job, the parts of every island, each island's outputs from its component", async () => {
    const { infra, registered } = await program("policy-and-judge", slurmConfig());
    const islands = (await value(infra.islands)) as SlurmIslandOutputs[];
    await settle(registered);
    const cmds = commands(registered);
    expect(cmds.map((c) => c.name)).toEqual(["policy-and-judge-cosched-sbatch"]);
    const stack = buildStackPlan(loadStackText(stackText("policy-and-judge"), "test.toml"), "policy-and-judge");
    const job = renderHetjob(coScheduledGroups(stack)[0]);
    expect(cmds[0].inputs).toMatchObject({
      create: job.create,
      stdin: job.stdin,
      delete: job.delete,
      triggers: [job.scriptHash, false],
    });
    expect(cmds[0].options.deleteBeforeReplace).toBe(true);
    expect(islands.map((i) => [i.jobName, i.jobId, i.island, i.nodes.map((n) => n.addr)])).toEqual([
      ["policy-and-judge-cosched", `${FAKE_JOB_ID}+0`, 0, [fakeAddr(0), fakeAddr(1)]],
      ["policy-and-judge-cosched", `${FAKE_JOB_ID}+1`, 0, [fakeAddr(2)]],
    ]);
    expect(islands[1].routerUrl).toMatch(new RegExp(`^http://${fakeAddr(2).replace(/\./g, "\\.")}:\\d+/v1$`));
    const names = registered.map((r) => `${r.type} ${r.name}`);
    expect(names).toContain("vllm-fleet:slurm:Job policy-and-judge-cosched");
    expect(names.filter((n) => n.startsWith("vllm-fleet:fleet:Router "))).toHaveLength(2);
    expect(names.filter((n) => n.startsWith("vllm-fleet:fleet:VllmReplica "))).toHaveLength(3);
    const endpoints = (await value(infra.endpoints)) as any;
    expect(Object.keys(endpoints.services)).toEqual(["policy", "judge"]);
  });

  it("writes the credentials' files once, for the whole job, before it", async () => {
    const { infra, registered } = await program("policy-and-judge", slurmConfig({ apiKey: "sk-hetjob-test-key" }), [
      "vllm-fleet:sshPrivateKey",
      "vllm-fleet:apiKey",
    ]);
    await value(infra.islands);
    await settle(registered);
    const cmds = commands(registered);
    expect(cmds.map((c) => c.name).sort()).toEqual(
      ["policy-and-judge-cosched-secrets", "policy-and-judge-cosched-sbatch"].sort(),
    );
    const secrets = cmds.find((c) => c.name.endsWith("-secrets"))!;
    expect(secrets.inputs.create).toContain("vllm-fleet/policy-and-judge/cosched/secrets");
    expect(cmds.find((c) => c.name.endsWith("-sbatch"))!.options.dependsOn.join()).toContain("secrets");
    for (const c of cmds)
      expect(JSON.stringify([c.inputs.create, c.inputs.delete])).not.toContain("sk-hetjob-test-key");
  });

  it("co_schedule = false keeps one job per island", async () => {
    const text = stackText("policy-and-judge").replace(
      'partition = "cluster"',
      'partition = "cluster"\nco_schedule = false',
    );
    const fs = await import("node:fs");
    const os = await import("node:os");
    const path = await import("node:path");
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "hetjob-off-"));
    const file = path.join(dir, "stack.toml");
    fs.writeFileSync(file, text);
    const { infra, registered } = await program("policy-and-judge", slurmConfig({ stackFile: file }));
    const islands = (await value(infra.islands)) as SlurmIslandOutputs[];
    await settle(registered);
    expect(
      commands(registered)
        .map((c) => c.name)
        .sort(),
    ).toEqual(["policy-and-judge-judge-i0-sbatch", "policy-and-judge-policy-i0-sbatch"].sort());
    expect(islands.map((i) => i.jobId)).toEqual([FAKE_JOB_ID, FAKE_JOB_ID]);
  });
});
