import { FIXED_PORTS } from "../config/fixed-ports";
import type { OffloadConfig } from "../config/types";
import type { MooncakePlan } from "./deployment-plan";
import { nodeRef, selfRef, t, type Value } from "./values";

/** The Mooncake master's Prometheus port (its --metrics_port), which the targets expose for scraping. */
export const MOONCAKE_METRICS_PORT = FIXED_PORTS.mooncakeMetrics;

/** Blocks must outlive their reuse; the 5 s default expired them before decode read them (prime-rl #2697). */
export const MOONCAKE_LEASE_TTL_MS = 3_600_000;
/** Each engine is a zero-segment client with a 4 GiB transfer buffer; the per-node client holds the DRAM. */
export const ENGINE_LOCAL_BUFFER = 4 * 1024 ** 3;

/**
 * How long a node gives its client to listen before starting it again: a client that starts well
 * listens within seconds here; allocating (and over RDMA registering) its segment grows with it.
 */
export function clientListenS(segmentBytes: number): number {
  return 30 + Math.ceil(segmentBytes / 1024 ** 3);
}

/**
 * One shared Mooncake store per island: master + HTTP metadata server on the head node, a client on
 * every node contributing cpu.num_bytes of DRAM (and the disk tier), engines pointed at it through
 * the MOONCAKE_CONFIG_PATH file, as prime-rl's src/prime_rl/templates/_mooncake_store.sh.j2 sets
 * it up.
 */
export function mooncakePlan(offload: Extract<OffloadConfig, { type: "mooncake" }>, nodes: number): MooncakePlan {
  const head = 0;
  const master = t`${nodeRef(head)}:${FIXED_PORTS.mooncakeMaster}`;
  const metadata = t`http://${nodeRef(head)}:${FIXED_PORTS.mooncakeMetadata}/metadata`;
  const disk = offload.disk?.path;
  const masterArgv: Value[] = [
    "mooncake_master",
    `--rpc_port=${FIXED_PORTS.mooncakeMaster}`,
    "--enable_http_metadata_server=true",
    "--http_metadata_server_host=0.0.0.0",
    `--http_metadata_server_port=${FIXED_PORTS.mooncakeMetadata}`,
    `--default_kv_lease_ttl=${MOONCAKE_LEASE_TTL_MS}`,
    "--enable_metric_reporting=true",
    `--metrics_port=${MOONCAKE_METRICS_PORT}`,
    ...(disk ? ["--enable_offload=true", `--root_fs_dir=${disk}`] : []),
  ];
  const clients = Array.from({ length: nodes }, (_, node) => ({
    node,
    argv: [
      "mooncake_client",
      t`--host=${selfRef}`,
      `--port=${FIXED_PORTS.mooncakeClient}`,
      t`--master_server_address=${master}`,
      t`--metadata_server=${metadata}`,
      `--protocol=${offload.protocol}`,
      `--global_segment_size=${offload.cpu.num_bytes}`,
      ...(offload.device_name ? [`--device_names=${offload.device_name}`] : []),
      ...(disk ? ["--enable_offload=true"] : []),
    ] as Value[],
  }));
  return {
    headNode: head,
    masterPort: FIXED_PORTS.mooncakeMaster,
    metadataPort: FIXED_PORTS.mooncakeMetadata,
    clientPort: FIXED_PORTS.mooncakeClient,
    clientListenS: clientListenS(offload.cpu.num_bytes),
    master: { argv: masterArgv },
    clients,
    engineConfig: {
      mode: "standalone-store",
      global_segment_size: 0,
      local_buffer_size: ENGINE_LOCAL_BUFFER,
      protocol: offload.protocol,
      device_name: offload.device_name,
      master_server_address: master,
      metadata_server: metadata,
      enable_offload: disk !== undefined,
    },
    diskPath: disk,
  };
}
