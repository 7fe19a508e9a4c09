/**
 * The vLLM TEST STAND-IN's restart gate (it cannot run Python middleware, so it applies the fleet's
 * own by its contract) answers every case of the contract the real module is held to end to end
 * (test/host/restart-gate-contract.ts), and fails its start, as vLLM does, when the module is on no
 * PYTHONPATH folder.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort, runToExit, start, stopAll, TINY, waitHttp } from "../standins-harness";
import { API_KEY, applyWrite, GATE_CASES, verdict, writeGateModule } from "./restart-gate-contract";

const TMP = fs.mkdtempSync(path.join(os.tmpdir(), "restart-gate-"));
afterAll(async () => {
  await stopAll();
  fs.rmSync(TMP, { recursive: true, force: true });
});

const GATE = ["--middleware", "restart_gate.RestartGate"];

describe("the restart gate on the vLLM TEST STAND-IN", () => {
  it("answers each case of the gate's contract as the real module does", async () => {
    const modules = path.join(TMP, "restart-gate");
    writeGateModule(modules);
    const file = path.join(TMP, "engine.gate");
    applyWrite(file, GATE_CASES[0]);
    const port = await freePort();
    const p = start("vllm", ["serve", TINY, "--port", String(port), "--api-key", API_KEY, ...GATE], {
      PYTHONPATH: modules,
      FLEET_RESTART_GATE: file,
      VLLM_SERVER_DEV_MODE: "1",
    });
    await waitHttp(`http://127.0.0.1:${port}/weight_info`, 200, 20_000, p);
    const seen = [];
    for (const c of GATE_CASES) {
      applyWrite(file, c);
      const r = await fetch(`http://127.0.0.1:${port}${c.path}`, {
        method: c.method,
        headers: { "content-type": "application/json", ...(c.key ? { authorization: `Bearer ${API_KEY}` } : {}) },
        ...(c.method === "POST" ? { body: "{}" } : {}),
      });
      seen.push(verdict(r.status, await r.text()));
    }
    expect(seen).toEqual(GATE_CASES.map((c) => c.expect));
  });

  it("fails its start (status 1, named) when no PYTHONPATH folder holds the module, as vLLM's import does", async () => {
    const r = await runToExit("vllm", ["serve", TINY, "--port", String(await freePort()), ...GATE], {
      PYTHONPATH: path.join(TMP, "nowhere"),
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("No module named 'restart_gate'");
  });
});
