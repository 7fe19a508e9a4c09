/**
 * Idle release on Kubernetes (issue 44) against a real API server (the test control plane: a real
 * kube-apiserver with RBAC and ServiceAccount tokens, kwok's fake GPU nodes). k8s-multi-replica with
 * `idle_release_after = "20s"`, its objects applied as `plan --out` writes them; kwok's pods run no
 * processes, so the island's activity monitor runs here as the kubelet would run its container: the
 * rendered command (templates/kubernetes/activity-monitor.py, the same text the pod runs), with the
 * engines' in-cluster URLs swapped for two vLLM TEST STAND-INs (dev mode: their /is_paused) and the
 * API server reached as the pod reaches it, with a token of the monitor's own ServiceAccount (so its
 * Role is what is tested, not the admin's rights). The checks of the host version
 * (idle-release.e2e.test.ts): not released while one request a second flows for 30 s, nor while the
 * engines are paused for 30 s; released 20-30 s after the monitor first saw them idle (the
 * StatefulSets at 0 replicas in the API server), though the monitor is killed (-9) and started again
 * mid-way through the idle time; `fleet status` says IDLE-RELEASED and when; `fleet wake` scales the
 * workloads back to 1 and clears the mark.
 */
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import YAML from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseActivity, parseIdleReleased } from "../../components/host/activity-ledger";
import { freePort, start, stopAll, waitHttp, type Proc } from "../standins-harness";
import { kubelet } from "../kubernetes/router-follower-drill";
import { applyPlanned, builtCliOn, controlPlaneMissing, startControlPlane, type ControlPlane } from "./control-plane";

const missing = controlPlaneMissing();
if (missing)
  console.warn(`\n*** SKIPPED: idle release on a real control plane (k8s-idle-release.e2e.test.ts): ${missing} ***\n`);

let cp: ControlPlane;
const STACK = "k8s-multi-replica";
const IDLE = ["--inference.idle_release_after", "20s"];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
describe.skipIf(!!missing)("idle release on a real control plane", () => {
  beforeAll(async () => {
    cp = await startControlPlane();
  }, 120_000);
  afterAll(async () => {
    await stopAll();
    cp?.down();
  }, 120_000);

  it('idle_release_after = "20s": not while requests flow, not while paused, a killed monitor takes the idle clock back; released 20-30 s after going idle (replicas 0), IDLE-RELEASED, fleet wake brings the replicas back', async () => {
    const { namespace, objects, dir } = applyPlanned(cp, STACK, IDLE);

    const monitor = objects.find((o) => o.kind === "Deployment" && o.metadata.name.endsWith("-activity"));
    const account = monitor.spec.template.spec.serviceAccountName as string;
    const [python, flag, script, configText] = kubelet(monitor.spec.template.spec.containers[0].command);
    const config = JSON.parse(configText);
    const cm = config.configMap as string;
    const sts = config.workloads.map((w: { path: string }) => w.path.split("/").pop()!) as string[];
    expect(sts).toEqual([`${STACK}-i0-replica0`, `${STACK}-i0-replica1`]);

    // Least privilege, as the API server's RBAC answers for the monitor's ServiceAccount.
    const can = (...args: string[]) =>
      cp
        .kubectl(["auth", "can-i", ...args, "-n", namespace, `--as=system:serviceaccount:${namespace}:${account}`])
        .stdout.trim();
    expect(can("patch", `statefulsets/${sts[0]}`, "--subresource=scale")).toBe("yes");
    expect(can("patch", `configmaps/${cm}`)).toBe("yes");
    expect(can("patch", `statefulsets/${sts[0]}`)).toBe("no");
    expect(can("delete", `statefulsets/${sts[0]}`)).toBe("no");
    expect(can("patch", `statefulsets/${STACK}-i0-other`, "--subresource=scale")).toBe("no");
    expect(can("get", `configmaps/${STACK}-i0-router`)).toBe("no");
    expect(can("list", "pods")).toBe("no");
    expect(can("get", "secrets")).toBe("no");

    // The pod's ServiceAccount folder: a token of its account and the cluster's CA.
    const sa = fs.mkdtempSync(path.join(os.tmpdir(), "k8s-idle-sa-"));
    const token = cp.kubectl(["create", "token", account, "-n", namespace, "--duration=1h"]);
    expect(token.status, token.stderr).toBe(0);
    fs.writeFileSync(path.join(sa, "token"), token.stdout.trim());
    const kubeconfig = YAML.parse(fs.readFileSync(cp.env.KUBECONFIG, "utf8"));
    fs.copyFileSync(kubeconfig.clusters[0].cluster["certificate-authority"], path.join(sa, "ca.crt"));
    const api = new URL(cp.env.CP_API);

    // Two vLLM stand-ins in dev mode (their /is_paused) for the two replicas' engines.
    const engines: { url: string; proc: Proc }[] = [];
    for (let k = 0; k < 2; k++) {
      const port = await freePort();
      const proc = start("vllm", ["serve", "Qwen/Qwen3-0.6B", "--host", "127.0.0.1", "--port", String(port)], {
        VLLM_SERVER_DEV_MODE: "1",
      });
      const url = `http://127.0.0.1:${port}`;
      await waitHttp(`${url}/health`, 200, 60_000, proc);
      engines.push({ url, proc });
    }
    config.engines = config.engines.map((e: { url: string }, k: number) => ({ ...e, url: engines[k].url }));
    expect(config.engines[0].paused).toBe("/is_paused");

    let log = "";
    let child: ChildProcess | undefined;
    const startMonitor = () => {
      child = spawn(python, [flag, script, JSON.stringify(config)], {
        env: {
          ...process.env,
          KUBERNETES_SERVICE_HOST: api.hostname,
          KUBERNETES_SERVICE_PORT: api.port,
          FLEET_SERVICEACCOUNT_DIR: sa,
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      child.stdout!.on("data", (d: Buffer) => (log += d.toString()));
      child.stderr!.on("data", (d: Buffer) => (log += d.toString()));
    };
    const killMonitor = async () => {
      const c = child!;
      const exited = new Promise((r) => c.on("exit", r));
      c.kill("SIGKILL");
      await exited;
    };
    const data = (): Record<string, string> =>
      JSON.parse(cp.kubectl(["get", "configmap", cm, "-n", namespace, "-o", "json"]).stdout).data ?? {};
    const replicas = () =>
      sts.map((s) =>
        Number(cp.kubectl(["get", "statefulset", s, "-n", namespace, "-o", "jsonpath={.spec.replicas}"]).stdout),
      );
    const fleet = (verb: string) =>
      builtCliOn(cp, "fleet.js", [verb, STACK, "--json", "--kubeconfig", cp.env.KUBECONFIG, ...IDLE]);

    startMonitor();
    try {
      // Requests every second for 30 s (beyond the bound): the island stays.
      for (const t0 = Date.now(); Date.now() - t0 < 30_000; await sleep(1000)) {
        const r = await fetch(`${engines[0].url}/v1/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: "Qwen/Qwen3-0.6B", prompt: "hi", max_tokens: 4 }),
        });
        expect(r.status).toBe(200);
      }
      expect(data()["idle-released"], log).toBeUndefined();
      expect(replicas()).toEqual([1, 1]);
      expect(
        parseActivity(data().activity ?? "").some((e) => e.state === "busy"),
        log,
      ).toBe(true);

      // Paused for 30 s (a trainer's weight update on every engine): the island stays.
      for (const e of engines) expect((await fetch(`${e.url}/pause`, { method: "POST" })).status).toBe(200);
      await sleep(30_000);
      expect(data()["idle-released"], log).toBeUndefined();
      expect(replicas()).toEqual([1, 1]);
      expect(parseActivity(data().activity).at(-1)?.state, log).toBe("paused");
      for (const e of engines) expect((await fetch(`${e.url}/resume`, { method: "POST" })).status).toBe(200);

      // No request: released 20 s after the monitor first saw the engines idle (it scrapes every
      // 5 s), though it is killed 10 s in and started again, as the kubelet restarts a container.
      const idleFrom = Date.now() / 1000;
      await sleep(10_000);
      await killMonitor();
      startMonitor();
      let until = Date.now() + 60_000;
      while (replicas().some((r) => r !== 0) && Date.now() < until) await sleep(500);
      const seenAt = Date.now() / 1000;
      expect(replicas(), log).toEqual([0, 0]);
      expect(log).toMatch(/idle since \d+ \(from the ledger\)/);
      const mark = parseIdleReleased(data()["idle-released"] ?? "")!;
      expect(mark, log).toBeDefined();
      console.log(
        `[k8s idle release] released ${mark.at - mark.idleSince} s after the monitor first saw the engines idle ` +
          `(idle since ${(mark.idleSince - idleFrom).toFixed(1)} s after the last resume); ` +
          `replicas 0 in the API server ${(seenAt - idleFrom).toFixed(1)} s after it`,
      );
      expect(mark.at - mark.idleSince).toBeGreaterThanOrEqual(20);
      expect(mark.at - mark.idleSince).toBeLessThan(30);
      expect(mark.idleSince).toBeGreaterThanOrEqual(Math.floor(idleFrom) - 1);
      expect(mark.idleSince - idleFrom).toBeLessThan(10);

      // The engines' pods are gone with the replicas: their stand-ins too (the monitor sees them unseen).
      for (const e of engines) {
        const exited = new Promise((r) => e.proc.proc.on("exit", r));
        e.proc.proc.kill("SIGKILL");
        await exited;
      }

      // fleet status says so, and when.
      const status = fleet("status");
      expect(status.status, status.stderr).toBe(0);
      const s = JSON.parse(status.stdout);
      expect(s.islands[0].status).toBe("IDLE-RELEASED");
      expect(s.islands[0].detail).toContain(new Date(mark.at * 1000).toISOString());
      expect(s.islands[0].detail).toContain(new Date(mark.idleSince * 1000).toISOString());
      expect(s.status).toBe("IDLE-RELEASED");

      // fleet wake: the workloads back at their planned replica, the mark cleared.
      const wake = fleet("wake");
      expect(wake.status, wake.stderr).toBe(0);
      expect(JSON.parse(wake.stdout).woken.map((w: { island: number }) => w.island)).toEqual([0]);
      expect(replicas()).toEqual([1, 1]);
      expect(data()["idle-released"]).toBeUndefined();
      // Once the pods run again (kwok: at once), status no longer says released.
      until = Date.now() + 60_000;
      let after = "";
      while (Date.now() < until) {
        after = JSON.parse(fleet("status").stdout).islands[0].status;
        if (after !== "IDLE-RELEASED" && after !== "LAUNCHING" && after !== "PENDING") break;
        await sleep(1000);
      }
      expect(after).not.toBe("IDLE-RELEASED");
      // The monitor sees its workloads back at their planned replicas (it clears the mark there, for a `pulumi up`).
      until = Date.now() + 20_000;
      while (!/back at their planned replicas/.test(log) && Date.now() < until) await sleep(500);
      expect(log).toMatch(/back at their planned replicas: the release mark is cleared/);
      // A second wake finds nothing to do.
      expect(JSON.parse(fleet("wake").stdout).woken).toEqual([]);
    } finally {
      if (child && child.exitCode === null) await killMonitor();
      console.log(`[k8s idle release] the monitor's log:\n${log}`);
      cp.kubectl(["delete", "-R", "-f", dir, "--wait=true", "--ignore-not-found"]);
    }
  }, 300_000);
});
