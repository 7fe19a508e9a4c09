import type { EngineConfigPart } from "./engine-part";
import { DEFAULT_ENGINE, ENGINE_NAMES } from "./schema/engine-names";
import { vllmEngineConfig } from "../plan/engines/vllm/config";
import { sglangEngineConfig } from "../plan/engines/sglang/config";

/*
 * The config layer's registry of engines: each engine's config part (its rules, defaults and flag
 * checks; components/plan/engines/<name>/config/), one per value of `engine`
 * (schema/inference.ts ENGINE_NAMES; test/engine-seam.test.ts checks they agree). Adding an engine
 * adds its line here and in components/plan/engines.ts.
 */
export const ENGINE_PARTS: readonly EngineConfigPart[] = [vllmEngineConfig, sglangEngineConfig];

/**
 * Adds an engine's config part at run time (a test's fixture engine, test/fixture-engine/: the
 * proof that an engine needs no product file); its name must be registered first
 * (schema/engine-names.ts registerEngineName), before the schema is built.
 */
export function registerEnginePart(part: EngineConfigPart): void {
  if (!(ENGINE_NAMES as readonly string[]).includes(part.name))
    throw new Error(`engine "${part.name}": register its name first (schema/engine-names.ts registerEngineName)`);
  if (ENGINE_PARTS.some((p) => p.name === part.name)) throw new Error(`engine "${part.name}" is registered twice`);
  (ENGINE_PARTS as EngineConfigPart[]).push(part);
}

/** The image of the engine a file that names none runs (kubernetes.image's default). */
export const defaultEngineImage = (): string => enginePart(DEFAULT_ENGINE).image!;

/** An engine's config part by the value of `engine` (undefined for a name nobody registered). */
export const enginePart = (name: string): EngineConfigPart =>
  ENGINE_PARTS.find((part) => part.name === name) as EngineConfigPart;
