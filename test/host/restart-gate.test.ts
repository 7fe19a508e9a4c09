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
import { buildPlan } from "../../components/planner";
import { engineNamed } from "../../components/plan/engines";
import { resolveValue } from "../../components/plan/values";
import { loadConfigText } from "../../components/config";
import { SLURM } from "../helpers";
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

  it("prime-rl's `inference` STAND-IN, started with a planned command line and the prime-rl engine's gate flags (a JSON list, as prime-rl hands [vllm] extras to vLLM), is gated alike; a plain string is refused", async () => {
    const plan = buildPlan(
      loadConfigText(`[vllm]\nmodel = "Qwen/Qwen3-0.6B"\n[vllm_fleet]\nengine = "prime-rl"\n${SLURM}`, "t.toml"),
      "t",
    );
    const e = plan.islands[0].engines[0];
    const flags = engineNamed(e.engine).restartGate!;
    expect(flags).toEqual(["--vllm.middleware", '["restart_gate.RestartGate"]']);
    const port = await freePort();
    const argv = e.argv
      .map((a) => resolveValue(a, () => "127.0.0.1"))
      .map((a, i, all) => (all[i - 1] === "--server.port" ? String(port) : a));
    expect(argv).toContain(String(port));
    const modules = path.join(TMP, "prime-gate");
    writeGateModule(modules);
    const file = path.join(TMP, "prime.gate");
    fs.writeFileSync(file, "/weight_info\n");
    const p = start(argv[0], [...argv.slice(1), ...flags], { PYTHONPATH: modules, FLEET_RESTART_GATE: file });
    await waitHttp(`http://127.0.0.1:${port}/health`, 503, 20_000, p);
    fs.rmSync(file);
    await waitHttp(`http://127.0.0.1:${port}/health`, 200, 5_000, p);
    const plain = await runToExit(argv[0], [...argv.slice(1), "--vllm.middleware", "restart_gate.RestartGate"], {
      STANDIN_CHECK_ONLY: "1",
    });
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain("vLLM wants a list of import paths, as JSON");
  });

  it("fails its start (status 1, named) when no PYTHONPATH folder holds the module, as vLLM's import does", async () => {
    const r = await runToExit("vllm", ["serve", TINY, "--port", String(await freePort()), ...GATE], {
      PYTHONPATH: path.join(TMP, "nowhere"),
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("No module named 'restart_gate'");
  });
});
