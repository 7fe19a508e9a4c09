/*
 * Whether a fleet's workloads serve, and if not why, from what the API server says about them: the
 * workload objects, their pods and the namespace's events (one snapshot, read by cluster-reader.ts).
 * Pure, so `pulumi up`'s waiter (bin/k8s-wait.ts) and `fleet status` judge alike. The words are
 * the fleet CLI's: PENDING (pods not created or not scheduled), LAUNCHING (scheduled, not Ready),
 * READY, FAILED (refused at creation, image or container failures).
 */

export type ReadinessState = "PENDING" | "LAUNCHING" | "READY" | "FAILED";

/** A workload the fleet created: its pods are what must become Ready. */
export interface WorkloadRef {
  kind: "StatefulSet" | "Deployment" | "LeaderWorkerSet";
  name: string;
}

/** The fields read here, as the API server returns them (JSON). */
export interface KubeObject {
  kind?: string;
  metadata: {
    name: string;
    uid?: string;
    generation?: number;
    labels?: Record<string, string>;
    deletionTimestamp?: string;
    ownerReferences?: { kind: string; name: string; uid: string }[];
  };
  spec?: {
    replicas?: number;
    selector?: { matchLabels?: Record<string, string> };
    leaderWorkerTemplate?: { size?: number };
    updateStrategy?: { type?: string };
    /** A pod's node. */
    nodeName?: string;
  };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    readyReplicas?: number;
    updatedReplicas?: number;
    availableReplicas?: number;
    currentRevision?: string;
    updateRevision?: string;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    /** A pod's. */
    phase?: string;
    reason?: string;
    message?: string;
    containerStatuses?: ContainerStatus[];
    initContainerStatuses?: ContainerStatus[];
  };
}

export interface ContainerStatus {
  name: string;
  state?: { waiting?: { reason?: string; message?: string } };
  ready?: boolean;
  /** Times the kubelet started the container again in this pod (a recreated pod starts at 0). */
  restartCount?: number;
  lastState?: { terminated?: { exitCode?: number; reason?: string; finishedAt?: string } };
}

export interface KubeEvent {
  involvedObject: { kind?: string; name?: string };
  reason?: string;
  type?: string;
  message?: string;
  lastTimestamp?: string | null;
  eventTime?: string | null;
  metadata: { creationTimestamp?: string };
}

export interface ClusterSnapshot {
  /** The live workloads, by `Kind/name`; absent when it does not exist. */
  workloads: Map<string, KubeObject>;
  pods: KubeObject[];
  /** The Deployments' ReplicaSets: their FailedCreate events are a Deployment's. */
  replicaSets: KubeObject[];
  events: KubeEvent[];
}

export interface WorkloadReadiness {
  ref: WorkloadRef;
  state: ReadinessState;
  /** Pods Ready of those wanted. */
  ready: number;
  desired: number;
  /** What it waits for or why it failed, naming the object. */
  reason: string;
  /**
   * A condition that does not clear by waiting alone (unschedulable, refused, image or crash
   * loop): the waiter fails once it has lasted its grace. Its key identifies the condition.
   */
  stuck?: string;
}

export const refKey = (r: WorkloadRef) => `${r.kind}/${r.name}`;

/** Container waiting reasons that mean the container cannot start as configured. */
const CONTAINER_FAILURES = new Set([
  "ImagePullBackOff",
  "ErrImagePull",
  "ErrImageNeverPull",
  "InvalidImageName",
  "CrashLoopBackOff",
  "CreateContainerConfigError",
  "CreateContainerError",
  "RunContainerError",
]);

const when = (e: KubeEvent) => Date.parse(e.lastTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp ?? "") || 0;

/** Pods wanted: a StatefulSet's or Deployment's replicas; a LeaderWorkerSet's groups times their size. */
function desiredPods(ref: WorkloadRef, o: KubeObject): number {
  const replicas = o.spec?.replicas ?? 1;
  return ref.kind === "LeaderWorkerSet" ? replicas * (o.spec?.leaderWorkerTemplate?.size ?? 1) : replicas;
}

function podsOf(ref: WorkloadRef, o: KubeObject, pods: KubeObject[]): KubeObject[] {
  const selector: Record<string, string> =
    ref.kind === "LeaderWorkerSet"
      ? { "leaderworkerset.sigs.k8s.io/name": ref.name }
      : (o.spec?.selector?.matchLabels ?? {});
  const keys = Object.entries(selector);
  if (!keys.length) return [];
  return pods.filter((p) => keys.every(([k, v]) => p.metadata.labels?.[k] === v));
}

/**
 * The objects whose events are the workload's: itself; a Deployment's ReplicaSets (owned by it); a
 * LeaderWorkerSet's StatefulSets (`<lws>` for the leaders, `<lws>-<group>` for each group's workers).
 */
function eventSources(ref: WorkloadRef, o: KubeObject, snap: ClusterSnapshot): (e: KubeEvent) => boolean {
  const rs = new Set(
    snap.replicaSets
      .filter((r) => r.metadata.ownerReferences?.some((x) => x.uid === o.metadata.uid))
      .map((r) => r.metadata.name),
  );
  const group = new RegExp(`^${ref.name.replace(/[.]/g, "\\.")}(-\\d+)?$`);
  return (e) => {
    const { kind, name = "" } = e.involvedObject;
    if (kind === ref.kind && name === ref.name) return true;
    if (ref.kind === "Deployment") return kind === "ReplicaSet" && rs.has(name);
    if (ref.kind === "LeaderWorkerSet") return kind === "StatefulSet" && group.test(name);
    return false;
  };
}

/** The latest pod-creation failure not followed by a success on the same object, if any. */
function failedCreate(events: KubeEvent[]): KubeEvent | undefined {
  const latest = new Map<string, KubeEvent>();
  for (const e of events) {
    if (e.reason !== "FailedCreate" && e.reason !== "SuccessfulCreate") continue;
    const key = `${e.involvedObject.kind}/${e.involvedObject.name}`;
    const prev = latest.get(key);
    if (!prev || when(e) >= when(prev)) latest.set(key, e);
  }
  return [...latest.values()].find((e) => e.reason === "FailedCreate");
}

const condition = (p: KubeObject, type: string) =>
  (p.status?.conditions ?? []).find((c: { type: string }) => c.type === type) as
    { status: string; reason?: string; message?: string } | undefined;

const podReady = (p: KubeObject) => !p.metadata.deletionTimestamp && condition(p, "Ready")?.status === "True";

/** Why a pod cannot run, if it cannot: a container that cannot start, a failed pod, or no node for it. */
function podProblem(p: KubeObject): { state: ReadinessState; reason: string; key: string } | undefined {
  const name = `pod ${p.metadata.name}`;
  const statuses = [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])];
  for (const c of statuses) {
    const waiting = c.state?.waiting;
    if (waiting?.reason && CONTAINER_FAILURES.has(waiting.reason))
      return {
        state: "FAILED",
        reason: `${name}: container ${c.name}: ${waiting.reason}${waiting.message ? `: ${waiting.message}` : ""}`,
        key: `${p.metadata.name}/${c.name}/${waiting.reason}`,
      };
  }
  if (p.status?.phase === "Failed")
    return {
      state: "FAILED",
      reason: `${name} failed${p.status.reason ? `: ${p.status.reason}` : ""}${p.status.message ? `: ${p.status.message}` : ""}`,
      key: `${p.metadata.name}/Failed`,
    };
  const scheduled = condition(p, "PodScheduled");
  if (scheduled?.status === "False" && scheduled.reason === "Unschedulable")
    return {
      state: "PENDING",
      reason: `${name} cannot be scheduled: ${scheduled.message ?? "Unschedulable"}`,
      key: `${p.metadata.name}/Unschedulable`,
    };
  return undefined;
}

/** Whether the workload's controller has rolled out its latest spec to every pod and they are Ready. */
function rolledOut(ref: WorkloadRef, o: KubeObject, desired: number): boolean {
  const s = o.status ?? {};
  if ((s.observedGeneration ?? 0) < (o.metadata.generation ?? 0)) return false;
  switch (ref.kind) {
    case "StatefulSet":
      return (
        (s.readyReplicas ?? 0) >= desired &&
        (s.updatedReplicas ?? 0) >= desired &&
        (s.replicas ?? 0) === desired &&
        (!s.updateRevision || s.currentRevision === s.updateRevision || o.spec?.updateStrategy?.type === "OnDelete")
      );
    case "Deployment":
      return (
        (s.updatedReplicas ?? 0) >= desired && (s.availableReplicas ?? 0) >= desired && (s.replicas ?? 0) === desired
      );
    case "LeaderWorkerSet": {
      const groups = o.spec?.replicas ?? 1;
      const available = (s.conditions ?? []).some((c) => c.type === "Available" && c.status === "True");
      return available && (s.readyReplicas ?? 0) >= groups && (s.updatedReplicas ?? 0) >= groups;
    }
  }
}

/** One workload's state, naming the object and the reason. */
export function workloadReadiness(ref: WorkloadRef, snap: ClusterSnapshot): WorkloadReadiness {
  const label = `${ref.kind} ${ref.name}`;
  const o = snap.workloads.get(refKey(ref));
  if (!o) return { ref, state: "PENDING", ready: 0, desired: 0, reason: `${label} does not exist`, stuck: "missing" };
  const desired = desiredPods(ref, o);
  const pods = podsOf(ref, o, snap.pods);
  const ready = pods.filter(podReady).length;
  const base = { ref, ready, desired };
  if (rolledOut(ref, o, desired) && ready >= desired)
    return { ...base, state: "READY", reason: `${label}: ${ready} of ${desired} pods Ready` };

  const problem = pods.filter((p) => !p.metadata.deletionTimestamp).flatMap((p) => podProblem(p) ?? [])[0];
  if (problem?.state === "FAILED") return { ...base, state: "FAILED", reason: problem.reason, stuck: problem.key };
  const refused = failedCreate(snap.events.filter(eventSources(ref, o, snap)));
  const live = pods.filter((p) => !p.metadata.deletionTimestamp).length;
  if (refused && live < desired)
    return {
      ...base,
      state: "FAILED",
      reason:
        `${refused.involvedObject.kind} ${refused.involvedObject.name}: FailedCreate: ${refused.message ?? ""}`.trim(),
      stuck: `${refused.involvedObject.name}/FailedCreate`,
    };
  if (problem) return { ...base, state: problem.state, reason: `${label}: ${problem.reason}`, stuck: problem.key };
  if (live < desired) return { ...base, state: "PENDING", reason: `${label}: ${live} of ${desired} pods created` };
  const unscheduled = pods.filter((p) => condition(p, "PodScheduled")?.status !== "True").length;
  if (unscheduled) return { ...base, state: "PENDING", reason: `${label}: ${unscheduled} pods not scheduled yet` };
  return { ...base, state: "LAUNCHING", reason: `${label}: ${ready} of ${desired} pods Ready` };
}

/** The worst of several states: FAILED over PENDING over LAUNCHING over READY. */
export function worstState(states: ReadinessState[]): ReadinessState {
  for (const s of ["FAILED", "PENDING", "LAUNCHING"] as const) if (states.includes(s)) return s;
  return "READY";
}
