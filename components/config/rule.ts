import type { ConfigView } from "./fleet-config";

/** A rule violation in canonical terms; `involves` lists every key the rule read (for suppression). */
export interface RuleIssue {
  path: string;
  message: string;
  involves: string[];
}

/**
 * A consistency rule over the canonical config (rules.ts RULES). It reads the config as any target's
 * (`ConfigView`): what a rule needs to know about one target is that target's rule (target-part.ts).
 */
export type Rule = (cfg: ConfigView) => RuleIssue[];

export const fail = (path: string, message: string, ...involves: string[]): RuleIssue[] => [
  { path, message, involves: [path, ...involves] },
];
