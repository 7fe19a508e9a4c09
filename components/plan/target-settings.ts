import type { FleetConfig, KubernetesTarget, LocalTarget, SlurmTarget } from "../config/types";

/*
 * The target tables as the plan carries them: the targets read their settings here, off the plan,
 * and import nothing from components/config/.
 */

/** The target table a stack file resolved to (SLURM's or Kubernetes'), defaults in. */
export type TargetSettings = FleetConfig["target"];
/** `[slurm]`, its output_dir lifted to the plan's `outputDir`. */
export type SlurmSettings = SlurmTarget;
/** `[kubernetes]`. */
export type KubernetesSettings = KubernetesTarget;
/** How the targets that start processes themselves (SLURM, local) find the programs: slurm.launcher, local.launcher. */
export type Launcher = SlurmSettings["launcher"];
/** `[local]`. */
export type LocalSettings = LocalTarget;
/** Namespaces the Kubernetes target never creates (the schema's, re-exported for the target, which reads no config). */
export { BUILT_IN_NAMESPACES } from "../config/schema/kubernetes";
