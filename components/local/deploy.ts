/**
 * The local target's Pulumi side, for `pulumi up`: the island deployer. It needs no connection:
 * local.Command runs on the machine that runs Pulumi. The pure side is ./index.
 */
import type { DeployTarget, IslandContext } from "../backend";
import { deployLocalIsland, type LocalIslandOutputs } from "./island";

export const localDeployTarget: DeployTarget<undefined, IslandContext, LocalIslandOutputs> = {
  connect: () => undefined,
  fleetContext: (_fleet, _plan, common) => common,
  deployIsland: deployLocalIsland,
};
export type { LocalIslandOutputs };
