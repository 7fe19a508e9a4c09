import type { FleetConfig } from "./types";

/** A rule violation in canonical terms; `involves` lists every key the rule read (for suppression). */
export interface RuleIssue {
  path: string;
  message: string;
  involves: string[];
}

/** A consistency rule over the canonical config (rules.ts RULES). */
export type Rule = (cfg: FleetConfig) => RuleIssue[];

export const fail = (path: string, message: string, ...involves: string[]): RuleIssue[] => [
  { path, message, involves: [path, ...involves] },
];
