import type { z } from "zod";
import type { TargetConfigPart } from "./target-part";
import { slurmConfig } from "../slurm/config";
import { kubernetesConfig } from "../kubernetes/config";
import { localConfig } from "../local/config";

/*
 * The config layer's registry of targets: each target's config part (its table, settings, rules and
 * defaults; components/<kind>/config/), in the order messages and the key reference list them.
 * Adding a target adds its line here (and in components/targets.ts and
 * components/fleet/deploy-targets.ts for its plan and its resources).
 */
const BUILT_IN = [slurmConfig, kubernetesConfig, localConfig] as const;

type Part = (typeof BUILT_IN)[number];
/** Every target kind; each is also the name of its stack-file table. */
export type TargetKind = Part["kind"];
/** The settings of whichever target a config selects, by kind. */
export type TargetSettings = Part extends infer P ? (P extends TargetConfigPart<string, infer S> ? S : never) : never;

/**
 * A target's config part whatever its kind. Its settings type is left open: the caller hands it the
 * settings of the config whose kind chose it, a pairing TypeScript cannot follow through a lookup.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyPart = TargetConfigPart<string, any>;

/** Every registered target's config part: the built-in ones, then any registered at run time (registerTargetPart). */
export const TARGET_PARTS: readonly AnyPart[] = [...BUILT_IN];

/** Every target kind, in the registry's order. */
export const TARGETS = BUILT_IN.map((part) => part.kind) as [TargetKind, ...TargetKind[]];

/** Set once a schema is built from the registry: a part registered later would be missing from it. */
let sealed = false;
/** The parts, for a builder of the schema: no part may be registered after. */
const sealedParts = (): readonly AnyPart[] => {
  sealed = true;
  return TARGET_PARTS;
};

/**
 * Adds a target's config part at run time, before anything builds a schema from the registry (a
 * test's fixture target, test/fixture-target/: the proof that a target needs no product file).
 */
export function registerTargetPart(part: AnyPart): void {
  if (sealed)
    throw new Error(`target "${part.kind}" registered after the stack-file schema was built: register it first`);
  if (TARGET_PARTS.some((p) => p.kind === part.kind)) throw new Error(`target "${part.kind}" is registered twice`);
  (TARGET_PARTS as AnyPart[]).push(part);
  (TARGETS as string[]).push(part.kind);
}

/** A target's config part by kind (undefined for a kind nobody registered). */
export function targetPart(kind: string): AnyPart {
  return TARGET_PARTS.find((part) => part.kind === kind) as AnyPart;
}

/** The other targets than `kind`. */
export const otherTargets = (kind: string): TargetKind[] => TARGETS.filter((k) => k !== kind);

/**
 * The target of a file that names none, as prime-rl runs a file without [slurm]: the one whose part
 * says so (capabilities.isDefault). Such a file is read in prime-rl's layout (load.ts loadConfigText).
 */
export const DEFAULT_TARGET: TargetKind = BUILT_IN.find((part) => part.capabilities.isDefault)!.kind;

/** The targets' tables at the root of the stack file (`[slurm]`, `[kubernetes]`, ...), all optional. */
export const targetTables = (): Record<string, z.ZodOptional<z.ZodObject>> =>
  Object.fromEntries(sealedParts().map((part) => [part.kind, part.table.optional()]));

/** prime-rl's layout: the targets' tables at its root, for targets prime-rl has no table of that name for. */
export const primeTargetTables = (): Record<string, z.ZodType> =>
  Object.fromEntries(
    sealedParts()
      .filter((part) => !part.primeFleetTable)
      .map((part) => [
        part.kind,
        part.primeDescription ? part.table.optional().describe(part.primeDescription) : part.table.optional(),
      ]),
  );

/** prime-rl's layout: `[vllm_fleet.<kind>]` for each target whose name prime-rl's own table takes. */
export const primeFleetTables = (): Record<string, z.ZodOptional<z.ZodObject>> =>
  Object.fromEntries(
    sealedParts().flatMap((part) => (part.primeFleetTable ? [[part.kind, part.primeFleetTable.optional()]] : [])),
  );

/** `[services.<name>.<kind>]`: the target tables a service may set for itself, with their keys. */
export const serviceTargetKeys = (): Record<string, string[]> =>
  Object.fromEntries(
    sealedParts().flatMap((part) => (part.serviceTable ? [[part.kind, Object.keys(part.serviceTable.shape)]] : [])),
  );

/** The targets whose tables a service of a file with [services] may set (`[services.<name>.<kind>]`). */
export const serviceTargetTables = (): Record<string, z.ZodOptional<z.ZodObject>> =>
  Object.fromEntries(
    sealedParts().flatMap((part) => (part.serviceTable ? [[part.kind, part.serviceTable.optional()]] : [])),
  );
