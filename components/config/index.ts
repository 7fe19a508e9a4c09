export * from "./issues";
export * from "./load";
export * from "./overrides";
export * from "./types";
export { checkRules, RULES, islandNodes, FIXED_PORTS, PROTECTED_ENV } from "./rules";
export { stackFileSchema } from "./schema/layouts";
