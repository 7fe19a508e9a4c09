import type { z } from "zod";
import type { ConfigView } from "./fleet-config";
import type { ConfigIssue } from "./issues";
import type { Rule } from "./rule";
import type { ExtraValue } from "./flag-values";
import type { SetupContext } from "./target-part";
import type { inferenceTable } from "./schema/inference";

/** The inference keys as the schema outputs them (the root of a standalone file, [inference] of an RL one). */
type InferenceKeys = Omit<z.output<typeof inferenceTable>, "model" | "parallel" | "deployment">;

/*
 * An engine's part of the config layer: what it refuses, what it fills in, and how its own table of
 * extra flags is checked. Each engine keeps its part in components/plan/engines/<name>/config/ and
 * lists it in components/config/engine-registry.ts; the rule list, the auto-setup rules and the
 * flag checks are built by iterating the registry, so nothing in components/config/ compares an
 * engine's name.
 */

/** An engine's own config: its rules and defaults (`N` its name, the value of `engine`). */
export interface EngineConfigPart<N extends string = string> {
  /** The value of `engine` that selects it (schema/inference.ts ENGINE_NAMES). */
  readonly name: N;
  /**
   * Its table of extra server flags by snake_case name (`vllm_extra`, `sglang_extra`), checked by
   * checkExtra; set with another engine, that engine's rules refuse it.
   * @default undefined: the engine takes no table of extra flags
   */
  readonly extraKey?: "vllm_extra" | "sglang_extra";
  /**
   * Checks its extra-flag table against the engine's manifest: the values as its command line takes
   * them, and issues naming the keys. Given with extraKey.
   * @default undefined
   */
  checkExtra?(
    value: Record<string, unknown> | undefined,
    where: string,
    user: (canonical: string) => string,
    inference: InferenceKeys,
  ): { values: Record<string, ExtraValue>; issues: ConfigIssue[] };
  /**
   * Its container image on Kubernetes at the version its manifest is pinned to: kubernetes.image's
   * default when the config runs it (the Kubernetes target's AUTO_SETUP "SGLang on Kubernetes runs
   * SGLang's image").
   * @default undefined: kubernetes.image must be set for it
   */
  readonly image?: string;
  /**
   * Its image at the release the config names (vLLM's vllm_version), where that can differ from `image`.
   * @default undefined: `image`
   */
  imageOf?(cfg: ConfigView): string;
  /** Rules over the whole config this engine adds, by name, run only when the config runs it (docs/sglang.md lists SGLang's). */
  readonly rules: Readonly<Record<string, Rule>>;
  /** Values it derives from other keys, by name, applied after the shared AUTO_SETUP rules and before the target's. */
  readonly autoSetup: Readonly<Record<string, (cfg: ConfigView, ctx: SetupContext) => void>>;
}
