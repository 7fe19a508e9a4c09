import { createsNamespace, type KubernetesSettings } from "../plan/target-settings";
import { k8sBase } from "./base-name";

/*
 * The one answer to "which namespace, and does the fleet own it": object names, in-cluster URLs,
 * the InferencePool reference the planner writes into the EPP's command line, the provider's
 * default namespace, the Namespace object and the outputs all ask here, so they cannot disagree.
 */

/** What a namespace named after the fleet starts with: it says whose it is in `kubectl get ns`. */
export const FLEET_NAMESPACE_PREFIX = "vllm-fleet-";

export interface FleetNamespace {
  name: string;
  /** The fleet creates it (and `pulumi destroy` deletes it, with everything in it). */
  created: boolean;
}

/**
 * `kubernetes.namespace`, or without it one of the fleet's own, `vllm-fleet-<base>` (base-name.ts:
 * at most 28 characters, a DNS label), so two fleets in one cluster never clash on it. Created
 * when it is the fleet's own or `create_namespace = true` says so (config/namespace-owner.ts).
 */
export function fleetNamespace(settings: KubernetesSettings, stack: string): FleetNamespace {
  const name = settings.namespace ?? `${FLEET_NAMESPACE_PREFIX}${k8sBase(stack)}`;
  return { name, created: createsNamespace(settings) };
}
