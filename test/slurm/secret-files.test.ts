/**
 * Credentials (API key, HF token, SSH key) come only from Pulumi config secrets. On SLURM they reach
 * the cluster as 0600 files written by their own command from a secret stdin; scripts read the
 * files and never hold a value. These tests run the program under mocks and search everything it
 * registers and exports, and run the file-writing command with real bash.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { loadConfigFile } from "../../components/config";
import { buildPlan } from "../../components/planner";
import { renderSecretFiles, secretFilesPayload } from "../../components/slurm/secret-files";
import { resolveStackFile } from "../../components/stack-file";
import { singleService } from "../helpers";
import { drainRpcs, installMocks, isSecret, setConfig, settle, slurmConfig, value } from "../program-harness";

// A finished test's outstanding Pulumi RPCs must not reach the next test's mocks.
afterEach(drainRpcs);

/** Values with every character class a careless script would mangle or leak through. */
const API_KEY = `sk-'q"uote $HOME \`id\` \\back ${"$"}(touch /tmp/pwned) end `;
const HF_TOKEN = "hf_TOKEN-secret-4a1b ünï";
const SSH_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nssh-key-secret-body\n-----END OPENSSH PRIVATE KEY-----\n";
const SECRET_CONFIG = ["vllm-fleet:sshPrivateKey", "vllm-fleet:apiKey", "vllm-fleet:hfToken"];

async function program(stack: string, extra: Record<string, unknown> = {}) {
  const registered = installMocks(stack);
  setConfig(
    { ...slurmConfig({ apiKey: API_KEY, hfToken: HF_TOKEN, ...extra }), "vllm-fleet:sshPrivateKey": SSH_KEY },
    SECRET_CONFIG,
  );
  vi.resetModules();
  const infra = await import("../../index");
  const outputs = {
    planned: await value(infra.planned),
    islands: await value(infra.islands),
    endpoints: await value(infra.endpoints),
  };
  await settle(registered);
  return { infra, outputs, registered };
}

/** Every fragment a leaked value could appear as (whole, or its distinctive parts). */
const LEAKS = [API_KEY, "touch /tmp/pwned", HF_TOKEN, "hf_TOKEN-secret", "ssh-key-secret-body"];
const leaksIn = (text: string) => LEAKS.filter((l) => text.includes(l));

describe("SLURM credentials under mocks", () => {
  it("each island gets a secrets command whose only secret-bearing input is its stdin; nothing else registered or exported holds a value", async () => {
    const { infra, outputs, registered } = await program("disaggregated-x3");
    const secretsCommands = registered.filter((r) => r.name.endsWith("-secrets"));
    expect(secretsCommands.map((r) => r.name)).toEqual([
      "disaggregated-x3-i0-secrets",
      "disaggregated-x3-i1-secrets",
      "disaggregated-x3-i2-secrets",
    ]);
    for (const [k, r] of secretsCommands.entries()) {
      expect(r.type).toBe("command:remote:Command");
      expect(r.inputs.stdin).toBe(`hf_token ${HF_TOKEN}\napi_key ${API_KEY}\n`);
      expect(r.secretInputs).toEqual(expect.arrayContaining(["stdin", "connection"]));
      expect(r.inputs.create).toMatch(/^timeout -k 10 60 bash -c /);
      expect(r.inputs.create).toContain(`dir=vllm-fleet/disaggregated-x3/island-${k}/secrets;`);
      expect(r.inputs.delete).toMatch(/^timeout -k 10 60 bash -c '/);
      expect(r.inputs.delete).toContain(`dir=vllm-fleet/disaggregated-x3/island-${k}/secrets;`);
      expect(r.inputs.delete).toMatch(/rm -rf "\$dir"'$/);
      expect(r.inputs.logging).toBe("stderr");
      // The job waits for its files, and is replaced when a credential changes.
      const job = registered.find((x) => x.name === `disaggregated-x3-i${k}-sbatch`)!;
      expect(job.options.dependsOn.some((u) => u.endsWith(`::disaggregated-x3-i${k}-secrets`))).toBe(true);
      expect(job.secretInputs).toContain("triggers");
      expect(job.inputs.triggers).toHaveLength(3);
      expect(job.inputs.triggers[2]).toMatch(/^[0-9a-f]{64}$/);
      // The job reads the files; engines get the key as --api-key and the token in their env.
      expect(job.inputs.stdin).toContain('FLEET_API_KEY=$(<"$FLEET_SECRETS_DIR/api_key") || exit 1');
      expect(job.inputs.stdin).toContain('export HF_TOKEN="$FLEET_HF_TOKEN"');
      expect(job.inputs.stdin.match(/--api-key "\$FLEET_API_KEY"/g)).toHaveLength(
        singleService(outputs.planned).islands[k].adminUrls.length,
      );
      // The router never holds the key: it forwards the caller's Authorization header.
      expect(job.inputs.stdin).not.toMatch(/vllm-router[^\n]*--api-key/);
    }
    // The search: every input of every resource (minus the secrets' own stdin and the login
    // connection, both stored encrypted) and every plain output.
    const searched = registered.map((r) => ({
      ...r.inputs,
      ...(r.name.endsWith("-secrets") ? { stdin: "<secret>" } : {}),
      connection: r.inputs.connection ? { ...r.inputs.connection, privateKey: "<secret>" } : undefined,
    }));
    expect(leaksIn(JSON.stringify(searched))).toEqual([]);
    expect(leaksIn(JSON.stringify(outputs))).toEqual([]);
    expect(await isSecret(infra.apiKey)).toBe(true);
    expect(await value(infra.apiKey)).toBe(API_KEY);
    expect(outputs.endpoints.apiKeyRequired).toBe(true);
    for (const r of registered.filter((x) => x.inputs.connection)) expect(r.secretInputs).toContain("connection");
  });

  it("without credentials there is no secrets command and the job script reads no file", async () => {
    const registered = installMocks("single-node");
    setConfig(slurmConfig());
    vi.resetModules();
    const infra = await import("../../index");
    await value(infra.islands);
    await settle(registered);
    expect(registered.filter((r) => r.name.endsWith("-secrets"))).toEqual([]);
    const job = registered.find((r) => r.name === "single-node-i0-sbatch")!;
    expect(job.inputs.triggers).toHaveLength(2);
    expect(job.inputs.stdin).not.toContain("FLEET_SECRETS_DIR");
    expect(job.inputs.stdin).not.toContain("--api-key");
  });

  it("a dry run puts no credential on the cluster", async () => {
    const { registered } = await program("single-node", { overrides: { dry_run: true } });
    expect(registered.filter((r) => r.name.endsWith("-secrets"))).toEqual([]);
  });

  it("a credential stored in plain text is refused, naming its key", async () => {
    for (const key of ["apiKey", "hfToken"]) {
      installMocks("single-node");
      setConfig(slurmConfig({ [key]: "plain-value" }), ["vllm-fleet:sshPrivateKey"]);
      vi.resetModules();
      await expect(import("../../index")).rejects.toThrow(new RegExp(`vllm-fleet:${key} is stored in plain text`));
    }
  });

  it("a credential with a line break fails naming its key, never showing the value", () => {
    const key = (n: string) => `vllm-fleet:${n}`;
    expect(() => secretFilesPayload({ apiKey: "abc\ndef-secret" }, key)).toThrow(
      /^vllm-fleet:apiKey must be one non-empty line of text \(it has a line break or NUL byte\)$/,
    );
    expect(() => secretFilesPayload({ hfToken: "" }, key)).toThrow(/vllm-fleet:hfToken must be one non-empty line/);
    expect(() => secretFilesPayload({ apiKey: "x\0y" }, key)).toThrow(/NUL byte/);
  });
});

describe("the secrets command, run by real bash", () => {
  const cfg = loadConfigFile(resolveStackFile("single-node").file, [
    { path: ["output_dir"], value: "fleet-out/run.s" },
  ]);
  const plan = buildPlan(cfg, "single-node");
  const island = plan.islands[0];
  const run = (command: string, home: string, stdin = "") =>
    spawnSync("bash", ["-c", command], {
      input: stdin,
      encoding: "utf8",
      env: { PATH: process.env.PATH, HOME: home },
    });
  const mode = (p: string) => (fs.statSync(p).mode & 0o777).toString(8);

  it("writes each value byte for byte into a 0600 file in a 0700 directory, removes dropped ones, and delete removes the directory", () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-secrets-"));
    const both = renderSecretFiles(plan, island, ["apiKey", "hfToken"]);
    const dir = path.join(home, "fleet-out/run.s/island-0/secrets");
    const first = run(both.create, home, secretFilesPayload({ apiKey: API_KEY, hfToken: HF_TOKEN }, String));
    expect(first.status, first.stderr).toBe(0);
    expect(first.stderr).toMatch(/wrote 2 secret file\(s\) in .*\(mode 0600\)/);
    expect(leaksIn(first.stderr + first.stdout)).toEqual([]);
    expect(fs.readFileSync(path.join(dir, "api_key"), "utf8")).toBe(API_KEY);
    expect(fs.readFileSync(path.join(dir, "hf_token"), "utf8")).toBe(HF_TOKEN);
    expect([mode(dir), mode(path.join(dir, "api_key")), mode(path.join(dir, "hf_token"))]).toEqual([
      "700",
      "600",
      "600",
    ]);
    expect(fs.existsSync("/tmp/pwned")).toBe(false);

    // The token is dropped from config: its file goes; a wider directory is narrowed again.
    fs.chmodSync(dir, 0o755);
    const onlyKey = renderSecretFiles(plan, island, ["apiKey"]);
    const second = run(onlyKey.create, home, secretFilesPayload({ apiKey: "rotated" }, String));
    expect(second.status, second.stderr).toBe(0);
    expect(fs.readdirSync(dir)).toEqual(["api_key"]);
    expect(fs.readFileSync(path.join(dir, "api_key"), "utf8")).toBe("rotated");
    expect(mode(dir)).toBe("700");

    const del = run(onlyKey.delete, home);
    expect(del.status, del.stderr).toBe(0);
    expect(fs.existsSync(dir)).toBe(false);
  });

  it("another stack's fleet in the same folder: create refuses, delete leaves its secrets alone", () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-secrets-"));
    const dir = path.join(home, "fleet-out/run.s/island-0/secrets");
    const mine = renderSecretFiles(plan, island, ["apiKey"]);
    expect(run(mine.create, home, secretFilesPayload({ apiKey: API_KEY }, String)).status).toBe(0);
    expect(fs.readFileSync(path.join(dir, "../owner"), "utf8")).toBe("single-node-i0\n");
    const other = buildPlan(cfg, "prod");
    const theirs = renderSecretFiles(other, other.islands[0], ["apiKey"]);
    const refused = run(theirs.create, home, secretFilesPayload({ apiKey: "theirs" }, String));
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain(
      "fleet-out/run.s/island-0 is the folder of another fleet (job single-node-i0): give this stack its own output_dir",
    );
    const kept = run(theirs.delete, home);
    expect(kept.status, kept.stderr).toBe(0);
    expect(fs.readFileSync(path.join(dir, "api_key"), "utf8")).toBe(API_KEY);
    expect(run(mine.delete, home).status).toBe(0);
    expect(fs.existsSync(dir)).toBe(false);
  });

  it("refuses a stdin that names an unknown file or lacks a value, without echoing it", () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-secrets-"));
    const job = renderSecretFiles(plan, island, ["apiKey"]);
    const unknown = run(job.create, home, "../../etc/passwd sk-zzz-secret\n");
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain("refusing a secret named");
    expect(unknown.stderr).not.toContain("sk-zzz-secret");
    const none = run(job.create, home, "");
    expect(none.status).toBe(1);
    expect(none.stderr).toContain("expected 1 secret(s) on stdin, got 0");
  });
});
