/**
 * readiness.ts and wait-ready.ts on what a real API server said: the snapshot in
 * test/fixtures/k8s-readiness/stuck-namespace.json was read with `kubectl get -o json` from the test
 * control plane (kube-apiserver v1.37.2, kwok nodes with 8 GPUs each, LWS v0.10.0) after applying, in a
 * namespace enforcing Pod Security `baseline`: a StatefulSet asking for 16 GPUs, one adding IPC_LOCK,
 * one mounting a PVC that does not exist, a Deployment that can run, and two LeaderWorkerSets of 2
 * and 4 eight-GPU pods on a 4-node cluster whose other pods hold some GPUs.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import type { ClusterReader } from "../../components/kubernetes/cluster-reader";
import {
  workloadReadiness,
  worstState,
  type ClusterSnapshot,
  type KubeObject,
  type WorkloadRef,
} from "../../components/kubernetes/readiness";
import { waitReady } from "../../components/kubernetes/wait-ready";
import { ROOT } from "../helpers";

const raw = JSON.parse(
  fs.readFileSync(path.join(ROOT, "test/fixtures/k8s-readiness/stuck-namespace.json"), "utf8"),
) as Record<string, any[]>;

function snapshot(mutate: (s: Record<string, any[]>) => void = () => {}): ClusterSnapshot {
  const s = structuredClone(raw);
  mutate(s);
  const workloads = new Map<string, KubeObject>();
  for (const [list, kind] of [
    ["statefulsets", "StatefulSet"],
    ["deployments", "Deployment"],
    ["leaderworkersets", "LeaderWorkerSet"],
  ] as const)
    for (const o of s[list]) workloads.set(`${kind}/${o.metadata.name}`, o);
  return { workloads, pods: s.pods, replicaSets: s.replicasets, events: s.events as any };
}

const sts = (name: string): WorkloadRef => ({ kind: "StatefulSet", name });

describe("readiness from a real API server's objects", () => {
  it("a pod asking for more GPUs than any node has: PENDING, stuck, with the scheduler's reason", () => {
    const r = workloadReadiness(sts("toobig"), snapshot());
    expect(r.state).toBe("PENDING");
    expect(r.reason).toMatch(
      /^StatefulSet toobig: pod toobig-0 cannot be scheduled: 0\/4 nodes are available: 4 Insufficient nvidia\.com\/gpu/,
    );
    expect(r.stuck).toBe("toobig-0/Unschedulable");
    expect([r.ready, r.desired]).toEqual([0, 1]);
  });

  it("a pod Pod Security refuses: FAILED with the StatefulSet's FailedCreate event", () => {
    const r = workloadReadiness(sts("ipclock"), snapshot());
    expect(r.state).toBe("FAILED");
    expect(r.reason).toMatch(
      /^StatefulSet ipclock: FailedCreate: create Pod ipclock-0 in StatefulSet ipclock failed error: pods "ipclock-0" is forbidden: violates PodSecurity "baseline:latest": non-default capabilities/i,
    );
    expect(r.stuck).toBe("ipclock/FailedCreate");
  });

  it("a pod whose PVC does not exist: PENDING, stuck, naming the claim", () => {
    const r = workloadReadiness(sts("nopvc"), snapshot());
    expect(r.state).toBe("PENDING");
    expect(r.reason).toContain('persistentvolumeclaim "hf-cache" not found');
    expect(r.stuck).toBe("nopvc-0/Unschedulable");
  });

  it("a Deployment and a LeaderWorkerSet whose pods all run: READY", () => {
    const s = snapshot();
    expect(workloadReadiness({ kind: "Deployment", name: "fine" }, s)).toMatchObject({
      state: "READY",
      ready: 2,
      desired: 2,
    });
    expect(workloadReadiness({ kind: "LeaderWorkerSet", name: "wide" }, s)).toMatchObject({
      state: "READY",
      ready: 2,
      desired: 2,
    });
  });

  it("a LeaderWorkerSet group half scheduled: PENDING on its unschedulable worker", () => {
    const r = workloadReadiness({ kind: "LeaderWorkerSet", name: "widetoo" }, snapshot());
    expect(r).toMatchObject({ state: "PENDING", ready: 2, desired: 4 });
    expect(r.reason).toMatch(
      /pod widetoo-0-[23] cannot be scheduled: 0\/4 nodes are available: 4 Insufficient nvidia\.com\/gpu/,
    );
  });

  it("a workload that does not exist is PENDING and stuck, not READY", () => {
    expect(workloadReadiness(sts("gone"), snapshot())).toMatchObject({ state: "PENDING", stuck: "missing" });
  });

  it("a FailedCreate followed by a successful create no longer fails the workload", () => {
    const s = snapshot((r) => {
      const failed = (r.events as any[]).find((e) => e.reason === "FailedCreate");
      r.events.push({
        ...structuredClone(failed),
        reason: "SuccessfulCreate",
        type: "Normal",
        message: "create Pod ipclock-0 in StatefulSet ipclock successful",
        lastTimestamp: "2099-01-01T00:00:00Z",
      });
    });
    expect(workloadReadiness(sts("ipclock"), s)).toMatchObject({ state: "PENDING" });
  });

  it("a container that cannot pull its image or keeps crashing is FAILED, naming pod and container", () => {
    for (const reason of ["ImagePullBackOff", "CrashLoopBackOff"]) {
      const s = snapshot((r) => {
        const pod = r.pods.find((p) => p.metadata.name.startsWith("fine-"))!;
        pod.status.conditions = pod.status.conditions.map((c: any) =>
          c.type === "Ready" ? { ...c, status: "False" } : c,
        );
        pod.status.containerStatuses[0].ready = false;
        pod.status.containerStatuses[0].state = { waiting: { reason, message: `${reason} for the test` } };
        const d = r.deployments[0];
        d.status.availableReplicas = 1;
        d.status.readyReplicas = 1;
      });
      const r = workloadReadiness({ kind: "Deployment", name: "fine" }, s);
      expect(r.state).toBe("FAILED");
      expect(r.reason).toMatch(new RegExp(`^pod fine-\\S+: container e: ${reason}: ${reason} for the test$`));
    }
  });

  it("a StatefulSet mid-rollout (update revision not current) is not READY though its pod is Ready", () => {
    const s = snapshot((r) => {
      const o = r.statefulsets.find((x) => x.metadata.name === "wide")!;
      o.status.updateRevision = "wide-new";
    });
    expect(workloadReadiness(sts("wide"), s).state).toBe("LAUNCHING");
  });

  it("the fleet's state is its worst workload's", () => {
    expect(worstState(["READY", "LAUNCHING", "PENDING"])).toBe("PENDING");
    expect(worstState(["READY", "FAILED", "PENDING"])).toBe("FAILED");
    expect(worstState(["READY", "READY"])).toBe("READY");
  });
});

/** A reader answering from a list of snapshots (or errors), one per poll; a clock the sleeps advance. */
function fakeCluster(answers: (ClusterSnapshot | Error)[]) {
  let t = 0;
  let k = 0;
  const reader: ClusterReader = {
    server: "https://test",
    mergePatch: async () => {
      throw new Error("not written here");
    },
    objectAnnotations: async () => undefined,
    configMapData: async () => undefined,
    snapshot: async () => {
      const a = answers[Math.min(k++, answers.length - 1)];
      if (a instanceof Error) throw a;
      return a;
    },
    // The waiter asks no pod.
    podGet: async () => undefined,
    podProxyText: async () => ({ ok: false, why: "not asked" }),
    podLog: async () => ({ ok: false, why: "not asked" }),
  };
  return { reader, now: () => t, sleep: async (ms: number) => void (t += ms), polls: () => k };
}

describe("the readiness wait", () => {
  const lines: string[] = [];
  const opts = (workloads: WorkloadRef[]) => ({
    namespace: "stuck",
    workloads,
    timeoutS: 600,
    stuckAfterS: 30,
    pollMs: 2000,
    log: (l: string) => lines.push(l),
  });

  it("fails once a stuck condition has lasted stuck_after, with the reason and the key to change", async () => {
    const c = fakeCluster([snapshot()]);
    const r = await waitReady(c.reader, { ...opts([sts("toobig")]), now: c.now, sleep: c.sleep });
    expect(r.ok).toBe(false);
    expect(r.seconds).toBe(30);
    if (!r.ok) expect(r.reason).toMatch(/Insufficient nvidia\.com\/gpu.*\(for 30 s; kubernetes\.stuck_after = 30\)$/);
  });

  it("returns as soon as every workload is Ready", async () => {
    const c = fakeCluster([snapshot()]);
    const r = await waitReady(c.reader, {
      ...opts([
        { kind: "Deployment", name: "fine" },
        { kind: "LeaderWorkerSet", name: "wide" },
      ]),
      now: c.now,
      sleep: c.sleep,
    });
    expect(r).toMatchObject({ ok: true, seconds: 0 });
    expect(c.polls()).toBe(1);
  });

  it("a condition that clears before its grace does not fail the wait", async () => {
    const stuck = snapshot();
    const cleared = snapshot((r) => {
      r.pods = r.pods.filter((p) => p.metadata.name !== "toobig-0");
      const ok = structuredClone(raw.pods.find((p) => p.metadata.name === "wide-0")!);
      ok.metadata.name = "toobig-0";
      ok.metadata.labels = { app: "toobig" };
      r.pods.push(ok);
      const o = r.statefulsets.find((x) => x.metadata.name === "toobig")!;
      o.status = { ...o.status, readyReplicas: 1, updatedReplicas: 1, currentRevision: o.status.updateRevision };
    });
    const c = fakeCluster([...Array(10).fill(stuck), cleared]);
    const r = await waitReady(c.reader, { ...opts([sts("toobig")]), now: c.now, sleep: c.sleep });
    expect(r).toMatchObject({ ok: true, seconds: 20 });
  });

  it("a cluster it cannot read fails after the grace, saying nothing was observed", async () => {
    const c = fakeCluster([new Error("connect ECONNREFUSED 127.0.0.1:6443")]);
    const r = await waitReady(c.reader, { ...opts([sts("toobig")]), now: c.now, sleep: c.sleep });
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.reason).toBe(
        "could not read the cluster for 30 s, so readiness was not observed: connect ECONNREFUSED 127.0.0.1:6443",
      );
  });

  it("still loading (no stuck condition) until the timeout: fails with the last state", async () => {
    const launching = snapshot((r) => {
      const pod = r.pods.find((p) => p.metadata.name === "wide-0-1")!;
      pod.status.conditions = pod.status.conditions.map((c: any) =>
        c.type === "Ready" ? { ...c, status: "False" } : c,
      );
    });
    const c = fakeCluster([launching]);
    const r = await waitReady(c.reader, {
      ...opts([{ kind: "LeaderWorkerSet", name: "wide" }]),
      timeoutS: 100,
      now: c.now,
      sleep: c.sleep,
    });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toBe("not Ready within 100 s: LAUNCHING LeaderWorkerSet wide: 1 of 2 pods Ready");
  });
});
