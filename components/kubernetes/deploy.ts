/**
 * The Kubernetes target's Pulumi side, for `pulumi up`: the island deployer, the fleet-wide
 * resources and the provider from Pulumi config. The pure side is ./index.
 */
import type * as k8s from "@pulumi/kubernetes";
import type { DeployTarget } from "../backend";
import type { K8sIslandEndpoints } from "./fleet-objects";
import { deployKubernetesIsland, kubernetesFleet, type KubernetesIslandContext } from "./island";
import { fleetNamespace } from "./fleet-namespace";
import { clusterConfig, kubernetesProvider, type ClusterConfig } from "./provider";
import { kubernetesSettings } from "./settings";

type Connection = { provider: k8s.Provider; cluster: ClusterConfig };

export const kubernetesDeployTarget: DeployTarget<Connection, KubernetesIslandContext, K8sIslandEndpoints> = {
  // The provider's default namespace is the one the plan's URLs were made with.
  // Services share the file's [kubernetes] table, so any service's namespace is the stack's.
  // The readiness waits read the cluster as the provider does (readiness-command.ts).
  connect: (config, name, stack) => ({
    provider: kubernetesProvider(name, config, fleetNamespace(kubernetesSettings(stack.services[0]), stack.stack).name),
    cluster: clusterConfig(config),
  }),
  fleetContext: (fleet, stack, common, connection) => ({
    ...common,
    ...kubernetesFleet(fleet, stack, connection, common.secrets),
  }),
  deployIsland: deployKubernetesIsland,
};
export type { K8sIslandEndpoints as KubernetesIslandOutputs };
export { kubernetesFleet, type KubernetesFleet, type KubernetesIslandContext } from "./island";
export { kubernetesProvider } from "./provider";
