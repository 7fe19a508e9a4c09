/**
 * The SLURM target's Pulumi side, for `pulumi up`: the island deployer and the login connection
 * from Pulumi config. The pure side is ./index.
 */
import type * as command from "@pulumi/command";
import type { DeployTarget } from "../backend";
import { coScheduledGroups } from "./hetjob";
import { deploySlurmGroup, deploySlurmIsland, type SlurmIslandContext, type SlurmIslandOutputs } from "./island";
import { loginConnection } from "./login-connection";
import { slurmPresence } from "./island-presence";

export const slurmDeployTarget: DeployTarget<
  command.types.input.remote.ConnectionArgs,
  SlurmIslandContext,
  SlurmIslandOutputs
> = {
  connect: (config) => loginConnection(config),
  // remote.Command has no Read: the login node is asked about every job before planning.
  fleetContext: (_fleet, stack, common, connection) => ({
    ...common,
    connection,
    presence: slurmPresence(stack, connection),
  }),
  deployIsland: deploySlurmIsland,
  // slurm.co_schedule: every island of every service as one heterogeneous job.
  groups: coScheduledGroups,
  deployGroup: deploySlurmGroup,
};
export type { SlurmIslandContext, SlurmIslandOutputs };
export { connectionArgs, loginConnection } from "./login-connection";
export { loginShell, type LoginConnection } from "./login-shell";
