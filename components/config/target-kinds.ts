import type { FleetConfig } from "./types";
import { serviceSlurmTable } from "./schema/slurm";

/*
 * The config layer's view of the targets: which kinds exist (each selected by its own table, e.g.
 * `[slurm]`, `[kubernetes]`) and the one place it tells them apart. Validation and defaults that
 * apply to one target ask `settingsFor`, so a new target is never taken for another one. (The
 * rest of a target lives in its folder and is registered in components/targets.ts.)
 */

/** Every target kind, in the order messages list them; each is also the name of its stack-file table. */
export const TARGETS = ["slurm", "kubernetes", "local"] as const;
export type TargetKind = (typeof TARGETS)[number];

type SettingsOf<K extends TargetKind> = Extract<FleetConfig["target"], { kind: K }>;

/** The target's settings when the config targets `kind`; undefined when it targets another. */
export function settingsFor<K extends TargetKind>(
  cfg: Pick<FleetConfig, "target">,
  kind: K,
): SettingsOf<K> | undefined {
  return cfg.target.kind === kind ? (cfg.target as SettingsOf<K>) : undefined;
}

/** The other targets than `kind`. */
export const otherTargets = (kind: TargetKind): TargetKind[] => TARGETS.filter((k) => k !== kind);

/**
 * The target of a file that names none, as prime-rl runs a file without [slurm]: this machine. Such
 * a file is read in prime-rl's layout (components/config/load.ts loadConfigText).
 */
export const DEFAULT_TARGET: TargetKind = "local";

/**
 * The target tables a service of a file with [services] may set for itself
 * (`[services.<name>.<target>]`, merged over the file's), with the keys it may set: what one
 * service's job asks the scheduler for. A target without an entry has none.
 */
export const SERVICE_TARGET_KEYS: Partial<Record<TargetKind, string[]>> = {
  slurm: Object.keys(serviceSlurmTable.shape),
};
