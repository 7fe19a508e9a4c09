import type { StackPlan } from "../plan/stack-plan";
import { workloadPath } from "./activity-monitor";
import type { ClusterReader } from "./cluster-reader";
import { k8sNames } from "./names";
import { readReleaseMark } from "./release-mark";

/*
 * `pulumi preview` and `up` bring back an island its activity monitor released (docs/idle-release.md).
 * The kubernetes provider diffs the program's inputs against its checkpoint, never the live object
 * (pulumi-kubernetes 4.34.2 provider/pkg/provider/provider.go Diff: the old object is the
 * checkpoint's), so the monitor's scale to zero is invisible to it. So before planning, the program
 * reads each such island's release mark; a marked island's engine workloads carry the release's
 * time in an annotation, a change the provider sees: its update applies the whole planned workload,
 * replicas included (server-side apply, provider/pkg/await/await.go ssaUpdate), and the island is
 * back. An unmarked workload keeps the value the cluster has, so the annotation changes only with a
 * new release: never after `fleet wake` or once the monitor has cleared the mark.
 */

/** On each engine workload of an island that was released and brought back by `pulumi up`: the release's epoch seconds. */
export const RELEASE_ANNOTATION = "vllm-fleet/idle-released-at";

/** What the program read of one island (by its activity ConfigMap's name) before planning. */
export interface IslandRelease {
  /** The island's release mark, when its monitor released it and nothing brought it back yet. */
  mark?: { at: number; idleSince: number };
  /** Each engine workload's annotation as the cluster has it (undefined: none, or no workload yet), by name. */
  live: Record<string, string | undefined>;
}

/** The annotation a workload is planned with: the release's time when marked, else what the cluster has. */
export function releaseAnnotation(seen: IslandRelease | undefined, workload: string): string | undefined {
  if (!seen) return undefined;
  return seen.mark ? String(seen.mark.at) : seen.live[workload];
}

/** The islands whose monitor may release them (idle_release_after set): the only ones read. */
export function releasableIslands(stack: StackPlan) {
  return stack.services.flatMap((plan) =>
    plan.dryRun
      ? []
      : plan.islands.filter((i) => i.activity.idleReleaseAfterS !== null).map((island) => ({ plan, island })),
  );
}

/**
 * Reads the mark and the workloads' annotation of every releasable island, and warns about each
 * marked one. A cluster that cannot answer is an error: planning on a guess would leave a released
 * island at zero replicas, or take the annotation away from one that was brought back.
 */
export async function observeReleases(
  reader: () => Promise<ClusterReader>,
  stack: StackPlan,
  warn: (message: string) => void,
): Promise<Record<string, IslandRelease>> {
  const islands = releasableIslands(stack);
  if (islands.length === 0) return {};
  const seen: Record<string, IslandRelease> = {};
  try {
    const r = await reader();
    // Every island's mark and workloads at once: preview waits on these reads before it plans.
    const read = await Promise.all(
      islands.map(async ({ plan, island }) => {
        const names = k8sNames(plan);
        const workloads = names.workloads(island);
        const [mark, annotations] = await Promise.all([
          readReleaseMark(r, names, island.index),
          Promise.all(workloads.map((w) => r.objectAnnotations(workloadPath(names.namespace, w)))),
        ]);
        const live = Object.fromEntries(workloads.map((w, k) => [w.name, annotations[k]?.[RELEASE_ANNOTATION]]));
        return { names, island, mark, live };
      }),
    );
    for (const { names, island, mark, live } of read) {
      seen[names.activityConfigMap(island.index)] = { live, ...(mark && { mark }) };
      if (mark)
        warn(
          `${names.prefix(island.index)}: its activity monitor released it at ${new Date(mark.at * 1000).toISOString()} (idle since ${new Date(mark.idleSince * 1000).toISOString()}, idle_release_after); pulumi up scales its engine workloads back`,
        );
    }
  } catch (e) {
    throw new Error(
      `pulumi preview and up first read each island's idle release mark from the cluster, to bring back an island its activity monitor released (docs/idle-release.md), and could not: ${(e as Error).message}`,
      { cause: e },
    );
  }
  return seen;
}

type ReaderFactory = () => Promise<ClusterReader>;
/** On globalThis, so a test's reader reaches the program it imports after vi.resetModules(). */
const TEST_READER = Symbol.for("vllm-fleet.releases.test-reader");

/** Under Pulumi's mocks no cluster answers: a test gives the reader the program reads marks with (test/program-harness.ts). */
export function readReleasesInTests(reader: ReaderFactory | undefined): void {
  (globalThis as Record<symbol, ReaderFactory | undefined>)[TEST_READER] = reader;
}

/** The reader a test gave, if any. */
export const testReleaseReader = (): ReaderFactory | undefined =>
  (globalThis as Record<symbol, ReaderFactory | undefined>)[TEST_READER];
