import { ACTIVITY_FILE, parseActivity } from "../host/activity-ledger";
import type { HeldJob, IslandHeld, UnseenJob } from "../host/held-time";
import type { DeploymentPlan } from "../plan/deployment-plan";
import type { ClusterAccess } from "../target";
import { k8sNames } from "./names";
import { clusterReader, type ClusterReader } from "./cluster-reader";
import { renderK8sFleet } from "./fleet-objects";
import type { KubeObject } from "./readiness";
import { kubernetesSettings } from "./settings";

/*
 * `fleet cost` on Kubernetes, through the API server: each island's pods that exist now, each from
 * its status.startTime (until now while it runs, until its containers' last finishedAt once it
 * ended) x the GPUs its containers request (kubernetes.gpu_resource), with the island's activity
 * ledger from its ConfigMap. The API server keeps no record of pods deleted before (an earlier up):
 * they are not in the sums, and every report says so.
 */

interface PodFields {
  metadata: { name: string; labels?: Record<string, string> };
  spec?: { containers?: { resources?: { requests?: Record<string, string | number> } }[] };
  status?: {
    phase?: string;
    startTime?: string;
    containerStatuses?: { state?: { terminated?: { finishedAt?: string } } }[];
  };
}

/** One pod as a held job; a string (why) when its time cannot be told. */
export function podHeld(pod: KubeObject, gpuResource: string, now: number): Omit<HeldJob, "activity"> | string {
  const p = pod as unknown as PodFields;
  const gpus = (p.spec?.containers ?? []).reduce((n, c) => n + Number(c.resources?.requests?.[gpuResource] ?? 0), 0);
  const started = p.status?.startTime ? Date.parse(p.status.startTime) / 1000 : null;
  const phase = p.status?.phase ?? "Unknown";
  const base = {
    id: p.metadata.name,
    current: true,
    gpus,
    gpuSource: `the pod's ${gpuResource} requests`,
    seenBy: "the API server",
  };
  if (started === null) return { ...base, running: false, start: null, elapsed: 0 };
  if (phase === "Running" || phase === "Pending")
    return { ...base, running: true, start: started, elapsed: Math.max(0, now - started) };
  const ends = (p.status?.containerStatuses ?? [])
    .map((c) => c.state?.terminated?.finishedAt)
    .filter((t): t is string => !!t)
    .map((t) => Date.parse(t) / 1000);
  if (!ends.length) return `pod ${p.metadata.name} is ${phase}: when it ended is not in its status`;
  return { ...base, running: false, start: started, elapsed: Math.max(0, Math.max(...ends) - started) };
}

export async function heldThroughApi(
  plan: DeploymentPlan,
  access: ClusterAccess,
  reader?: ClusterReader,
  now = Date.now() / 1000,
): Promise<IslandHeld[]> {
  const fleet = renderK8sFleet(plan, []);
  const r = reader ?? (await clusterReader(access));
  const instance = fleet.islands[0]?.replicas[0]?.object.metadata.labels?.["app.kubernetes.io/instance"] ?? "";
  const snap = await r.snapshot(
    fleet.namespace,
    [],
    `app.kubernetes.io/name=vllm-fleet,app.kubernetes.io/instance=${instance}`,
  );
  const gpuResource = kubernetesSettings(plan).gpu_resource;
  const names = k8sNames(plan);
  return Promise.all(
    plan.islands.map(async (island) => {
      const ledger = (await r.configMapData(fleet.namespace, names.activityConfigMap(island.index)))?.[ACTIVITY_FILE];
      const activity = ledger === undefined ? null : parseActivity(ledger);
      const jobs: HeldJob[] = [];
      const unseen: UnseenJob[] = [];
      for (const pod of snap.pods) {
        const labels = pod.metadata.labels ?? {};
        if (labels["vllm-fleet/island"] !== String(island.index)) continue;
        if (plan.service !== undefined && labels["vllm-fleet/service"] !== plan.service) continue;
        const held = podHeld(pod, gpuResource, now);
        if (typeof held === "string") unseen.push({ id: pod.metadata.name, current: true, why: held });
        else jobs.push({ ...held, activity });
      }
      return {
        island: island.index,
        jobs,
        unseen,
        notes: [
          "pods deleted before (an earlier up, a rescheduled pod) are not counted: the API server keeps no record of them",
        ],
      };
    }),
  );
}
