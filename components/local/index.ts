/**
 * The local target: an island's processes run on the machine that runs Pulumi, started detached by
 * a supervisor script (templates/local/) through @pulumi/command's local.Command. Everything outside
 * this folder imports it from here (the pure renderers) or from ./deploy (for `pulumi up`).
 */
export { localPlanOut } from "./plan-out";
export { renderLocalRun, secretEnvironment } from "./island-run";
export { renderSupervisor } from "./supervisor";
export { localTarget } from "./target";
export { localHeldQueryScript, parseLocalHeldReport, RUN_ENDED_FILE } from "./held-query";
