import { z } from "zod";

/*
 * `idle_release_after` (prime-rl's layout: `[vllm_fleet] idle_release_after`; with services, a
 * default each service may set for itself): how long an island's engines may serve no request
 * before the island ends itself and gives its GPUs back (docs/idle-release.md).
 */

const DURATION = /^(\d+)(s|m|h)$/;
const UNIT_S: Record<string, number> = { s: 1, m: 60, h: 3600 };
/** A week: a longer bound is no bound a person meant. */
const MAX_S = 7 * 24 * 3600;

/** Seconds in a duration the schema accepted ("20s", "90m", "2h"). */
export function durationSeconds(text: string): number {
  const m = DURATION.exec(text)!;
  return Number(m[1]) * UNIT_S[m[2]];
}

export const idleReleaseAfter = z
  .string()
  .regex(DURATION, 'must be a whole number and a unit: "20s", "90m", "2h"')
  // (A text the pattern refused is not checked again.)
  .refine(
    (t) => !DURATION.test(t) || durationSeconds(t) >= 10,
    "must be at least 10s (the activity monitor scrapes every 5 s)",
  )
  .refine((t) => !DURATION.test(t) || durationSeconds(t) <= MAX_S, `must be at most ${MAX_S / 3600}h`)
  .optional()
  .describe(
    'How long an island\'s engines may serve no request and hold none waiting (their own /metrics) before the island ends itself and gives its GPUs back, e.g. "20s", "90m", "2h"; a paused engine (a weight update) is not idle. SLURM and local: the island\'s job or run ends; Kubernetes: its engine workloads scale to zero replicas (default: off)',
  );
