import type { z } from "zod";
import type { ConfigView, TargetSettingsBase } from "./fleet-config";
import type { ConfigIssue } from "./issues";
import type { RuleIssue } from "./rule";

/*
 * A target's part of the config layer: what its stack-file table is, what it takes from the file and
 * what it refuses or fills in. Each target keeps its part in components/<kind>/config/ and lists it in
 * components/config/target-registry.ts; the schema, the normaliser and the rule list are built by
 * iterating the registry, so nothing in components/config/ names a target.
 */

/** What the normaliser hands a target's `settings`. */
export interface SettingsContext {
  /**
   * The file's top-level output_dir (SLURM also takes slurm.output_dir and checks they agree).
   * @default undefined: the file sets none
   */
  outputDir?: string;
  /** A canonical key as the stack file spells it, for messages. */
  user: (canonical: string) => string;
}

/** What an auto-setup rule reads besides the config. */
export interface SetupContext {
  /** Whether the stack file (or the model catalog) gave a canonical key a value, so the schema's default is not in effect. */
  given: (canonical: string) => boolean;
  /**
   * The RL layout's top-level [deployment], which also sizes the island.
   * @default undefined: not an RL file, or one without it
   */
  rlDeployment?: { gpus_per_node?: number };
  /** A canonical key as the stack file spells it (for notes). */
  paths: (canonical: string) => string;
}

/** What sets one target apart from the others where the config layer must know; each a question, never a name. */
export interface TargetCapabilities {
  /**
   * A file that names no target runs here, read in prime-rl's layout (as prime-rl runs a file
   * without [slurm]). Exactly one registered target says so.
   * @default false
   */
  readonly isDefault?: boolean;
  /**
   * The fleet's processes of one node share that node's network, so two services of one stack
   * given the same port meet there (on Kubernetes every pod has its own address).
   */
  readonly sharedHostNetwork: boolean;
  /** `engine_processes = "per_rank"` starts one engine process per DP rank here (SLURM's launch layout). */
  readonly perRankProcesses: boolean;
}

/** A target's own config: its table, settings, rules and defaults (`K` its kind, `S` its settings). */
export interface TargetConfigPart<K extends string = string, S extends TargetSettingsBase = TargetSettingsBase> {
  /** The target's kind: the name of its stack-file table (`[slurm]`) and of its registry entry. */
  readonly kind: K;
  /** `[<kind>]`: every key the target takes, with its type, default and description (the key reference is written from it). */
  readonly table: z.ZodObject;
  /**
   * prime-rl's layout: where the target's table goes when prime-rl has a table of that name itself
   * (its [slurm]): `[vllm_fleet.<kind>]` with these keys, merged over what is read from prime-rl's.
   * @default undefined: the target's table is `[<kind>]` at the top level of a prime-rl file too
   */
  readonly primeFleetTable?: z.ZodObject;
  /**
   * The keys of prime-rl's own `[<kind>]` that mean what the target's keys of the same name mean;
   * prime-rl's others (for its own job templates) are accepted and ignored. Given with primeFleetTable.
   * @default undefined: none
   */
  readonly primeOwnKeys?: readonly string[];
  /**
   * What `[vllm_fleet.<kind>]` is, for prime-rl's key reference; given with primeFleetTable.
   * @default undefined
   */
  readonly primeFleetDescription?: string;
  /**
   * The description of `[<kind>]` in a prime-rl file, where it differs from none.
   * @default undefined: none
   */
  readonly primeDescription?: string;
  /**
   * The keys a service of a file with [services] may set for itself in `[services.<name>.<kind>]`,
   * merged over the file's: what one service's job asks the scheduler for.
   * @default undefined: a service sets none
   */
  readonly serviceTable?: z.ZodObject;
  /** The settings from the table as the schema returned it (defaults in), and any issue that needs other keys. */
  settings(table: Record<string, unknown> | undefined, ctx: SettingsContext): [S, ConfigIssue[]];
  /** Rules over the whole config this target adds, by name, run after the shared ones (docs/shapes.md). */
  readonly rules: Readonly<Record<string, (cfg: ConfigView, settings: S) => RuleIssue[]>>;
  /**
   * Values this target derives from other keys, by name, applied after the shared AUTO_SETUP rules;
   * the schema names the rule beside each key it derives.
   */
  readonly autoSetup: Readonly<Record<string, (cfg: ConfigView, settings: S, ctx: SetupContext) => void>>;
  /**
   * The settings of one service of a stack of `services` (a file with [services]).
   * @default the settings unchanged
   */
  forServices?(settings: S, services: number): S;
  /** What sets it apart where the config layer must know (TargetCapabilities). */
  readonly capabilities: TargetCapabilities;
}
