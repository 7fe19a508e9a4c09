/*
 * Packages that only some outputs need, loaded on first use instead of at start: `plan` of a stack
 * without --out writes no YAML and renders no template, and `plan --json` draws no table (each
 * costs a CLI start several milliseconds to tens of them; docs/benchmarks.md, cli-start). `require`
 * caches, so a call after the first is a lookup. Import their types with `import type`.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
export const yamlPackage = () => require("yaml") as typeof import("yaml");
export const mustachePackage = () => require("mustache") as typeof import("mustache");
export const cliTablePackage = () => require("cli-table3") as typeof import("cli-table3");
/* eslint-enable @typescript-eslint/no-require-imports */
