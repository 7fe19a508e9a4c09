/**
 * The restart gate's module (templates/host/restart_gate.py) as the REAL vLLM loads it: vLLM's own
 * middleware loader (init_entrypoints_middleware, with the API key's middleware beside it) adds it
 * from `--middleware restart_gate.RestartGate` found on PYTHONPATH, and it answers every case of the
 * contract the vLLM TEST STAND-IN is held to in the unit suite (test/host/restart-gate.test.ts).
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { API_KEY, GATE_CASES, verdict, writeGateModule } from "../host/restart-gate-contract";
import { ROOT } from "./program-capture";
import { pythonEnv } from "./real-parts";

describe("the restart gate under the REAL vLLM's middleware loader", () => {
  it("answers each case of the gate's contract: 503 with its body to all but the listed paths (/health too) while its file exists, open for good once it is gone", () => {
    const env = pythonEnv();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "restart-gate-real-"));
    try {
      writeGateModule(path.join(dir, "restart-gate"));
      const out = execFileSync(
        path.join(env.FLEET_PYENV, "bin", "python"),
        [path.join(ROOT, "test", "e2e", "real", "restart-gate-check.py")],
        {
          input: JSON.stringify({ gate: path.join(dir, "engine.gate"), key: API_KEY, cases: GATE_CASES }),
          env: { ...process.env, PYTHONPATH: path.join(dir, "restart-gate") },
          stdio: ["pipe", "pipe", "pipe"],
          timeout: 300_000,
        },
      );
      const answers = JSON.parse(out.toString().trim().split("\n").pop()!) as { status: number; body: string }[];
      expect(answers.map((a) => verdict(a.status, a.body))).toEqual(GATE_CASES.map((c) => c.expect));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
