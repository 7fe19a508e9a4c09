import type { EngineConfigPart } from "./engine-part";
import { vllmEngineConfig } from "../plan/engines/vllm/config";
import { sglangEngineConfig } from "../plan/engines/sglang/config";

/*
 * The config layer's registry of engines: each engine's config part (its rules, defaults and flag
 * checks; components/plan/engines/<name>/config/), one per value of `engine`
 * (schema/inference.ts ENGINE_NAMES; test/engine-seam.test.ts checks they agree). Adding an engine
 * adds its line here and in components/plan/engines.ts.
 */
export const ENGINE_PARTS: readonly EngineConfigPart[] = [vllmEngineConfig, sglangEngineConfig];

/** An engine's config part by the value of `engine` (undefined for a name nobody registered). */
export const enginePart = (name: string): EngineConfigPart =>
  ENGINE_PARTS.find((part) => part.name === name) as EngineConfigPart;
