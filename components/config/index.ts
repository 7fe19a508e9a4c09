export * from "./issues";
export * from "./load";
export * from "./overrides";
export * from "./types";
export { checkRules, RULES, ruleNames, PROTECTED_ENV } from "./rules";
export { islandNodes } from "./topology";
export { FIXED_PORTS } from "./fixed-ports";
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
