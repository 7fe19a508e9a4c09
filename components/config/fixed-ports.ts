/**
 * Fixed ports the planner reserves, by who uses them. The values are prime-rl's: the DP RPC port is
 * its data_parallel_rpc_port (packages/prime-rl-configs/src/prime_rl/configs/inference.py), the
 * others are in its src/prime_rl/templates/ (inference.sbatch.j2, _launch_router.sh.j2,
 * _mooncake_store.sh.j2, llmd/envoy.yaml.j2).
 */
export const FIXED_PORTS = {
  dpRpc: 13345,
  nixlSideChannel: 5600,
  mooncakeMaster: 50051,
  mooncakeMetadata: 8080,
  mooncakeMetrics: 9003,
  mooncakeClient: 50052,
  eppGrpc: 9002,
  eppHealth: 9013,
  eppMetrics: 9090,
  envoyAdmin: 9901,
  routerMetricsOffset: 21000,
  /** LMCache's server: its ZMQ port (the connector's lmcache.mp.port) and HTTP frontend, LMCache's defaults. */
  lmcacheServer: 5555,
  lmcacheHttp: 8080,
  /** SGLang's --disaggregation-bootstrap-port default (python/sglang/srt/server_args.py). */
  sglangBootstrap: 8998,
} as const;
