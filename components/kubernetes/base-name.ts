import { createHash } from "node:crypto";
import { islandName } from "../plan/naming";

/*
 * The rule every Kubernetes object name starts from. names.ts builds every other name on it, and
 * the target's plan hints (target.ts) give the planner the island's InferencePool name, which the
 * plan writes into the EPP's and the routing sidecars' command lines.
 */

/** Longest base name: leaves room for `-i<k>-prefill<r>-0-<w>` inside a 63-character pod hostname. */
const MAX_BASE = 28;

/**
 * The name every Kubernetes object of a stack starts with: the Pulumi stack name as a DNS-1035
 * label (lowercase, starts with a letter), shortened with a hash suffix when too long, so two
 * stacks in one namespace never share an object.
 */
export function k8sBase(stack: string): string {
  let s = stack
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/-+/g, "-")
    .replace(/^-+|-+$/g, "");
  if (!/^[a-z]/.test(s)) s = `fleet-${s}`.replace(/-+$/, "");
  if (s.length > MAX_BASE)
    s = `${s.slice(0, MAX_BASE - 7).replace(/-+$/, "")}-${createHash("sha256").update(stack).digest("hex").slice(0, 6)}`;
  return s;
}

/** Prefix of one island's objects; also the name of its InferencePool. */
export const k8sIslandPrefix = (stack: string, island: number, service?: string) =>
  islandName(k8sBase(stack), service, island);
