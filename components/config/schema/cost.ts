import { z } from "zod";
import { table } from "./primitives";

/**
 * `[cost]` (prime-rl's layout: `[vllm_fleet.cost]`): what `fleet cost` needs beyond the
 * scheduler's hours. Only the price today: the report is in GPU-hours without it.
 */
export const costTable = table({
  gpu_hour_price: z
    .number()
    .nonnegative("must be >= 0")
    .finite()
    .optional()
    .describe(
      "What one GPU-hour costs, in your currency: `fleet cost` multiplies the GPU-hours it reports by it (unset: hours only)",
    ),
});

export type CostSettings = z.output<typeof costTable>;
