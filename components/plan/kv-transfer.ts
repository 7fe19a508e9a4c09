import { FIXED_PORTS } from "../config/fixed-ports";
import type { UserPaths } from "../config/paths";
import type { FleetConfig, OffloadConfig } from "../config/types";

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
  if (offload.type === "lmcache") {
    // The node's own LMCache server (lmcache.ts), on the loopback.
    return {
      kv_connector: "LMCacheMPConnector",
      kv_role: "kv_both",
      kv_connector_extra_config: { "lmcache.mp.host": "tcp://127.0.0.1", "lmcache.mp.port": FIXED_PORTS.lmcacheServer },
    };
  }
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

/**
 * The user's own connector (vllm_extra.kv_transfer_config, prime-rl's [vllm.kv_transfer_config]),
 * checked against vLLM's KVTransferConfig when the file loaded: it reaches vLLM unchanged.
 */
export function ownKvConnector(cfg: FleetConfig): Connector | undefined {
  const own = cfg.vllm_extra.kv_transfer_config;
  return own && typeof own === "object" && !Array.isArray(own) ? own : undefined;
}

/** What the plan says of an own connector: the fleet passes it on and does not run or watch its store. */
export function ownKvConnectorNote(cfg: FleetConfig, paths: UserPaths): string[] {
  const own = ownKvConnector(cfg);
  if (!own) return [];
  return [
    `${paths.user("vllm_extra.kv_transfer_config")}: your own KV connector (${String(own.kv_connector)}) reaches vLLM unchanged; the fleet does not start, manage or watch the store it talks to (start it before the engines, and restart it yourself)`,
  ];
}
