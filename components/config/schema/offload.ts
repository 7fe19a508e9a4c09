import { z } from "zod";
import mooncakeManifest from "../../upstream/mooncake.json";
import { absolutePath, table, typeChoices } from "./primitives";

export const cpuTier = table({
  num_bytes: z
    .number()
    .int("must be a whole number of bytes")
    .min(1, "must be > 0")
    .max(Number.MAX_SAFE_INTEGER, "is too large")
    .optional()
    .describe("CPU KV pool in bytes (native: per instance; mooncake: per node)"),
});
export const diskTier = table({ path: absolutePath.optional().describe("Directory for the disk tier on every node") });

/** cpu.num_bytes and disk.path are required when their table is present; normalise.ts says so in the layout's terms. */
const base = { cpu: cpuTier.optional(), disk: diskTier.optional() };

export const nativeOffload = table({ type: z.literal("native"), ...base });

export const mooncakeOffload = table({
  type: z.literal("mooncake"),
  ...base,
  device_name: z
    .string()
    .regex(
      /^[A-Za-z0-9_:,.-]*$/,
      'must be a comma-separated RDMA device list such as "mlx5_0,mlx5_1" (empty = auto-detect)',
    )
    .default("")
    .describe('RDMA devices of the Mooncake store, comma-separated (default "": auto-detect)'),
  protocol: z
    .enum(mooncakeManifest.known_protocols as [string, ...string[]])
    .default("rdma")
    .describe("Transfer protocol (default rdma)"),
});

/**
 * LMCache's standalone server (`lmcache server`) on every node, holding cpu.num_bytes of DRAM
 * (its L1); the node's engines reach it through LMCacheMPConnector. No disk tier: LMCache's L2
 * adapters are not planned.
 */
export const lmcacheOffload = table({
  type: z.literal("lmcache"),
  cpu: cpuTier.optional(),
  chunk_size: z
    .number()
    .int("must be a whole number of tokens")
    .min(1, "must be > 0")
    .default(256)
    .describe(
      "Tokens per LMCache chunk (the server's --chunk-size; default 256): a multiple of the engine's KV block size, which LMCache's connector checks at start",
    ),
});

export const offloadTable = z.discriminatedUnion(
  "type",
  [nativeOffload, mooncakeOffload, lmcacheOffload],
  typeChoices("native", "mooncake", "lmcache"),
);
