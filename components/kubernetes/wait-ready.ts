import type { ClusterReader } from "./cluster-reader";
import { worstState, workloadReadiness, type WorkloadReadiness, type WorkloadRef } from "./readiness";

/*
 * The wait `pulumi up` does for a Kubernetes island (bin/k8s-wait.ts, run by a local Command in
 * island.ts), in place of pulumi-kubernetes' own: that one waits out its whole timeout (the engines'
 * startup budget plus ten minutes, over an hour) on a pod that can never start, printing only "0/1
 * Pods ready". This one reads the pods and events and fails as soon as a condition that waiting
 * does not clear (unschedulable, refused at creation, image pull or crash loop) has lasted
 * `stuckAfterS`, with the reason and the object.
 */

export interface WaitOptions {
  namespace: string;
  workloads: WorkloadRef[];
  /** Label selector of the fleet's pods (narrows what is read in a shared namespace). */
  podSelector?: string;
  timeoutS: number;
  stuckAfterS: number;
  pollMs?: number;
  /** Progress lines (state changes only). */
  log: (line: string) => void;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

export type WaitResult =
  | { ok: true; seconds: number; workloads: WorkloadReadiness[] }
  | { ok: false; seconds: number; reason: string; workloads: WorkloadReadiness[] };

const summary = (ws: WorkloadReadiness[]) => ws.map((w) => `${w.state} ${w.reason}`).join("; ");

export async function waitReady(reader: ClusterReader, o: WaitOptions): Promise<WaitResult> {
  const now = o.now ?? Date.now;
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const started = now();
  const elapsed = () => Math.round((now() - started) / 1000);
  /** When each stuck condition (readiness.ts `stuck` key) was first seen, by this waiter's clock. */
  const stuckSince = new Map<string, number>();
  let unreadableSince: number | undefined;
  let lastError = "";
  let last: WorkloadReadiness[] = [];
  let lastLine = "";
  for (;;) {
    try {
      const snap = await reader.snapshot(o.namespace, o.workloads, o.podSelector);
      unreadableSince = undefined;
      last = o.workloads.map((w) => workloadReadiness(w, snap));
      const line = summary(last);
      if (line !== lastLine) o.log(`[${elapsed()} s] ${worstState(last.map((w) => w.state))}: ${line}`);
      lastLine = line;
      if (last.every((w) => w.state === "READY")) return { ok: true, seconds: elapsed(), workloads: last };
      const current = new Set(last.flatMap((w) => (w.stuck ? [w.stuck] : [])));
      for (const k of [...stuckSince.keys()]) if (!current.has(k)) stuckSince.delete(k);
      for (const w of last) {
        if (!w.stuck) continue;
        const since = stuckSince.get(w.stuck) ?? now();
        stuckSince.set(w.stuck, since);
        const lasted = (now() - since) / 1000;
        if (lasted >= o.stuckAfterS)
          return {
            ok: false,
            seconds: elapsed(),
            workloads: last,
            reason: `${w.reason} (for ${Math.round(lasted)} s; kubernetes.stuck_after = ${o.stuckAfterS})`,
          };
      }
    } catch (e) {
      lastError = (e as Error).message;
      unreadableSince ??= now();
      if ((now() - unreadableSince) / 1000 >= o.stuckAfterS)
        return {
          ok: false,
          seconds: elapsed(),
          workloads: last,
          reason: `could not read the cluster for ${Math.round((now() - unreadableSince) / 1000)} s, so readiness was not observed: ${lastError}`,
        };
    }
    if (elapsed() >= o.timeoutS)
      return {
        ok: false,
        seconds: elapsed(),
        workloads: last,
        reason: `not Ready within ${o.timeoutS} s: ${summary(last) || lastError}`,
      };
    await sleep(o.pollMs ?? 2000);
  }
}
