/**
 * The Kubernetes backend: per island the engine workloads, their Services, the router and the
 * Mooncake store as Kubernetes objects, named from the plan so every URL is known at preview.
 * Everything outside this folder imports it from here.
 */
import type { Backend } from "../backend";
import { deployKubernetesIsland, type KubernetesIslandContext } from "./island";
import { kubernetesPlanOut } from "./plan-out";

export const kubernetesBackend: Backend<KubernetesIslandContext> = { deployIsland: deployKubernetesIsland, planOut: kubernetesPlanOut };
export { kubernetesFleet, type KubernetesFleet, type KubernetesIslandContext } from "./island";

export { kubernetesProvider } from "./provider";
export { k8sNames, type K8sNames } from "./names";
export { allK8sObjects, k8sEndpoints, renderK8sFleet, type K8sFleetObjects, type K8sIslandEndpoints } from "./fleet-objects";
export { mountedPath } from "./render-context";
export type { K8sObject } from "./objects";
