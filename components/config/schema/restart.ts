import { z } from "zod";
import { table } from "./primitives";

const seconds = (max: number) =>
  z
    .number()
    .gt(0, "must be > 0 seconds")
    .max(max, `must be at most ${max} seconds`)
    .refine((n) => Number.isInteger(n * 10), "must be a whole number of tenths of a second");

/**
 * `[restart]` (prime-rl's layout: `[vllm_fleet.restart]`; with services, each service's own): what
 * a host target (SLURM, local) does when one of an island's processes exits. It starts that
 * process again in place, on the same GPUs inside the same job or run, after a delay, within a
 * budget, as systemd's Restart= with StartLimitBurst / StartLimitIntervalSec does. A process that
 * spans several (a DP group, an engine across nodes) restarts as one group. Past the budget the
 * island fails as it does with max_restarts = 0: the first exit stops the island and the job gives
 * its GPUs back. On Kubernetes the kubelet restarts containers with its own back-off:
 * AUTO_SETUP "the kubelet restarts containers on Kubernetes" notes a table the file sets there.
 */
export const restartTable = table({
  max_restarts: z
    .number()
    .int()
    .min(0, "must be >= 0 (0: the first exit fails the island)")
    .max(1000, "must be at most 1000")
    .default(5)
    .describe(
      "Restarts a process (or its group) may have within `window` seconds before the island fails for good; 0 restores fail-fast: the first exit stops the island (default 5)",
    ),
  window: seconds(7 * 24 * 3600)
    .default(3600)
    .describe("Seconds over which max_restarts counts restarts: an older one no longer counts (default 3600)"),
  // Short by default: a restarted engine should serve again within its own cold start + 1 s.
  backoff: seconds(3600)
    .default(0.5)
    .describe(
      "Seconds between an exit and the first restart; each further restart within the window waits twice as long, up to max_backoff (default 0.5)",
    ),
  max_backoff: seconds(3600).default(60).describe("The longest wait before a restart, in seconds (default 60)"),
});

export type RestartSettings = z.output<typeof restartTable>;
