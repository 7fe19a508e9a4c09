import { shq } from "../shell";
import type { K8sObject } from "./objects";

/** What the waiter is told: the island's namespace, workloads, pods and time limits. */
export interface WaitCommandArgs {
  namespace: string;
  /** The workloads to wait for (StatefulSets, Deployments, LeaderWorkerSets), as rendered. */
  workloads: K8sObject[];
  /** Label selector of the island's pods. */
  podSelector: string;
  timeoutS: number;
  stuckAfterS: number;
}

/** The k8s-wait command line (every value through shq). */
export function readinessCommandLine(a: WaitCommandArgs, context?: string): string {
  const argv = [
    "node",
    "dist/bin/k8s-wait.js",
    "--namespace",
    a.namespace,
    ...a.workloads.flatMap((w) => ["--workload", `${w.kind}/${w.metadata.name}`]),
    "--pod-selector",
    a.podSelector,
    "--timeout",
    String(a.timeoutS),
    "--stuck-after",
    String(a.stuckAfterS),
    ...(context ? ["--context", context] : []),
  ];
  return argv.map(shq).join(" ");
}
