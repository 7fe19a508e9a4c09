import { BUILT_IN_NAMESPACES } from "./table";

/**
 * Whether the fleet creates its namespace (and `pulumi destroy` deletes it, with everything in it).
 * By default only its own one (`kubernetes.namespace` unset): a namespace the user names is used as
 * it exists, as Helm uses one unless asked to create it, so what lives there (pull Secrets, a
 * ServiceAccount, a PVC) is never deleted with the fleet. `create_namespace` says otherwise either
 * way; the namespaces every cluster has are never created.
 */
export function createsNamespace(kube: { namespace?: string; create_namespace?: boolean }): boolean {
  if (kube.namespace !== undefined && BUILT_IN_NAMESPACES.includes(kube.namespace)) return false;
  return kube.create_namespace ?? kube.namespace === undefined;
}
