import { parseIdleReleased } from "../host/activity-ledger";
import { MARKER_KEY } from "./activity-monitor";
import { configMapPath, type ClusterReader } from "./cluster-reader";
import type { K8sNames } from "./names";

/*
 * The idle release mark an island's activity monitor leaves in its ConfigMap (activity-monitor.ts):
 * read by `fleet status` and by `pulumi preview` and `up` (release-observe.ts), cleared by `fleet wake`.
 */

/** When the island's monitor released it and since when it was idle, or undefined when it is not released. */
export async function readReleaseMark(
  r: ClusterReader,
  names: K8sNames,
  island: number,
): Promise<{ at: number; idleSince: number } | undefined> {
  const mark = (await r.configMapData(names.namespace, names.activityConfigMap(island)))?.[MARKER_KEY];
  return mark === undefined ? undefined : parseIdleReleased(mark);
}

/** Removes the island's mark (a merge patch of its one key: the ledger stays). */
export const clearReleaseMark = (r: ClusterReader, names: K8sNames, island: number): Promise<void> =>
  r.mergePatch(configMapPath(names.namespace, names.activityConfigMap(island)), { data: { [MARKER_KEY]: null } });
