/*
 * The values of the stack-file key `engine`: one per engine whose config part is registered
 * (components/config/engine-registry.ts; the planner's in components/plan/engines.ts). A leaf module:
 * a test's fixture engine adds its name here before anything builds the schema
 * (test/fixture-engine/), as the schema's enum is made once, when schema/inference.ts loads.
 */

/** The built-in engines' names, then any registered at run time. */
export const ENGINE_NAMES = ["vllm", "sglang"] as const;

/** The engine of a file that names none (`engine`'s default). */
export const DEFAULT_ENGINE: (typeof ENGINE_NAMES)[number] = "vllm";

let sealed = false;

/** The names, for the schema's `engine` enum: no name may be added after. */
export function engineNamesForSchema(): typeof ENGINE_NAMES {
  sealed = true;
  return ENGINE_NAMES;
}

/** Adds an engine's name before the schema is built (its config part is then registered in engine-registry.ts). */
export function registerEngineName(name: string): void {
  if (sealed) throw new Error(`engine "${name}" registered after the stack-file schema was built: register it first`);
  if ((ENGINE_NAMES as readonly string[]).includes(name)) throw new Error(`engine "${name}" is registered twice`);
  (ENGINE_NAMES as unknown as string[]).push(name);
}
