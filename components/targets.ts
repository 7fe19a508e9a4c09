import type { TargetKind } from "./config/target-registry";
import type { Target } from "./target";

/*
 * The registry of targets, pure side: every target's `Target` by kind. The rest of the program looks
 * a target up here instead of naming one. Adding a target adds its line (and one in
 * components/fleet/deploy-targets.ts for `pulumi up`).
 *
 * Each backend is loaded on first lookup, not at start: `plan` of a SLURM stack then never loads
 * the Kubernetes and local backends (about 40 modules; docs/benchmarks.md, cli-start).
 * test/import-graph.test.ts checks that this file imports no backend statically.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
const TARGET_REGISTRY: Record<string, () => Target> = {
  slurm: () => (require("./slurm") as typeof import("./slurm")).slurmTarget,
  kubernetes: () => (require("./kubernetes") as typeof import("./kubernetes")).kubernetesTarget,
  local: () => (require("./local") as typeof import("./local")).localTarget,
};
/* eslint-enable @typescript-eslint/no-require-imports */

export function targetOf(kind: TargetKind): Target {
  // `?.`: an unknown kind gives undefined, as the plain lookup did.
  return TARGET_REGISTRY[kind]?.();
}

/** Every registered target, in the registry's order (loads every backend). */
export const allTargets = (): Target[] => Object.values(TARGET_REGISTRY).map((load) => load());

/**
 * Adds a target at run time (a test's fixture target, test/fixture-target/, beside its config part
 * in components/config/target-registry.ts registerTargetPart): the proof that a target needs no
 * product file.
 */
export function registerTarget(target: Target): void {
  if (target.kind in TARGET_REGISTRY) throw new Error(`target "${target.kind}" is registered twice`);
  TARGET_REGISTRY[target.kind] = () => target;
}
