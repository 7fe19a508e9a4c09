/**
 * The SLURM backend: per island one sbatch job, submitted and watched over ssh on the login node.
 * Its bash lives in templates/slurm/. Everything outside this folder imports it from here.
 */
import type { Backend } from "../backend";
import { deploySlurmIsland, type SlurmIslandContext } from "./island";
import { slurmPlanOut } from "./plan-out";

export const slurmBackend: Backend<SlurmIslandContext> = { deployIsland: deploySlurmIsland, planOut: slurmPlanOut };
export type { SlurmIslandContext };

export { connectionArgs, loginConnection, parseLogin, type Login } from "./login";
export { generatedFiles, islandDir, jobName, renderIslandScript, routerProcess } from "./sbatch";
export { renderIslandJob } from "./island-job";
export { islandResultSchema, parseIslandResult, RESULT_FORMAT, type IslandResult, type RunningIsland } from "./island-result";
export { jobPhase, nodeLost, parseSchedulerReport, schedulerQueryScript, type JobPhase, type JobReport } from "./scheduler";
