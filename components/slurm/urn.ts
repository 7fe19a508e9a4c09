/**
 * The names and types of an island's resources in the Pulumi program, and the URN of its sbatch
 * command, which `pulumi up --replace` takes. Pure, so the fleet CLI (no Pulumi SDK) can print it.
 */
import { islandName } from "../plan/naming";

/** components/fleet/inference-deployment.ts; index.ts names the deployment after the Pulumi stack. */
export const FLEET_TYPE = "vllm-fleet:fleet:InferenceDeployment";
/** slurm-job.ts */
export const SLURM_JOB_TYPE = "vllm-fleet:slurm:Job";
const COMMAND_TYPE = "command:remote:Command";

/** The SlurmJob component of island `island` (of service `service`, when named) in fleet `fleet`. */
export const slurmJobResourceName = (fleet: string, island: number, service?: string): string =>
  islandName(fleet, service, island);
/** The SlurmJob component of a stack's co-scheduled heterogeneous job (island.ts deploySlurmGroup). */
export const coScheduledJobResourceName = (fleet: string): string => `${fleet}-cosched`;
/** The remote.Command that submits a SlurmJob's job. */
export const sbatchCommandName = (slurmJob: string): string => `${slurmJob}-sbatch`;

/**
 * The URN of an island's sbatch command: deployment → SlurmJob → command, as the engine builds
 * URNs (`urn:pulumi:<stack>::<project>::<parent types joined by $>::<name>`).
 */
export function sbatchCommandUrn(
  project: string,
  stack: string,
  island: number,
  service?: string,
  component?: number,
): string {
  const types = [FLEET_TYPE, SLURM_JOB_TYPE, COMMAND_TYPE].join("$");
  // A co-scheduled island (a hetjob component) is submitted by the group's one command.
  const job =
    component === undefined ? slurmJobResourceName(stack, island, service) : coScheduledJobResourceName(stack);
  return `urn:pulumi:${stack}::${project}::${types}::${sbatchCommandName(job)}`;
}
