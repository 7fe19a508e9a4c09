import { FIXED_PORTS } from "../config/fixed-ports";
import type { OffloadConfig } from "../config/types";
import type { LmcachePlan } from "./deployment-plan";

type LmcacheOffload = Extract<OffloadConfig, { type: "lmcache" }>;

/** The server's DRAM pool in GB as `--l1-size-gb` takes it (GiB, LMCache's 1024^3), from cpu.num_bytes. */
export function l1SizeGb(bytes: number): string {
  return String(Math.round((bytes / 1024 ** 3) * 1000) / 1000);
}

/**
 * How long a node gives its server to listen: it imports torch and its stack (10 s on an idle
 * 2-core machine, several times that under load), then allocates its whole L1 up front where memory
 * cannot be pinned lazily (its log: "Disabling l1-use-lazy").
 */
export function serverListenS(bytes: number): number {
  return 120 + Math.ceil(bytes / 1024 ** 3);
}

/**
 * One LMCache server (`lmcache server`, LMCache's multiprocess mode) per node, as prime-rl's
 * examples/extra/lmcache starts it: the node's engines store and look up KV in it over ZMQ. It
 * listens on the loopback only (every engine that uses it is on its node, or in its pod); its
 * HTTP frontend on all addresses for health and metrics. `--supported-transfer-mode auto` serves
 * both of LMCache's transfer paths: the server-driven one GPUs use, and the engine-driven one the
 * connector picks on CPU (the server's default, lmcache_driven, refuses that one).
 */
export function lmcachePlan(offload: LmcacheOffload, nodes: number): LmcachePlan {
  const argv = [
    "lmcache",
    "server",
    "--host=127.0.0.1",
    `--port=${FIXED_PORTS.lmcacheServer}`,
    `--http-port=${FIXED_PORTS.lmcacheHttp}`,
    `--l1-size-gb=${l1SizeGb(offload.cpu.num_bytes)}`,
    `--chunk-size=${offload.chunk_size}`,
    "--eviction-policy=LRU",
    "--supported-transfer-mode=auto",
  ];
  return {
    port: FIXED_PORTS.lmcacheServer,
    httpPort: FIXED_PORTS.lmcacheHttp,
    listenS: serverListenS(offload.cpu.num_bytes),
    servers: Array.from({ length: nodes }, (_, node) => ({ node, argv: [...argv] })),
  };
}
