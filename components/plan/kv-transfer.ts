import type { OffloadConfig } from "../config/types";

type Connector = Record<string, unknown>;

/**
 * NIXL moves KV from prefill to decode engines: the P/D connector prime-rl's
 * InferenceConfig.build_kv_transfer_config uses
 * (packages/prime-rl-configs/src/prime_rl/configs/inference.py).
 */
export const NIXL_CONNECTOR: Connector = {
  kv_connector: "NixlConnector",
  kv_role: "kv_both",
  kv_connector_extra_config: { num_threads: 1 },
};

export function offloadConnector(offload: OffloadConfig): Connector {
  if (offload.type === "mooncake") {
    // Addresses and sizes come from the MOONCAKE_CONFIG_PATH file, not from this JSON.
    return { kv_connector: "MooncakeStoreConnector", kv_role: "kv_both", kv_connector_extra_config: {} };
  }
  const extra: Record<string, unknown> = { cpu_bytes_to_use: offload.cpu.num_bytes };
  if (offload.disk) {
    extra.spec_name = "TieringOffloadingSpec";
    extra.secondary_tiers = [{ type: "fs_python", root_dir: offload.disk.path }];
  }
  return { kv_connector: "OffloadingConnector", kv_role: "kv_both", kv_connector_extra_config: extra };
}

/**
 * The one `--kv-transfer-config` object an engine gets: NIXL for P/D, an offload connector, or
 * both through MultiConnector with NIXL first, as prime-rl's build_kv_transfer_config does.
 */
export function kvTransferConfig(pd: boolean, offload: OffloadConfig | null): Connector | undefined {
  const connectors = [...(pd ? [NIXL_CONNECTOR] : []), ...(offload ? [offloadConnector(offload)] : [])];
  if (connectors.length === 0) return undefined;
  if (connectors.length === 1) return connectors[0];
  return { kv_connector: "MultiConnector", kv_role: "kv_both", kv_connector_extra_config: { connectors } };
}
