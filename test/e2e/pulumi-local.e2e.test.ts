/**
 * The local target under the real Pulumi engine (issue 27): the CLI, its Node language host and the
 * command provider v1.2.1 (test/e2e/pulumi-cli.ts) on a copy of this project, as a user on one
 * machine runs it: stack init, config set stackFile and a secret apiKey, preview, up, stack
 * output, traffic through the router with the key, a second up that changes nothing, destroy.
 * local.Command runs the create and delete commands itself here (no SLURM, no ssh). Engines and
 * router are stand-ins (test/fixtures/standins).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fleetEndpointsSchema } from "../../components/trainer/contract";
import { STANDINS } from "./program-capture";
import { PulumiProject, pulumiToolchain, type Toolchain } from "./pulumi-cli";
import { freshHome, leftUnder, processesUnder } from "./local-target";
import { clientUpdateWeights } from "./restart-drill";

const toolchain = pulumiToolchain();
const missing = "missing" in toolchain ? toolchain.missing : undefined;
if (missing)
  console.warn(
    `\n*** SKIPPED: the local target under the real engine (pulumi-local.e2e.test.ts) needs a Pulumi toolchain: ${missing} ***\n`,
  );

describe.skipIf(!!missing)("the local target under the real Pulumi engine", () => {
  let project: PulumiProject;
  let home: string;

  beforeAll(async () => {
    project = new PulumiProject(toolchain as Toolchain);
    home = freshHome("pulumi");
  }, 600_000);

  afterAll(async () => {
    // Whatever failed, nothing of the stack stays running.
    if (project && (await project.pulumi(["stack", "select", "local-e2e"])).code === 0) {
      await project.pulumi(["destroy", "--yes", "--skip-preview"]);
      await project.pulumi(["stack", "rm", "--yes", "--force"]);
    }
    console.log(`pulumi runs:\n${project?.log.join("\n")}`);
    project?.dispose();
  }, 600_000);

  it("the README's local quickstart as written (vllm and vllm-router on PATH: the stand-ins): stack init, config set, up, curl through the router, fleet status READY, destroy", async () => {
    const readme = fs.readFileSync(path.join(project.dir, "README.md"), "utf8");
    const blocks = [...readme.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1], body: m[2] }));
    const toml = blocks.find((b) => b.lang === "toml" && b.body.includes("[local]"))!.body;
    fs.writeFileSync(path.join(project.dir, "my-fleet.toml"), toml);
    const steps = blocks.find((b) => b.lang === "bash" && b.body.includes("pulumi stack init local"))!.body;
    const quickHome = freshHome("quickstart");
    // The suite's state backend stands in for `pulumi login --local`; up and destroy do not ask.
    const lines = steps
      .split("\n")
      .filter((l) => l.trim() && !l.startsWith("pulumi login"))
      .map((l) => l.replace(/^pulumi (up|destroy)(\s|$)/, "pulumi $1 --yes$2"));
    const prelude = `export HOME=${JSON.stringify(quickHome)} PATH=${JSON.stringify(STANDINS)}:"$PATH"`;
    const until = (prefix: string) =>
      lines.slice(
        0,
        lines.findIndex((l) => l.startsWith(prefix)),
      );
    try {
      const up = await project.bash([prelude, ...until("npm run fleet")].join("\n"), { timeoutMs: 600_000 });
      expect(up.code, up.stdout + up.stderr).toBe(0);
      const answer = JSON.parse(up.stdout.trim().split("\n").pop()!);
      expect(answer.choices[0].message.content.length).toBeGreaterThan(0);
      const statusLine = lines.find((l) => l.startsWith("npm run fleet"))!.replace(/#.*$/, "");
      const status = await project.bash(`${prelude}\n${statusLine} --json`);
      expect(status.code, status.stderr).toBe(0);
      expect(JSON.parse(status.stdout.slice(status.stdout.indexOf("{"))).status).toBe("READY");
      const destroy = await project.bash(`${prelude}\n${lines.find((l) => l.startsWith("pulumi destroy"))!}`);
      expect(destroy.code, destroy.stderr).toBe(0);
      expect(await leftUnder(quickHome)).toEqual([]);
    } finally {
      if ((await project.pulumi(["stack", "select", "local"])).code === 0) {
        await project.bash(`${prelude}\npulumi destroy --yes --skip-preview; pulumi stack rm --yes --force`);
      }
    }
  }, 900_000);

  it("two replicas behind the router on this machine: preview, up, stack output, traffic with the API key, a second up changes nothing; the REAL Python client updates the weights to v2; the run killed whole: preview shows it, up starts it again serving v2 (the weights record taken back), then no changes; killed again, fleet keep --once brings it back serving v2; destroy leaves no process and sets the record aside", async () => {
    const outputDir = path.join(home, "fleet");
    fs.writeFileSync(
      path.join(project.dir, "local-e2e.toml"),
      [
        `output_dir = ${JSON.stringify(outputDir)}`,
        `[model]\nname = "Qwen/Qwen3-0.6B"`,
        `[parallel]\ntp = 1`,
        `[deployment]\ntype = "multi_node"\nnum_nodes = 2\ngpus_per_node = 1`,
        `[local]\ngpus = [0, 1]\nready_timeout = 120`,
        `[local.launcher]\nbin_dir = ${JSON.stringify(STANDINS)}`,
        // The weight-update routes the trainer's client calls (vLLM mounts them in dev mode only).
        `[env_vars]\nVLLM_SERVER_DEV_MODE = "1"`,
      ].join("\n\n") + "\n",
    );
    const key = "sk-local-e2e-key";
    await project.ok(["stack", "init", "local-e2e"]);
    await project.ok(["config", "set", "stackFile", "./local-e2e.toml"]);
    await project.ok(["config", "set", "--secret", "apiKey"], { input: key });
    await project.ok(["preview"]);
    const up = await project.ok(["up", "--yes"], { timeoutMs: 600_000 });
    expect(up.stdout + up.stderr).not.toContain(key);
    const out = await project.outputs();
    const island = out.islands[0];
    expect(island).toMatchObject({
      routerUrl: "http://127.0.0.1:8000/v1",
      adminUrls: ["http://127.0.0.1:8100/v1", "http://127.0.0.1:8200/v1"],
      dryRun: false,
    });
    expect(processesUnder(outputDir).some((p) => p.startsWith(`${island.pid} bash `))).toBe(true);
    // The trainer contract, as every target's: validated by its schema, with the trainer blocks.
    const endpoints = fleetEndpointsSchema.parse(out.endpoints);
    expect(endpoints).toMatchObject({
      target: "local",
      baseUrls: [island.routerUrl],
      adminUrls: island.adminUrls,
      apiKeyRequired: true,
    });
    expect(endpoints.trainers.primeRl).toMatch(
      /admin_base_url = \[ *"http:\/\/127\.0\.0\.1:8100\/v1", *"http:\/\/127\.0\.0\.1:8200\/v1" *\]/,
    );
    const client = new OpenAI({ baseURL: island.routerUrl, apiKey: key, maxRetries: 0, timeout: 60_000 });
    const completion = await client.completions.create({ model: "Qwen/Qwen3-0.6B", prompt: "hi", max_tokens: 3 });
    expect(completion.choices[0].text.length).toBeGreaterThan(0);
    expect((await fetch(`${island.adminUrls[0]}/models`)).status).toBe(401);

    await project.ok(["preview", "--expect-no-changes"]);
    const again = await project.ok(["up", "--yes", "--expect-no-changes"]);
    expect(again.code).toBe(0);
    expect((await project.outputs()).islands[0].pid).toBe(island.pid);

    // The trainer moved on: the REAL Python client updates both engines to v2 and records the update
    // beside the island's endpoints.json, which a revived run loads before it serves.
    const folder = path.join(outputDir, "island-0");
    const checkpoint = path.join(home, "ckpt-v2");
    fs.mkdirSync(checkpoint, { recursive: true });
    expect(clientUpdateWeights(path.join(folder, "endpoints.json"), checkpoint, "v2", key)).toEqual({
      recorded: [path.join(folder, "weights")],
      catching_up: [],
    });
    /** Each engine serves v2 and loaded the checkpoint once: a run just started that caught up with the record. */
    const servesV2 = async () => {
      for (const admin of island.adminUrls) {
        const root = admin.replace(/\/v1$/, "");
        const info = (await (await fetch(`${root}/weight_info`)).json()) as { weight_version: string };
        const state = (await (await fetch(`${root}/standin/state`)).json()) as {
          weight_updates: number;
          weight_dir: string;
        };
        expect({ admin, version: info.weight_version, ...state }).toMatchObject({
          admin,
          version: "v2",
          weight_updates: 1,
          weight_dir: checkpoint,
        });
      }
      const log = fs.readFileSync(path.join(folder, "logs", "latest", "supervisor.out"), "utf8");
      expect(log).toContain("serves weight version default: loading the fleet's update to v2");
    };

    // The run killed whole, as a reboot or an OOM killer would: preview and up ask this machine
    // before planning (components/host/presence.ts), so preview shows the run replaced and up
    // starts it again; then the stack previews with no changes.
    process.kill(-Number(island.pid), "SIGKILL");
    for (let t = 0; t < 50 && processesUnder(outputDir).length > 0; t++) await new Promise((r) => setTimeout(r, 200));
    expect(processesUnder(outputDir)).toEqual([]);
    const preview = await project.ok(["preview", "--diff"]);
    const seen = preview.stdout + preview.stderr;
    expect(seen).toMatch(
      new RegExp(`its run ${island.pid} ended \\(FAILED\\); pulumi up creates it again \\(revival 1\\)`),
    );
    // `--diff`: the run's command replaced, its trigger carrying the revival; nothing else changes.
    expect(seen).toMatch(
      /\+-command:local:Command: \(replace\)\n\s+\[id=[^\]]+\]\n\s+\[urn=[^\]]+::local-e2e-i0-run\]/,
    );
    expect(seen).toMatch(/~ \[0\]: "[0-9a-f]{16}" => "[0-9a-f]{16} revival 1"/);
    expect(seen).toMatch(/\+-1 to replace\n\s+6 unchanged/);
    const back = await project.ok(["up", "--yes"], { timeoutMs: 600_000 });
    expect(back.stdout).toMatch(/-i0-run\s+replaced/);
    const revived = (await project.outputs()).islands[0];
    expect(revived.pid).not.toBe(island.pid);
    // Brought back with the trainer's weights: up returned only once both engines served v2.
    expect(back.stdout + back.stderr).toContain("brought back with the fleet's weights record (version v2)");
    await servesV2();
    const after = await client.completions.create({ model: "Qwen/Qwen3-0.6B", prompt: "hi", max_tokens: 3 });
    expect(after.choices[0].text.length).toBeGreaterThan(0);
    await project.ok(["preview", "--expect-no-changes"]);
    console.log(
      `run ${island.pid} killed whole -> preview showed its replacement -> up started run ${revived.pid} (${(back.ms / 1000).toFixed(1)} s) -> no changes`,
    );

    // The same for the hours nobody watches: `fleet keep --once` sees the run gone and runs that up.
    process.kill(-Number(revived.pid), "SIGKILL");
    for (let t = 0; t < 50 && processesUnder(outputDir).length > 0; t++) await new Promise((r) => setTimeout(r, 200));
    const kept = await project.bash("npm run -s fleet -- keep local-e2e --once", { timeoutMs: 600_000 });
    expect(kept.code, kept.stdout + kept.stderr).toBe(0);
    expect(kept.stdout).toMatch(
      new RegExp(
        `island 0 \\(job ${revived.pid} FAILED\\) gone: pulumi up --stack local-e2e \\(up 1 of 3 in 3600 s\\)`,
      ),
    );
    expect(kept.stdout).toMatch(/pulumi up done in \d+\.\d s/);
    const third = (await project.outputs()).islands[0];
    expect(third.pid).not.toBe(revived.pid);
    await servesV2();
    const afterKeep = await client.completions.create({ model: "Qwen/Qwen3-0.6B", prompt: "hi", max_tokens: 3 });
    expect(afterKeep.choices[0].text.length).toBeGreaterThan(0);
    await project.ok(["preview", "--expect-no-changes"]);
    console.log(`fleet keep --once:\n${kept.stdout.trim()}`);

    await project.ok(["destroy", "--yes"]);
    expect(await leftUnder(outputDir)).toEqual([]);
    // The fleet's weights are set aside: only a revival of this island would take them again.
    expect(fs.existsSync(path.join(folder, "weights"))).toBe(false);
    expect(fs.existsSync(path.join(folder, "weights.previous"))).toBe(true);
    expect(fs.existsSync(path.join(outputDir, "island-0", "secrets"))).toBe(false);
    await project.ok(["stack", "rm", "--yes"]);
  }, 900_000);
});
