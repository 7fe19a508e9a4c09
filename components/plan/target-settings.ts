import type { FleetConfig } from "../config/types";
import type { SlurmSettings } from "../slurm/config";

/*
 * The target tables as the plan carries them: the targets read their settings here, off the plan,
 * or from their own config part (components/<kind>/config/), and import nothing else from the config layer.
 */

/** The target table a stack file resolved to, defaults in. */
export type TargetSettings = FleetConfig["target"];
export type { SlurmSettings } from "../slurm/config";
export type { KubernetesSettings } from "../kubernetes/config";
export type { LocalSettings } from "../local/config";
/** How the targets that start processes themselves (SLURM, local) find the programs: slurm.launcher, local.launcher. */
export type Launcher = SlurmSettings["launcher"];
/** Whether the Kubernetes target creates its namespace (its config part's answer, re-exported for the target). */
export { createsNamespace } from "../kubernetes/config";
