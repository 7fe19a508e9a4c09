/**
 * The restart gate's contract (templates/host/restart_gate.py): what a gated engine answers, case
 * by case, as the gate file is written and removed. The unit suite holds the vLLM TEST STAND-IN's
 * emulation to it (test/host/restart-gate.test.ts); the end-to-end suite holds the real module to
 * it, loaded by the REAL vLLM's own middleware loader (test/e2e/restart-gate.e2e.test.ts).
 */
import * as fs from "node:fs";
import * as path from "node:path";

export interface GateCase {
  method: "GET" | "POST";
  path: string;
  /** The gate file's lines before the request; null removes the file; absent leaves it. */
  write?: string[] | null;
  /** Send the API key (the engine holds one). */
  key?: boolean;
  /** gated: the gate answered (503, its own body); passed: the engine did. */
  expect: "gated" | "passed";
}

export const API_KEY = "gate-test-key";

/** The body a closed gate answers with (restart_gate.py's CLOSED). */
export const CLOSED_BODY = `{"error": "restarting: loading the fleet's weights (restart gate closed)"}`;

export const GATE_CASES: GateCase[] = [
  { method: "GET", path: "/health", write: ["/weight_info", "/metrics", "/collective_rpc"], expect: "gated" },
  { method: "GET", path: "/weight_info", expect: "passed" },
  { method: "POST", path: "/collective_rpc", expect: "passed" },
  { method: "POST", path: "/v1/completions", key: true, expect: "gated" },
  // Before the API key's check: a caller without it learns only that the engine is down.
  { method: "POST", path: "/v1/completions", expect: "gated" },
  { method: "GET", path: "/v1/models", key: true, expect: "gated" },
  // A newer record's calls: the node rewrites the list while the gate is closed.
  { method: "POST", path: "/update_weights", write: ["/weight_info", "/update_weights"], expect: "passed" },
  { method: "POST", path: "/collective_rpc", expect: "gated" },
  { method: "GET", path: "/health", write: null, expect: "passed" },
  { method: "POST", path: "/v1/completions", key: true, expect: "passed" },
  // Open for the process's life: a file written again later does not close it.
  { method: "GET", path: "/health", write: ["/weight_info"], expect: "passed" },
];

/** What one answer was, by the contract. */
export const verdict = (status: number, body: string): "gated" | "passed" =>
  status === 503 && body === CLOSED_BODY ? "gated" : "passed";

/** The gate's module where PYTHONPATH finds it, as fleet_gate_close writes it on a node. */
export function writeGateModule(dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.copyFileSync(
    path.join(__dirname, "..", "..", "templates", "host", "restart_gate.py"),
    path.join(dir, "restart_gate.py"),
  );
}

/** Sets the gate file as a case says before its request. */
export function applyWrite(file: string, c: GateCase): void {
  if (c.write === null) fs.rmSync(file, { force: true });
  else if (c.write) fs.writeFileSync(file, c.write.map((l) => `${l}\n`).join(""));
}
