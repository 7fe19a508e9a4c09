import type { FleetConfigOf } from "./fleet-config";
import type { TargetSettings } from "./target-registry";

export * from "./fleet-config";
export type { TargetKind, TargetSettings } from "./target-registry";
export type { SlurmSettings } from "../slurm/config";
export type { KubernetesSettings } from "../kubernetes/config";
export type { LocalSettings } from "../local/config";

/** The canonical config of a stack (or one of its services), its target one of the registered ones. */
export type FleetConfig = FleetConfigOf<TargetSettings>;
