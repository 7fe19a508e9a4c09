/**
 * The Kubernetes backend: per island the engine workloads, their Services, the router and the
 * Mooncake store as Kubernetes objects, named from the plan so every URL is known at preview.
 * Everything outside this folder imports it from here (the pure object renderers, which the CLIs
 * load without the Pulumi SDK) or from ./deploy (the island deployer and provider, for `pulumi up`).
 */
export { kubernetesPlanOut } from "./plan-out";
export { k8sNames, type K8sNames } from "./names";
export {
  allK8sObjects,
  allK8sStackObjects,
  k8sEndpoints,
  renderK8sFleet,
  renderK8sStack,
  type K8sFleetObjects,
  type K8sIslandEndpoints,
  type K8sStackObjects,
} from "./fleet-objects";
export { mountedPath } from "./render-context";
export { kubernetesEngineFlags } from "./engine-pod";
export type { K8sObject } from "./objects";
export { kubernetesTarget } from "./target";
export { clusterReader, ClusterReadError, type ClusterReader } from "./cluster-reader";
export { waitReady } from "./wait-ready";
export { readinessCommandLine } from "./wait-command-line";
export type { WorkloadRef } from "./readiness";
export { readReleasesInTests, RELEASE_ANNOTATION } from "./release-observe";
