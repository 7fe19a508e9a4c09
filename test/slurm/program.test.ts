import * as os from "node:os";
import * as pulumi from "@pulumi/pulumi";
import { afterEach, describe, expect, it, vi } from "vitest";
import { loadConfigFile } from "../../components/config";
import { buildPlan } from "../../components/planner";
import { renderIslandJob } from "../../components/slurm/island-job";
import { sbatchCommandUrn } from "../../components/slurm";
import { resolveStackFile } from "../../components/stack-file";
import type { SlurmIslandOutputs } from "../../components/slurm/deploy";
import { SLURM_STACKS, singleService } from "../helpers";
import {
  drainRpcs,
  FAKE_JOB_ID,
  fakeAddr,
  fakeHost,
  installMocks,
  realUrl,
  type Registered,
  setConfig,
  settle,
  slurmConfig,
  value,
} from "../program-harness";

// A finished test's outstanding Pulumi RPCs must not reach the next test's mocks.
afterEach(drainRpcs);

/** SLURM stacks export SLURM island outputs (job id, nodes); the export is typed for both targets. */
const slurmIslands = (infra: { islands: any }) => value(infra.islands) as Promise<SlurmIslandOutputs[]>;

/** Imports index.ts afresh under mocks for `stack`, with the given Pulumi config. */
async function program(stack: string, config: Record<string, string>, opts: Parameters<typeof installMocks>[1] = {}) {
  const registered = installMocks(stack, opts);
  setConfig(config);
  vi.resetModules();
  const infra = await import("../../index");
  return { infra, registered };
}

const ofType = (rs: Registered[], type: string) => rs.filter((r) => r.type === type);
const commands = (rs: Registered[]) => ofType(rs, "command:remote:Command");

describe("the Pulumi program under mocks (SLURM)", () => {
  it("registers one job per island, wired for cancel-then-resubmit, and exports what the job reports", async () => {
    const { infra, registered } = await program("multi-replica", slurmConfig());
    const islands = await slurmIslands(infra);
    await settle(registered);
    expect(islands).toEqual([
      {
        island: 0,
        jobName: "multi-replica-i0",
        jobId: FAKE_JOB_ID,
        dryRun: false,
        script: null,
        nodes: [
          { name: "i0-n0", host: fakeHost(0), addr: fakeAddr(0) },
          { name: "i0-n1", host: fakeHost(1), addr: fakeAddr(1) },
        ],
        routerUrl: `http://${fakeAddr(0)}:8000/v1`,
        adminUrls: [`http://${fakeAddr(0)}:8100/v1`, `http://${fakeAddr(1)}:8100/v1`],
        roles: ["replica", "replica"],
      },
    ]);
    const [cmd] = commands(registered);
    const plan = buildPlan(loadConfigFile(resolveStackFile("multi-replica").file), "multi-replica");
    const job = renderIslandJob(plan, plan.islands[0]);
    expect(cmd.inputs).toMatchObject({
      create: "timeout -k 120 7500 bash -s",
      stdin: job.stdin,
      delete: job.delete,
      triggers: [job.scriptHash, false],
      addPreviousOutputInEnv: false,
      logging: "stderr",
    });
    expect(cmd.inputs.delete).toMatch(/^timeout -k 30 300 bash -c '.*scancel --name="\$name" --user="\$user".*'$/);
    expect(cmd.inputs.delete).not.toContain("\n");
    expect(new Set(cmd.options.replaceOnChanges)).toEqual(new Set(["triggers[*]"]));
    // The bound that acts is `timeout` on the login node (above): customTimeouts end only the
    // provider's context, which the dial and the logs use (pulumi-go-provider v1.3.0
    // middleware/cancel Wrap; pulumi-command v1.2.1 remote/commandOutputs.go run calls
    // session.Run, which takes none). They follow the bound: dial room + bound + its SIGKILL.
    expect(cmd.options).toMatchObject({
      deleteBeforeReplace: true,
      customTimeouts: { create: "7920s", update: "7920s", delete: "630s" },
    });
    expect(cmd.inputs.connection).toMatchObject({
      host: "login.example",
      user: "alice",
      port: 22,
      hostKey: expect.stringMatching(/^ssh-ed25519 /),
      privateKey: expect.stringContaining("PRIVATE KEY"),
      dialErrorLimit: 10,
      perDialTimeout: 15,
    });
    expect(cmd.secretInputs).toContain("connection");
    // The tree: deployment -> job -> command; router and replicas beside the job.
    expect(registered.map((r) => `${r.type} ${r.name}`).sort()).toEqual(
      [
        "vllm-fleet:fleet:InferenceDeployment multi-replica",
        "vllm-fleet:slurm:Job multi-replica-i0",
        "command:remote:Command multi-replica-i0-sbatch",
        "vllm-fleet:fleet:Router multi-replica-i0-router",
        "vllm-fleet:fleet:VllmReplica multi-replica-i0-replica0",
        "vllm-fleet:fleet:VllmReplica multi-replica-i0-replica1",
      ].sort(),
    );
    expect(cmd.options.parent).toMatch(/InferenceDeployment\$vllm-fleet:slurm:Job::multi-replica-i0$/);
  });

  it("`fleet status` spells each island's sbatch command URN as the engine does (for `pulumi up --replace`)", async () => {
    const { infra, registered } = await program("disaggregated-x3", slurmConfig());
    await slurmIslands(infra);
    await settle(registered);
    const sbatch = commands(registered).filter((c) => c.name.endsWith("-sbatch"));
    // The mock monitor prefixes only the parent's last type (@pulumi/pulumi runtime/mocks.js newUrn);
    // the engine prefixes the parent's whole type chain, as the SDK's own createUrn does.
    const urns = await Promise.all(
      sbatch.map((c) => value(pulumi.createUrn(c.name, "command:remote:Command", c.options.parent))),
    );
    expect(urns).toEqual([0, 1, 2].map((k) => sbatchCommandUrn("vllm-fleet", "disaggregated-x3", k)));
    expect(urns[0]).toBe(
      "urn:pulumi:disaggregated-x3::vllm-fleet::vllm-fleet:fleet:InferenceDeployment$vllm-fleet:slurm:Job$command:remote:Command::disaggregated-x3-i0-sbatch",
    );
  });

  it.each(SLURM_STACKS)("%s: outputs keep the planner's admin order and roles; one job per island", async (stack) => {
    const { infra, registered } = await program(stack, slurmConfig());
    const [plannedOut, islands] = await Promise.all([value(infra.planned), slurmIslands(infra)]);
    const planned = singleService(plannedOut);
    await settle(registered);
    expect(commands(registered)).toHaveLength(planned.islands.length);
    expect(ofType(registered, "vllm-fleet:fleet:Router")).toHaveLength(planned.totals.routers);
    expect(islands.map((i) => i.adminUrls)).toEqual(planned.islands.map((i) => i.adminUrls.map(realUrl)));
    expect(islands.map((i) => i.roles)).toEqual(planned.islands.map((i) => i.roles));
    expect(islands.map((i) => i.routerUrl)).toEqual(
      planned.islands.map((i) => (i.routerUrl ? realUrl(i.routerUrl) : null)),
    );
    expect(new Set(islands.map((i) => i.jobName)).size).toBe(islands.length);
  });

  it("disaggregated ×3: three jobs, three routers, one prefill/decode group per island", async () => {
    const { infra, registered } = await program("disaggregated-x3", slurmConfig());
    const islands = await slurmIslands(infra);
    await settle(registered);
    expect(islands.map((i) => i.jobName)).toEqual([
      "disaggregated-x3-i0",
      "disaggregated-x3-i1",
      "disaggregated-x3-i2",
    ]);
    expect(ofType(registered, "vllm-fleet:fleet:PrefillDecodeGroup")).toHaveLength(3);
    expect(ofType(registered, "vllm-fleet:fleet:VllmReplica")).toHaveLength(0);
  });

  it("gives the Mooncake store the head node's master address", async () => {
    const { registered } = await program("kv-offload-mooncake", slurmConfig());
    await settle(registered);
    expect(ofType(registered, "vllm-fleet:fleet:MooncakeStore").map((r) => r.name)).toEqual([
      "kv-offload-mooncake-i0-mooncake",
    ]);
    const stdout = commands(registered)[0].inputs.stdin as string;
    expect(stdout).toMatch(
      /"mooncake":\{"master":"__FLEET_NODE_ADDR_0__:\d+","metadata":"http:\/\/__FLEET_NODE_ADDR_0__:\d+\/metadata"\}/,
    );
  });

  it("applies the overrides config object with the plan CLI's dotted keys", async () => {
    const { infra, registered } = await program(
      "single-node",
      slurmConfig({ overrides: { "slurm.partition": "h100", "slurm.ready_timeout": 120 } }),
    );
    await slurmIslands(infra);
    const [cmd] = commands(registered);
    expect(cmd.inputs.stdin).toContain("#SBATCH --partition=h100");
    expect(cmd.inputs.stdin).toContain("FLEET_READY_TIMEOUT=120");
    expect(cmd.inputs.create).toBe(`timeout -k 120 ${3600 + 120 + 300} bash -s`);
  });

  it("a dry run uploads the script, asks sbatch --test-only, and exports where the script is", async () => {
    const { infra, registered } = await program("single-node", slurmConfig({ overrides: { dry_run: true } }));
    const islands = await slurmIslands(infra);
    const [cmd] = commands(registered);
    expect(cmd.inputs.stdin).toContain('sbatch --test-only "$FLEET_SCRIPT"');
    expect(cmd.inputs.stdin).not.toContain("sbatch --parsable");
    expect(cmd.inputs.triggers).toEqual([expect.any(String), true]);
    expect(islands).toEqual([
      {
        island: 0,
        jobName: "single-node-i0",
        jobId: null,
        dryRun: true,
        script: "vllm-fleet/single-node/island-0/single-node-i0.sbatch",
        nodes: [],
        routerUrl: null,
        adminUrls: [],
        roles: [],
      },
    ]);
  });

  it("passes a jump host through as the provider's proxy, with its own key or the login key", async () => {
    const login = { host: "login1", user: "bob", jump: { host: "bastion.example", user: "bob", port: 2200 } };
    const { infra, registered } = await program("single-node", slurmConfig({}, login));
    await slurmIslands(infra);
    expect(commands(registered)[0].inputs.connection).toMatchObject({
      host: "login1",
      port: 22,
      proxy: { host: "bastion.example", port: 2200, user: "bob", privateKey: expect.stringContaining("PRIVATE KEY") },
    });
  });

  it("names the config key when the login node is missing or malformed", async () => {
    await expect(program("single-node", {})).rejects.toThrow(/vllm-fleet:login\.host/);
    await expect(
      program("single-node", { "vllm-fleet:login": JSON.stringify({ host: "login1", user: "bob; rm -rf ~" }) }),
    ).rejects.toThrow(/vllm-fleet:login\.user: must be a login name/);
    await expect(
      program("single-node", { "vllm-fleet:login": JSON.stringify({ host: "login1", user: "bob", prot: 22 }) }),
    ).rejects.toThrow(/vllm-fleet:login/);
  });

  it("refuses a private key stored in plain text", async () => {
    const config = slurmConfig();
    installMocks("single-node");
    setConfig(config, []); // no key marked secret, as `pulumi config set` without --secret
    vi.resetModules();
    await expect(import("../../index")).rejects.toThrow(/vllm-fleet:sshPrivateKey is stored in plain text/);
  });

  it("deploys the stack file the stackFile config key names, under this Pulumi stack's job names", async () => {
    const { infra } = await program("dev", slurmConfig({ stackFile: "single-node" }));
    const islands = await slurmIslands(infra);
    expect(islands[0].jobName).toBe("single-node-dev-i0");
  });

  it("deploys stacks/<pulumi stack>.toml when stackFile is unset or empty (Pulumi.yaml's default is empty)", async () => {
    for (const stackFile of [undefined, ""]) {
      const { infra, registered } = await program(
        "multi-replica",
        slurmConfig(stackFile === undefined ? {} : { stackFile }),
      );
      expect((await slurmIslands(infra)).map((i) => i.jobName)).toEqual(["multi-replica-i0"]);
      await settle(registered);
    }
  });

  it("takes a relative stackFile from the project folder, wherever the program runs (dist/ under Pulumi)", async () => {
    const cwd = process.cwd();
    process.chdir(os.tmpdir());
    try {
      const { infra, registered } = await program("dev", slurmConfig({ stackFile: "./stacks/single-node.toml" }));
      expect((await slurmIslands(infra))[0].jobName).toBe("single-node-dev-i0");
      await settle(registered);
      installMocks("dev");
      setConfig(slurmConfig({ stackFile: "./stacks/single-nod.toml" }));
      vi.resetModules();
      await expect(import("../../index")).rejects.toThrow(
        /no stack file \.\/stacks\/single-nod\.toml: no such file \(.*\/stacks\/single-nod\.toml\) \(did you mean "single-node"[ ?]/,
      );
    } finally {
      process.chdir(cwd);
    }
  });

  it("refuses an invalid stack file before registering anything", async () => {
    const before = installMocks("bad");
    setConfig(slurmConfig({ stackFile: "test/fixtures/program/invalid.toml" }));
    vi.resetModules();
    await expect(import("../../index")).rejects.toThrow(/parallel\.tp/);
    expect(before).toEqual([]);
  });
});
