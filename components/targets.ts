import type { TargetKind } from "./config/target-kinds";
import { kubernetesTarget } from "./kubernetes";
import { localTarget } from "./local";
import { slurmTarget } from "./slurm";
import type { Target } from "./target";

/**
 * The registry of targets, pure side: every target's `Target` by kind. The rest of the program looks
 * a target up here instead of naming one. Adding a target adds its line (and one in
 * components/fleet/deploy-targets.ts for `pulumi up`).
 */
const TARGET_REGISTRY: Record<TargetKind, Target> = {
  slurm: slurmTarget,
  kubernetes: kubernetesTarget,
  local: localTarget,
};

export function targetOf(kind: TargetKind): Target {
  return TARGET_REGISTRY[kind];
}

/** Every registered target, in the registry's order. */
export const allTargets = (): Target[] => Object.values(TARGET_REGISTRY);
