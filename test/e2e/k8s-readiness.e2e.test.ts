/**
 * Issue 31, fault 5 and item 4 on the real control plane (kube-apiserver v1.37.2, scheduler,
 * controller-manager, LWS, kwok's fake 8-GPU nodes: test/kubernetes/control-plane): the readiness
 * wait `pulumi up` runs for each island (dist/bin/k8s-wait.js, with the command line the program builds:
 * readiness-command.ts) and `fleet status` read what the API server says about a stack's objects,
 * applied as `plan --out` renders them. A stack that can run is READY; one whose pods cannot be
 * scheduled, are refused by Pod Security or mount a PVC that does not exist fails within
 * kubernetes.stuck_after with the cluster's reason, naming the object. Before this, pulumi-kubernetes'
 * await printed "0/1 Pods ready" for startup_timeout + 600 s (80 minutes by default).
 *
 * kwok marks scheduled pods Running and Ready without running a container: this proves scheduling,
 * admission, controllers and the readings, not the engines.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readinessCommandLine, type K8sObject } from "../../components/kubernetes";
import { ROOT } from "../helpers";
import { applyPlanned, builtCliOn, controlPlaneMissing, startControlPlane, type ControlPlane } from "./control-plane";

const missing = controlPlaneMissing();
if (missing)
  console.warn(
    `\n*** SKIPPED: the readiness wait on a real control plane (k8s-readiness.e2e.test.ts): ${missing} ***\n`,
  );

let cp: ControlPlane;
const node = (script: string, args: string[]) => builtCliOn(cp, script, args);

interface Applied {
  namespace: string;
  workloads: K8sObject[];
  /** Every object, to delete afterwards. */
  files: string;
}

/** `plan --out` of a stack (with overrides), applied for real (control-plane.ts applyPlanned). */
function apply(stack: string, overrides: string[] = [], namespaceLabels: Record<string, string> = {}): Applied {
  const { namespace, objects, dir } = applyPlanned(cp, stack, overrides, namespaceLabels);
  return {
    namespace,
    workloads: (objects as K8sObject[]).filter((o) =>
      ["StatefulSet", "Deployment", "LeaderWorkerSet"].includes(o.kind),
    ),
    files: dir,
  };
}

function remove(a: Applied) {
  cp.kubectl(["delete", "-R", "-f", a.files, "--wait=true", "--ignore-not-found"]);
  // The garbage collector deletes the workloads' pods after them: the next test needs their GPUs.
  cp.kubectl(["wait", "--for=delete", "pods", "--all", "-n", a.namespace, "--timeout=60s"]);
}

/** The island's wait, as `pulumi up` runs it (the program's command line, in the project folder). */
function wait(a: Applied, stuckAfterS: number) {
  const line = readinessCommandLine({
    namespace: a.namespace,
    workloads: a.workloads,
    podSelector: `app.kubernetes.io/name=vllm-fleet`,
    timeoutS: 120,
    stuckAfterS,
  });
  const started = Date.now();
  const r = spawnSync("sh", ["-c", line], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, KUBECONFIG: cp.env.KUBECONFIG },
    timeout: 180_000,
  });
  return { ...r, seconds: (Date.now() - started) / 1000 };
}

const status = (stack: string, overrides: string[] = []) => {
  const r = node("fleet.js", ["status", stack, "--json", "--kubeconfig", cp.env.KUBECONFIG, ...overrides]);
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
};

describe.skipIf(!!missing)("the readiness wait and fleet status on a real control plane", () => {
  beforeAll(async () => {
    cp = await startControlPlane();
  }, 120_000);
  afterAll(() => cp?.down(), 120_000);

  it("a stack that can run: the wait ends READY at once, and fleet status says READY", () => {
    const a = apply("k8s-multi-replica");
    try {
      expect(status("k8s-multi-replica").islands[0].status).not.toBe("SHUTDOWN");
      const w = wait(a, 30);
      expect(w.status, w.stdout + w.stderr).toBe(0);
      expect(w.stdout).toMatch(/ready in \d+ s/);
      const s = status("k8s-multi-replica");
      expect(s.status).toBe("READY");
      expect(s.islands[0].processes.map((p: { status: string }) => p.status)).toEqual(["READY", "READY", "READY"]);
      expect(s.islands[0].nodes.length).toBeGreaterThan(0);
      // Each engine's restarts from its pod, its weight version through the pod proxy: kwok's pods
      // run no process, so the proxy reaches nothing and the version is null (never a guess).
      for (const p of s.islands[0].processes.filter((x: { role: string }) => x.role !== "router"))
        expect(p).toMatchObject({ restarts: 0, lastRestart: null, weightVersion: null });
      console.log(`k8s-multi-replica: Ready in ${w.seconds.toFixed(1)} s`);
      // fleet logs and fleet metrics through the API server: what it answered for each engine is shown.
      const logs = node("fleet.js", ["logs", "k8s-multi-replica", "-n", "5", "--kubeconfig", cp.env.KUBECONFIG]);
      console.log(`fleet logs on kwok pods (exit ${logs.status}):\n${logs.stdout}${logs.stderr}`);
      expect(logs.stdout).toMatch(
        new RegExp(
          `==> island 0: i0-replica0-n0 \\(pod ${a.namespace}/k8s-multi-replica-i0-replica0-0, container vllm\\) <==`,
        ),
      );
      expect(logs.stdout).toMatch(/could not be read: the API server answered \d{3}/);
      expect(logs.status).toBe(1);
      const metrics = node("fleet.js", [
        "metrics",
        "k8s-multi-replica",
        "--json",
        "--interval",
        "0.2",
        "--kubeconfig",
        cp.env.KUBECONFIG,
      ]);
      expect(metrics.status, metrics.stderr).toBe(0);
      const rows = JSON.parse(metrics.stdout).engines as { url: string; error?: string }[];
      expect(rows.map((r) => r.url)).toEqual(
        [0, 1].map((k) => expect.stringContaining(`/pods/k8s-multi-replica-i0-replica${k}-0:8100/proxy/metrics`)),
      );
      for (const r of rows) expect(r.error).toMatch(/the API server answered \d{3}/);
    } finally {
      remove(a);
    }
  });

  /** The endpoints of a Service's EndpointSlices: the pod each names, and whether it is ready. */
  function endpointsOf(namespace: string, service: string): { pod: string; ready: boolean }[] {
    const r = cp.kubectl([
      "get",
      "endpointslices",
      "-n",
      namespace,
      "-l",
      `kubernetes.io/service-name=${service}`,
      "-o",
      "json",
    ]);
    expect(r.status, r.stderr).toBe(0);
    const slices = JSON.parse(r.stdout).items as {
      endpoints?: { targetRef?: { name: string }; conditions?: { ready?: boolean } }[];
    }[];
    return slices
      .flatMap((s) => s.endpoints ?? [])
      .map((e) => ({ pod: e.targetRef?.name ?? "?", ready: e.conditions?.ready === true }))
      .sort((x, y) => x.pod.localeCompare(y.pod));
  }

  /** Polls `read` until it returns what `want` accepts; the seconds it took. */
  async function until<T>(read: () => T, want: (v: T) => boolean, what: string, timeoutS = 60): Promise<number> {
    const started = Date.now();
    let last: T = read();
    while (!want(last)) {
      if (Date.now() - started > timeoutS * 1000)
        throw new Error(`${what}: still ${JSON.stringify(last)} after ${timeoutS} s`);
      await new Promise((ok) => setTimeout(ok, 100));
      last = read();
    }
    return (Date.now() - started) / 1000;
  }

  /** Sets a pod's Ready condition as the kubelet does from its readiness probe (kwok runs no probe). */
  const setReady = (namespace: string, pod: string, ready: boolean) => {
    const status = ready ? "True" : "False";
    const patch = {
      status: {
        conditions: [
          { type: "Ready", status },
          { type: "ContainersReady", status },
        ],
      },
    };
    const r = cp.kubectl([
      "patch",
      "pod",
      pod,
      "-n",
      namespace,
      "--subresource=status",
      "--type=strategic",
      "-p",
      JSON.stringify(patch),
    ]);
    expect(r.status, r.stderr).toBe(0);
  };

  it("issue 41: vllm-router in P/D mode reaches each engine through its ready Service: a pod that is not Ready (stale weights) is out of it, still published by the headless Service, and back once Ready", async () => {
    // One prefill replica: the fixture's 4 fake nodes hold 2 prefill and 2 decode pods of 8 GPUs.
    const a = apply("k8s-disaggregated", ["--inference.deployment.num_prefill_replicas", "1"]);
    try {
      const w = wait(a, 30);
      expect(w.status, w.stdout + w.stderr).toBe(0);
      const router = a.workloads.find((o) => o.kind === "Deployment" && o.metadata.name.endsWith("-router")) as any;
      const command: string[] = router.spec.template.spec.containers[0].command;
      const services = command.flatMap((word, k) =>
        ["--prefill", "--decode"].includes(command[k - 1]) ? [new URL(word).hostname.split(".")[0]] : [],
      );
      expect(services.length).toBe(4);
      // Each Service routes to exactly the pod of its name, once the pod is Ready.
      for (const svc of services)
        await until(
          () => endpointsOf(a.namespace, svc),
          (e) => JSON.stringify(e) === JSON.stringify([{ pod: svc, ready: true }]),
          svc,
        );
      const engines = `${router.metadata.name.replace(/-router$/, "")}-engines`;
      const victim = services.find((s) => s.includes("-decode"))!;
      setReady(a.namespace, victim, false);
      const outS = await until(
        () => endpointsOf(a.namespace, victim),
        (e) => e.every((x) => !x.ready),
        `${victim} out`,
      );
      // The trainer's admin URL (the headless Service's pod name) still reaches it; its peers' Services are untouched.
      expect(endpointsOf(a.namespace, engines).find((e) => e.pod === victim)).toEqual({ pod: victim, ready: true });
      for (const svc of services.filter((s) => s !== victim))
        expect(endpointsOf(a.namespace, svc)).toEqual([{ pod: svc, ready: true }]);
      setReady(a.namespace, victim, true);
      const backS = await until(
        () => endpointsOf(a.namespace, victim),
        (e) => JSON.stringify(e) === JSON.stringify([{ pod: victim, ready: true }]),
        `${victim} back`,
      );
      console.log(
        `[k8s ready Services, real kube-controller-manager] ${victim}: not ready in its Service ${outS.toFixed(1)} s after its pod's Ready turned False, ready again ${backS.toFixed(1)} s after True`,
      );
    } finally {
      remove(a);
    }
  }, 180_000);

  it("issue 41: each island's headless engine Service publishes every engine pod of the fleet (the weights check's peers), and names only its own island's pods", async () => {
    const a = apply("k8s-multi-replica", ["--deployment.num_infer_replicas", "2"]);
    try {
      const w = wait(a, 30);
      expect(w.status, w.stdout + w.stderr).toBe(0);
      const pods = [0, 1].flatMap((i) => [0, 1].map((r) => `k8s-multi-replica-i${i}-replica${r}-0`)).sort();
      for (const i of [0, 1]) {
        const svc = `k8s-multi-replica-i${i}-engines`;
        await until(
          () => endpointsOf(a.namespace, svc).map((e) => e.pod),
          (e) => JSON.stringify(e) === JSON.stringify(pods),
          svc,
        );
        // DNS names: a pod's hostname record only under the Service its subdomain names.
        const r = cp.kubectl([
          "get",
          "endpointslices",
          "-n",
          a.namespace,
          "-l",
          `kubernetes.io/service-name=${svc}`,
          "-o",
          "json",
        ]);
        const named = (
          JSON.parse(r.stdout).items as { endpoints?: { hostname?: string; targetRef?: { name: string } }[] }[]
        )
          .flatMap((x) => x.endpoints ?? [])
          .filter((e) => e.hostname !== undefined)
          .map((e) => e.targetRef!.name)
          .sort();
        expect(named).toEqual(pods.filter((p) => p.includes(`-i${i}-`)));
      }
    } finally {
      remove(a);
    }
  }, 180_000);

  it("pods no node can hold: the wait fails within stuck_after, naming the pod and the scheduler's reason", () => {
    const overrides = ["--kubernetes.gpu_resource", "example.com/gpu"];
    const a = apply("k8s-multi-replica", overrides);
    try {
      const w = wait(a, 8);
      expect(w.status).toBe(1);
      expect(w.stderr).toMatch(
        /FAILED after \d+ s: StatefulSet k8s-multi-replica-i0-replica\d: pod k8s-multi-replica-i0-replica\d-0 cannot be scheduled: 0\/\d+ nodes are available: \d+ Insufficient example\.com\/gpu.*\(for \d+ s; kubernetes\.stuck_after = 8\)/,
      );
      expect(w.seconds).toBeLessThan(40);
      const s = status("k8s-multi-replica", overrides);
      expect(s.status).toBe("PENDING");
      expect(s.islands[0].detail).toMatch(/Insufficient example\.com\/gpu/);
      console.log(`unschedulable: failed in ${w.seconds.toFixed(1)} s`);
    } finally {
      remove(a);
    }
  });

  it("pods Pod Security refuses (IPC_LOCK under baseline): FAILED with the FailedCreate reason", () => {
    const a = apply("k8s-kv-offload-native", [], {
      "pod-security.kubernetes.io/enforce": "baseline",
      "pod-security.kubernetes.io/enforce-version": "latest",
    });
    try {
      const w = wait(a, 8);
      expect(w.status).toBe(1);
      expect(w.stderr).toMatch(
        /FAILED after \d+ s: StatefulSet \S+: FailedCreate: .*violates PodSecurity "baseline:latest".*IPC_LOCK/,
      );
      const s = status("k8s-kv-offload-native");
      expect(s.status).toBe("FAILED");
      console.log(`Pod Security: failed in ${w.seconds.toFixed(1)} s`);
    } finally {
      remove(a);
    }
  });

  it("a model cache PVC that does not exist: the wait fails naming the claim", () => {
    const overrides = ["--kubernetes.create_namespace", "false", "--kubernetes.namespace", "no-pvc-here"];
    const a = apply("k8s-single-node", overrides);
    try {
      const w = wait(a, 8);
      expect(w.status).toBe(1);
      expect(w.stderr).toMatch(/cannot be scheduled: .*persistentvolumeclaim "hf-cache" not found/);
    } finally {
      remove(a);
    }
  });

  it("nothing deployed: fleet status says SHUTDOWN, and a wrong cluster is an error, not a state", () => {
    expect(status("k8s-wide-ep").status).toBe("SHUTDOWN");
    const bad = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "kc-")), "config");
    fs.writeFileSync(
      bad,
      fs.readFileSync(cp.env.KUBECONFIG, "utf8").replace(/server: \S+/, "server: https://127.0.0.1:9"),
    );
    const r = node("fleet.js", ["status", "k8s-wide-ep", "--kubeconfig", bad]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/127\.0\.0\.1:9.*ECONNREFUSED/);
    expect(r.stdout).not.toMatch(/SHUTDOWN|PENDING|READY/);
  });
});
