export * from "./issues";
export * from "./load";
export * from "./overrides";
export * from "./types";
export { checkRules, RULES, islandNodes, FIXED_PORTS, PROTECTED_ENV } from "./rules";
export { stackFileSchema } from "./schema/layouts";
export {
  loadCatalog,
  lookupModel,
  BUILTIN_CATALOG,
  type Catalog,
  type CatalogEntry,
  type ResolvedModel,
  type LaunchDefaults,
  type ArchFacts,
} from "./catalog";
