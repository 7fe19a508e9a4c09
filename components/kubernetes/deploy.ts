/**
 * The Kubernetes backend's Pulumi side, for `pulumi up`: the island deployer, the fleet-wide
 * resources and the provider from Pulumi config. The pure side is ./index.
 */
import type { Backend } from "../backend";
import { deployKubernetesIsland, type KubernetesIslandContext } from "./island";
import { kubernetesPlanOut } from "./plan-out";

export const kubernetesBackend: Backend<KubernetesIslandContext> = {
  deployIsland: deployKubernetesIsland,
  planOut: kubernetesPlanOut,
};
export { kubernetesFleet, type KubernetesFleet, type KubernetesIslandContext } from "./island";
export { kubernetesProvider } from "./provider";
