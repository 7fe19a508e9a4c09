/**
 * `fleet cost` on Kubernetes against a real API server (the test control plane: kwok's fake GPU
 * nodes, which set a pod's startTime as a kubelet does): a stack's objects applied for real, its
 * island's activity ledger in its ConfigMap as the monitor writes it, and the report's GPU-hours
 * checked against the pods' own startTime x their nvidia.com/gpu requests, as kubectl shows them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CostReport } from "../../components/ops/cost";
import { applyPlanned, builtCliOn, controlPlaneMissing, startControlPlane, type ControlPlane } from "./control-plane";

const missing = controlPlaneMissing();
if (missing) console.warn(`\n*** SKIPPED: fleet cost on a real control plane (k8s-cost.e2e.test.ts): ${missing} ***\n`);

let cp: ControlPlane;
const STACK = "k8s-multi-replica";
const node = (script: string, args: string[]) => builtCliOn(cp, script, args);

/** The pods' held GPU-seconds at `now` by their own status: (now - startTime) x their containers' GPU requests. */
function podsGpuSeconds(namespace: string, now: number): number {
  const pods = JSON.parse(cp.kubectl(["get", "pods", "-n", namespace, "-o", "json"]).stdout).items as any[];
  return pods.reduce((sum, p) => {
    const gpus = p.spec.containers.reduce(
      (n: number, c: any) => n + Number(c.resources?.requests?.["nvidia.com/gpu"] ?? 0),
      0,
    );
    return sum + (now - Date.parse(p.status.startTime) / 1000) * gpus;
  }, 0);
}

describe.skipIf(!!missing)("fleet cost on a real control plane", () => {
  beforeAll(async () => {
    cp = await startControlPlane();
  }, 120_000);
  afterAll(() => cp?.down(), 120_000);

  it("the pods' own startTime x GPU requests within 1%; the ledger from the island's ConfigMap splits the time", async () => {
    const { namespace, dir } = applyPlanned(cp, STACK);
    try {
      // Every pod started (kwok sets startTime once it binds and "runs" a pod).
      const ready = cp.kubectl(["wait", "--for=condition=Ready", "pods", "--all", "-n", namespace, "--timeout=90s"]);
      expect(ready.status, ready.stderr).toBe(0);
      const t0 = Math.floor(Date.now() / 1000);
      const ledger = `${t0} busy\n${t0 + 60} idle\n`;
      // The ledger as the island's activity monitor writes it: a merge patch of its ConfigMap's key
      // (the ConfigMap itself is one of the fleet's objects, created empty).
      const cm = cp.kubectl([
        "patch",
        "configmap",
        `${STACK}-i0-activity`,
        "-n",
        namespace,
        "--type=merge",
        "-p",
        JSON.stringify({ data: { activity: ledger } }),
      ]);
      expect(cm.status, cm.stderr).toBe(0);
      await new Promise((r) => setTimeout(r, 15_000));

      const before = podsGpuSeconds(namespace, Date.now() / 1000);
      const r = node("fleet.js", ["cost", STACK, "--json", "--kubeconfig", cp.env.KUBECONFIG]);
      const after = podsGpuSeconds(namespace, Date.now() / 1000);
      expect(r.status, r.stderr).toBe(0);
      const report = JSON.parse(r.stdout) as CostReport;
      const held = report.total.gpuHours * 3600;
      console.log(`fleet cost (k8s): ${held} GPU-s; the pods' own: ${before}..${after}`);
      expect(before).toBeGreaterThan(0);
      expect(held).toBeGreaterThanOrEqual(before * 0.99);
      expect(held).toBeLessThanOrEqual(after * 1.01);
      const [island] = report.islands;
      expect(island.jobs.every((j) => j.ledger && j.seenBy === "the API server")).toBe(true);
      expect(island.total.busy).toBeGreaterThan(0);
      expect(island.notes[0]).toMatch(/not counted/);
      expect(report.complete).toBe(true);
    } finally {
      cp.kubectl(["delete", "-R", "-f", dir, "--wait=true", "--ignore-not-found"]);
    }
  }, 240_000);
});
