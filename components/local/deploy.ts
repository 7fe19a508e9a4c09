/**
 * The local target's Pulumi side, for `pulumi up`: the island deployer. It needs no connection:
 * local.Command runs on the machine that runs Pulumi. The pure side is ./index.
 */
import type { DeployTarget } from "../backend";
import { deployLocalIsland, type LocalIslandContext, type LocalIslandOutputs } from "./island";
import { localPresence } from "./presence";

export const localDeployTarget: DeployTarget<undefined, LocalIslandContext, LocalIslandOutputs> = {
  connect: () => undefined,
  // local.Command has no Read: this machine is asked about every run before planning.
  fleetContext: (_fleet, stack, common) => ({ ...common, presence: localPresence(stack) }),
  deployIsland: deployLocalIsland,
};
export type { LocalIslandOutputs };
