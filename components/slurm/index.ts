/**
 * The SLURM backend: per island one sbatch job, submitted and watched over ssh on the login node.
 * Its bash lives in templates/slurm/. Everything outside this folder imports it from here (the pure
 * renderers, protocol and queries, which the CLIs load without the Pulumi SDK) or from ./deploy
 * (the island deployer and the login connection, for `pulumi up`).
 */
export { slurmPlanOut } from "./plan-out";
export { parseLogin, type Login } from "./login";
export { islandDir, jobName, renderIslandScript } from "./sbatch";
export { generatedFiles, routerProcess } from "../host/processes";
export { renderIslandJob, STDERR_LINE_BOUND } from "./island-job";
export { renderSecretFiles } from "./secret-files";
export { renderTemplate } from "../templates";
export { sbatchCommandUrn } from "./urn";
export {
  islandResultSchema,
  parseIslandResult,
  RESULT_FORMAT,
  type IslandResult,
  type RunningIsland,
} from "../host/island-result";
export {
  jobPhase,
  nodeLost,
  parseSchedulerReport,
  schedulerQueryScript,
  type JobPhase,
  type JobReport,
} from "./scheduler";
export { slurmTarget } from "./target";
export {
  coScheduledGroups,
  coScheduledPlacements,
  HETJOB_FORMAT,
  parseHetjobResult,
  renderHetjob,
  type HetjobResult,
} from "./hetjob";
export { jobsQueryScript, parseFleetJobs } from "./jobs";
export { gresGpus, jobRequests, requestTable, timeLimitHours } from "./requests";
export { heldQueryScript, parseHeldReport, tresGpus } from "./held-query";
export { slurmSeconds } from "./time-format";
