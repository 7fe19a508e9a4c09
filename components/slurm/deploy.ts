/**
 * The SLURM backend's Pulumi side, for `pulumi up`: the island deployer and the login connection
 * from Pulumi config. The pure side is ./index.
 */
import type { Backend } from "../backend";
import { deploySlurmIsland, type SlurmIslandContext } from "./island";
import { slurmPlanOut } from "./plan-out";

export const slurmBackend: Backend<SlurmIslandContext> = { deployIsland: deploySlurmIsland, planOut: slurmPlanOut };
export type { SlurmIslandContext };
export { connectionArgs, loginConnection } from "./login-connection";
