/**
 * `fleet status` of a fleet started with an API key (issue 25): vLLM answers /v1/models with 401 to
 * a probe without the key (its --api-key guards /v1 only), and the status used to read that as
 * "LAUNCHING, /v1/models does not list the model yet". Here a local server guards /v1 as vLLM does.
 */
import * as fs from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { statusCommand } from "../../components/ops/commands";
import type { FleetView } from "../../components/ops/fleet-view";
import { localShell, type Shell } from "../../components/ops/remote";

const KEY = "sk-status-test";
let server: http.Server;
let url = "";
beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.url === "/health") return void res.writeHead(200).end();
    if (req.headers.authorization !== `Bearer ${KEY}`) return void res.writeHead(401).end('{"error":"Unauthorized"}');
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ data: [{ id: "m" }] }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const envBefore = process.env.VLLM_API_KEY;
afterEach(() => {
  if (envBefore === undefined) delete process.env.VLLM_API_KEY;
  else process.env.VLLM_API_KEY = envBefore;
});

/** A one-engine SLURM view whose island folder holds (or not) the key file the secrets command writes. */
function fleet(keyFile: boolean): FleetView {
  const islandDir = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-key-"));
  if (keyFile) {
    fs.mkdirSync(path.join(islandDir, "secrets"));
    fs.writeFileSync(path.join(islandDir, "secrets", "api_key"), KEY, { mode: 0o600 });
  }
  return {
    model: "m",
    engine: "vllm",
    target: "slurm",
    islands: [{ island: 0, islandDir, engines: [{ id: "e0", role: "replica", url }] }],
  };
}

/** The local shell, recording every script it ran (to show the key never reaches a command line). */
function recordingShell(): Shell & { scripts: string[] } {
  const local = localShell();
  const scripts: string[] = [];
  return { describe: local.describe, scripts, run: (s, t) => (scripts.push(s), local.run(s, t)) };
}

describe("fleet status with an API key", () => {
  it("reads the key file beside the job when the caller has no key, and then sees READY", async () => {
    delete process.env.VLLM_API_KEY;
    const shell = recordingShell();
    const report = await statusCommand(fleet(true), shell);
    expect(report.status).toBe("READY");
    expect(shell.scripts.join("\n")).not.toContain(KEY);
  });

  it("uses VLLM_API_KEY first, without reading the key file", async () => {
    process.env.VLLM_API_KEY = KEY;
    const shell = recordingShell();
    expect((await statusCommand(fleet(false), shell)).status).toBe("READY");
    expect(shell.scripts).toEqual([]);
  });

  it("without any key it says the engines refused it (401), never LAUNCHING", async () => {
    delete process.env.VLLM_API_KEY;
    const err = await statusCommand(fleet(false), recordingShell()).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/1 of 1 endpoint\(s\) refused GET \/v1\/models with 401/);
    expect((err as Error).message).toMatch(/not observed.*VLLM_API_KEY/);
  });

  it("with a wrong key it names where the key came from, not the key", async () => {
    process.env.VLLM_API_KEY = "sk-wrong";
    const err = (await statusCommand(fleet(true), recordingShell()).catch((e: Error) => e)) as Error;
    expect(err.message).toMatch(/with the API key from VLLM_API_KEY: the fleet runs with another key/);
    expect(err.message).not.toContain("sk-wrong");
  });
});
