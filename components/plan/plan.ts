import { ConfigError } from "../config/issues";
import { UserPaths } from "../config/paths";
import { FIXED_PORTS } from "../config/fixed-ports";
import { deepEpAcrossNodes, islandNodes, localRanks, perRankEngines } from "../config/topology";
import { FleetConfig, shapeOf } from "../config/types";
import { checkArgv, Program } from "../upstream/check";
import { engineNamed, engineOf } from "./engines";
import { gpuMemoryPlan, memoryProblems } from "./gpu-memory";
import { kvTransferConfig, ownKvConnector, ownKvConnectorNote } from "./kv-transfer";
import { lmcachePlan } from "./lmcache";
import { mooncakePlan } from "./mooncake";
import { restartPlan } from "./restart-plan";
import { httpRouterPlan, llmdPlan, routerProgram, routerSettings } from "./router-plan";
import type { PlanHints } from "./target-hints";
import type {
  ActivityPlan,
  DeploymentPlan,
  EngineProcess,
  IslandPlan,
  KvTiers,
  NodePlan,
  Role,
} from "./deployment-plan";
import { durationSeconds } from "../config/schema/idle-release";
import { fileRef, nodeRef, resolveValue, scratchRef, selfRef, type Value } from "./values";
import { islandFolder } from "./naming";
import { cachePlan } from "./cache";

/** One vLLM replica: a DP group spanning `nodes` consecutive nodes of the island. */
interface ReplicaLayout {
  role: Role;
  replica: number;
  nodes: number;
  /** DP ranks per node, and in the whole replica. */
  dpLocal: number;
  dpSize: number;
  /** How the ranks of a multi-rank replica are served by one process per node (rankLayout: or one per rank). */
  mode: "internal" | "hybrid";
}

/** The replicas of one island, in node order (P/D: all prefill replicas, then all decode replicas). */
export function replicaLayouts(cfg: FleetConfig): ReplicaLayout[] {
  const { dp } = cfg.parallel;
  const d = cfg.deployment;
  switch (shapeOf(cfg)) {
    case "single_node":
      return [{ role: "replica", replica: 0, nodes: 1, dpLocal: dp, dpSize: dp, mode: "internal" }];
    case "multi_replica": {
      const n = d.type === "multi_node" ? d.num_nodes : 1;
      return Array.from({ length: n }, (_, r) => ({
        role: "replica" as const,
        replica: r,
        nodes: 1,
        dpLocal: dp,
        dpSize: dp,
        mode: "internal" as const,
      }));
    }
    case "wide_ep": {
      const n = d.type === "multi_node" ? d.num_nodes : 1;
      // headless = true: the head serves the API for every rank (internal LB); otherwise every node does (hybrid LB).
      const mode = cfg.vllm_extra.headless === true || headServes(cfg) ? "internal" : "hybrid";
      return [{ role: "replica", replica: 0, nodes: n, dpLocal: dp / n, dpSize: dp, mode }];
    }
    case "disaggregated": {
      if (d.type !== "disaggregated") throw new Error("unreachable");
      const dpLocal = localRanks(cfg);
      const role = (r: "prefill" | "decode", replicas: number, nodes: number) =>
        Array.from({ length: replicas }, (_, i) => ({
          role: r,
          replica: i,
          nodes,
          dpLocal,
          dpSize: nodes * dpLocal,
          mode: headServes(cfg) ? ("internal" as const) : ("hybrid" as const),
        }));
      return [
        ...role("prefill", d.num_prefill_replicas, d.num_prefill_nodes),
        ...role("decode", d.num_decode_replicas, d.num_decode_nodes),
      ];
    }
  }
}

/** Whether the config's engine serves a replica spanning nodes from its head alone (Engine.spanningApi). */
const headServes = (cfg: FleetConfig) => engineOf(cfg).spanningApi === "head";

/**
 * How a replica's DP ranks run. Per node (engine_processes = "per_node"): one process per node
 * serving the node's ranks. Per rank (engine_processes = "per_rank" where it applies,
 * config/topology.ts perRankEngines): one process per DP rank on port + k with its own tp GPUs, each its own
 * API server and router worker, as prime-rl's launcher starts them (src/prime_rl/templates/
 * _launch_rank.sh.j2 from inference.sbatch.j2 and multi_node_rl.sbatch.j2). Ranks of an
 * expert-parallel replica, and every prefill or decode sub-replica, form one external-LB DP group
 * (`--data-parallel-rank`, the group head's address); dense ranks run alone with no DP arguments
 * (vLLM >= 0.24 refuses external-LB arguments at dp 1), as do groups of one rank.
 */
function rankLayout(cfg: FleetConfig, layout: ReplicaLayout): { perRank: boolean; group: boolean } {
  if (!perRankEngines(cfg)) return { perRank: false, group: false };
  const grouped = layout.role !== "replica" || cfg.enable_expert_parallel;
  return { perRank: true, group: grouped && layout.dpSize > 1 };
}

function enginePort(cfg: FleetConfig, role: Role): number {
  const d = cfg.deployment;
  if (d.type === "disaggregated") return role === "decode" ? d.decode_port : d.prefill_port;
  return cfg.router.type === "none" ? cfg.server.port : cfg.backend_port;
}

/**
 * On a shared host (PlanHints.sharedHost) node k's engines listen on their configured ports + k x
 * this: far enough apart for a node's DP ranks (port + r) and NIXL side channels (5600 + r).
 */
export const SHARED_HOST_PORT_STRIDE = 100;

function buildEngines(cfg: FleetConfig, island: number, sharedHost: boolean, gpuBytes?: number): EngineProcess[] {
  const engines: EngineProcess[] = [];
  const engine = engineOf(cfg);
  const d = cfg.deployment;
  const pd = d.type === "disaggregated";
  // P/D through a KV connector (vLLM's NIXL, a side channel per rank), or SGLang's bootstrap servers.
  const nixl = pd && engine.pdTransport === "kv-connector";
  const bootstrap = pd && engine.pdTransport === "bootstrap" ? (d.transfer_backend ?? "mooncake") : undefined;
  // A connector of the user's own goes to vLLM as given (rules refuse it beside the planner's).
  const kv = ownKvConnector(cfg) ?? kvTransferConfig(nixl, cfg.kv_cache_offload);
  const mooncake = cfg.kv_cache_offload?.type === "mooncake" ? cfg.kv_cache_offload : undefined;
  const userPaths = new UserPaths(cfg.layout, cfg.prime_rl === true);
  const pinsMemory = [
    ...new Set(
      [
        ...(cfg.kv_cache_offload ? ["kv_cache_offload.type"] : []),
        ...(pd ? ["deployment.type"] : []),
        ...deepEpAcrossNodes(cfg).map((f) => f.key),
      ].map((k) => userPaths.user(k)),
    ),
  ];
  // A node's ports on a shared host: the configured ones moved past the earlier nodes'.
  const portShift = (n: number) => (sharedHost ? n * SHARED_HOST_PORT_STRIDE : 0);
  let node = 0;
  for (const layout of replicaLayouts(cfg)) {
    const head = node;
    const { perRank, group } = rankLayout(cfg, layout);
    const ranks = perRank ? layout.dpLocal : 1;
    for (let k = 0; k < layout.nodes; k++, node++) {
      const shift = portShift(node);
      const headless = !perRank && layout.mode === "internal" && layout.nodes > 1 && k > 0;
      for (let r = 0; r < ranks; r++) {
        const address = { parts: [nodeRef(head)] } as Value;
        const dp: EngineProcess["dp"] = perRank
          ? group
            ? {
                size: layout.dpSize,
                local: 1,
                startRank: k * layout.dpLocal + r,
                address,
                rpcPort: FIXED_PORTS.dpRpc + portShift(head),
                mode: "external",
              }
            : undefined
          : layout.dpSize > 1
            ? {
                size: layout.dpSize,
                local: layout.dpLocal,
                startRank: k * layout.dpLocal,
                address,
                rpcPort: FIXED_PORTS.dpRpc + portShift(head),
                mode: layout.mode,
              }
            : undefined;
        const slice = perRank ? cfg.parallel.tp : cfg.parallel.tp * layout.dpLocal;
        const gpus = Array.from({ length: slice }, (_, g) => r * slice + g);
        const port = headless ? undefined : enginePort(cfg, layout.role) + shift + r;
        // NIXL: one side channel per local rank (5600 + k); a per-rank process has rank k's only.
        const nixlPorts = nixl
          ? perRank
            ? [FIXED_PORTS.nixlSideChannel + shift + r]
            : Array.from({ length: layout.dpLocal }, (_, i) => FIXED_PORTS.nixlSideChannel + shift + i)
          : undefined;
        const perProcess: [string, Value][] = [["CUDA_VISIBLE_DEVICES", gpus.join(",")]];
        if (nixl)
          perProcess.push(
            ["VLLM_NIXL_SIDE_CHANNEL_HOST", { parts: [selfRef] }],
            ["VLLM_NIXL_SIDE_CHANNEL_PORT", String(nixlPorts![0])],
          );
        // Every per-rank engine is DP-local rank 0: vLLM's IPC socket names (Mooncake's lookup
        // socket among them) would collide between the ranks of a node in one directory.
        if (perRank) perProcess.push(["VLLM_RPC_BASE_PATH", { parts: [scratchRef(`rpc-${port}`)] }]);
        if (mooncake) {
          perProcess.push(["PYTHONHASHSEED", "0"], ["MOONCAKE_CONFIG_PATH", { parts: [fileRef("mooncake-config")] }]);
          if (mooncake.disk) {
            perProcess.push(
              ["MOONCAKE_OFFLOAD_FILE_STORAGE_PATH", mooncake.disk.path],
              ["MOONCAKE_OFFLOAD_FSDIR", mooncake.disk.path],
              ["MOONCAKE_OFFLOAD_ENABLE_EVICTION", "true"],
            );
          }
        }
        const process: EngineProcess = {
          engine: engine.name,
          id: `i${island}-${layout.role}${layout.replica}-n${k}${ranks > 1 ? `-r${r}` : ""}`,
          // A per-rank engine outside a DP group stands alone; every other process of a replica
          // (its nodes, its group's ranks) restarts with the rest of it.
          group:
            perRank && !group
              ? `i${island}-${layout.role}${layout.replica}-n${k}-r${r}`
              : `i${island}-${layout.role}${layout.replica}`,
          island,
          role: layout.role,
          replica: layout.replica,
          node,
          nodeInReplica: k,
          gpus,
          tp: cfg.parallel.tp,
          dp,
          port,
          apiServerCount: headless ? 0 : cfg.enable_lora || perRank ? 1 : layout.dpLocal,
          headless,
          env: engine.env(cfg, layout.role, perProcess),
          argv: [],
          kvTransferConfig: kv,
          nixlPorts,
          ...(bootstrap && {
            disaggregation: {
              transferBackend: bootstrap,
              // Every prefill server of a group names the port its head's bootstrap server listens on.
              ...(layout.role === "prefill" && { bootstrapPort: FIXED_PORTS.sglangBootstrap + portShift(head) }),
            },
          }),
          needs: { pinsMemory },
        };
        process.argv = engine.argv(cfg, process, gpuBytes);
        engines.push(process);
      }
    }
  }
  return engines;
}

function buildIsland(
  cfg: FleetConfig,
  hints: PlanHints,
  stack: string,
  service: string | undefined,
  index: number,
  gpuBytes: number | undefined,
): IslandPlan {
  const engines = buildEngines(cfg, index, hints.sharedHost === true, gpuBytes);
  const router =
    cfg.router.type === "vllm-router" || cfg.router.type === "sglang-router"
      ? httpRouterPlan(cfg, engines)
      : cfg.router.type === "llm-d"
        ? llmdPlan(cfg, hints.poolRef(cfg.target, { stack, service }, index), engines)
        : undefined;
  const count = islandNodes(cfg);
  const mooncake = cfg.kv_cache_offload?.type === "mooncake" ? mooncakePlan(cfg.kv_cache_offload, count) : undefined;
  const lmcache = cfg.kv_cache_offload?.type === "lmcache" ? lmcachePlan(cfg.kv_cache_offload, count) : undefined;
  const nodes: NodePlan[] = Array.from({ length: count }, (_, n) => {
    const here = engines.filter((e) => e.node === n);
    const services: string[] = [];
    if (router && router.node === n) services.push(...(router.kind === "llm-d" ? ["epp", "envoy"] : [router.kind]));
    if (router?.kind === "llm-d" && router.sidecars.some((s) => s.node === n)) services.push("pd-sidecar");
    if (mooncake && mooncake.headNode === n) services.push("mooncake_master");
    if (mooncake) services.push("mooncake_client");
    if (lmcache) services.push("lmcache_server");
    return {
      index: n,
      name: `i${index}-n${n}`,
      role: here[0].role,
      replica: here[0].replica,
      gpusUsed: here.reduce((s, e) => s + e.gpus.length, 0),
      engines: here.map((e) => e.id),
      services,
    };
  });
  const serving = engines.filter((e) => e.port !== undefined);
  return {
    index,
    name: islandFolder(service, index),
    nodes,
    engines,
    router,
    mooncake,
    lmcache,
    cache: cachePlan(cfg, engineOf(cfg), replicaLayouts(cfg)),
    endpoints: {
      island: index,
      router: router ? { node: router.node, port: router.port, path: "/v1" } : undefined,
      engines: serving.map((e) => ({
        id: e.id,
        role: e.role,
        url: { node: e.node, port: e.port!, path: engineNamed(e.engine).routes.admin },
      })),
    },
    activity: activityPlan(cfg, serving),
  };
}

/** What the island's activity monitor scrapes on each serving engine, and its idle bound. */
function activityPlan(cfg: FleetConfig, serving: EngineProcess[]): ActivityPlan {
  return {
    idleReleaseAfterS: cfg.idle_release_after === undefined ? null : durationSeconds(cfg.idle_release_after),
    engines: serving.map((e) => {
      const engine = engineNamed(e.engine);
      return {
        id: e.id,
        node: e.node,
        port: e.port!,
        metrics: engine.routes.metrics,
        running: engine.metrics.running,
        waiting: engine.metrics.waiting,
        finished: engine.metrics.requests,
        paused: engine.pausedRoute ?? null,
      };
    }),
  };
}

/** Placeholder addresses used only to check generated command lines against the manifests. */
const probe = (v: Value) => resolveValue(v, (r) => (r.ref === "file" ? `/tmp/${r.file}` : "10.0.0.1"));

/**
 * `args`: the arguments after the program's name (an engine's come from `Engine.manifestArgs`);
 * `variant`: the release checked against (checkArgv).
 */
function assertArgv(program: Program, args: Value[], where: string, variant?: string): void {
  const problems = checkArgv(program, args.map(probe), variant);
  if (problems.length)
    throw new Error(
      `internal error: the planner generated an invalid ${program} command line for ${where}: ${problems.join("; ")}`,
    );
}

/**
 * The deployment plan: islands x replicas x nodes x engine processes, with every port, GPU slice,
 * DP rank, environment, command line, router and store. Pure and deterministic; every backend and
 * output reads it, so nothing else computes topology. `hints` is what the target tells the planner
 * (components/planner.ts looks it up by the config's target).
 */
export function planDeployment(cfg: FleetConfig, stack: string, hints: PlanHints): DeploymentPlan {
  // A file without [services] is one unnamed service: every name is what it has always been (naming.ts).
  const { service } = cfg;
  // GPU memory first: a plan that cannot load is refused before anything else is worked out.
  const paths = new UserPaths(cfg.layout);
  const userPath = (canonical: string) => paths.user(canonical);
  const primePaths = new UserPaths(cfg.layout, cfg.prime_rl === true);
  const memory = gpuMemoryPlan(cfg, replicaLayouts(cfg), hints, engineOf(cfg).memoryReserve, userPath);
  const memoryCheck = memory ? memoryProblems(cfg, memory, userPath) : { issues: [], warnings: [] };
  // Only a known GPU can refuse a plan; on an assumed one the same findings are warnings.
  if (memoryCheck.issues.length && !memory?.gpu.assumed) throw new ConfigError(memoryCheck.issues);
  const islands = Array.from({ length: cfg.islands }, (_, i) =>
    buildIsland(cfg, hints, stack, service, i, memory?.gpu.bytes),
  );
  const routerRelease = cfg.router.type === "vllm-router" ? cfg.router.release : undefined;
  for (const island of islands) {
    for (const e of island.engines) {
      const engine = engineNamed(e.engine);
      const v = engine.manifestVariant?.(cfg);
      const check = (argv: Value[], where: string) =>
        assertArgv(engine.manifest, engine.manifestArgs(argv, v), where, v);
      check(e.argv, e.id);
      // A host may restart it behind its restart gate (helpers.sh fleet_gate_close): that line too.
      if (engine.restartGate && e.port !== undefined)
        check([...e.argv, ...engine.restartGate], `${e.id} (restart gate)`);
      // Or start it on the record's folder (helpers.sh fleet_resume_prepare): that line too.
      const resume = engine.startOnRecord;
      if (resume && e.port !== undefined) {
        const onRecord = [...e.argv, ...resume.keep(e.argv), resume.dirFlag, "/ckpt", resume.versionFlag, "v"];
        check(onRecord, `${e.id} (start on the weights record)`);
      }
    }
    const r = island.router;
    if (r && r.kind !== "llm-d")
      assertArgv(r.kind, r.argv.slice(routerProgram(r.kind).length), `${island.name} router`, routerRelease);
    if (island.router?.kind === "llm-d") assertArgv("epp", island.router.epp.argv.slice(1), `${island.name} epp`);
    if (island.mooncake) {
      assertArgv("mooncake_master", island.mooncake.master.argv.slice(1), `${island.name} mooncake_master`);
      for (const c of island.mooncake.clients)
        assertArgv("mooncake_client", c.argv.slice(1), `${island.name} mooncake_client`);
    }
    for (const s of island.lmcache?.servers ?? [])
      assertArgv("lmcache", s.argv.slice(2), `${island.name} lmcache server on node ${s.node}`);
  }
  const nodesPerIsland = islandNodes(cfg);
  const gpusUsed = islands.reduce((s, i) => s + i.nodes.reduce((t, n) => t + n.gpusUsed, 0), 0);
  const warnings: string[] = [...memoryCheck.warnings];
  if (memory?.gpu.assumed)
    warnings.push(
      ...memoryCheck.issues.map(
        (i) =>
          `would not load on ${memory.gpu.type} GPUs (assumed; name the GPU to make this an error): ${i.path}: ${i.message}`,
      ),
    );
  // A target that allocates whole nodes leaves the GPUs its engines do not use idle.
  const gpn = cfg.deployment.gpus_per_node;
  const short = islands[0].nodes.filter((n) => n.gpusUsed < gpn);
  const whole = hints.wholeNodes(cfg.target, short.length === 0);
  const idle = whole ? short : [];
  if (idle.length) {
    const used = [...new Set(idle.map((n) => n.gpusUsed))].join("/");
    warnings.push(
      `${idle.length} of ${nodesPerIsland} node(s) per island use ${used} of ${paths.user("deployment.gpus_per_node")} = ${gpn} GPUs, and ${whole!.key} = true holds the whole node: the rest stay allocated but idle (set ${paths.user("deployment.gpus_per_node")} to what the engines use, or ${whole!.key} = false to leave them to other jobs)`,
    );
  }
  const wholeNodes = whole !== undefined;
  return {
    stack,
    engine: engineOf(cfg).name,
    ...(service !== undefined && { service }),
    model: cfg.model.name,
    shape: shapeOf(cfg),
    target: cfg.target.kind,
    islands,
    totals: {
      nodes: nodesPerIsland * cfg.islands,
      gpus: gpusUsed,
      gpusAllocated: wholeNodes ? nodesPerIsland * cfg.islands * cfg.deployment.gpus_per_node : gpusUsed,
      routers: islands.filter((i) => i.router).length,
      engines: islands.reduce((s, i) => s + i.engines.length, 0),
    },
    memory,
    warnings,
    notes: [
      ...cfg.notes,
      ...ownKvConnectorNote(cfg, primePaths),
      ...(memory
        ? []
        : [
            `GPU memory not checked: the model catalog has no arch facts for ${cfg.model.name} (add it to a model_catalog file)`,
          ]),
    ],
    settings: cfg.target,
    gpusPerNode: cfg.deployment.gpus_per_node,
    ...(cfg.output_dir !== undefined && { outputDir: cfg.output_dir }),
    dryRun: cfg.dry_run,
    kvTiers: kvTiers(cfg),
    ownKvConnector: ownKvConnector(cfg) ? { key: primePaths.user("vllm_extra.kv_transfer_config") } : null,
    routerSettings: routerSettings(cfg),
    restart: restartPlan(cfg),
    ...(cfg.cost.gpu_hour_price !== undefined && { gpuHourPrice: cfg.cost.gpu_hour_price }),
  };
}

function kvTiers(cfg: FleetConfig): KvTiers | null {
  const o = cfg.kv_cache_offload;
  if (!o) return null;
  return { store: o.type, cpuBytes: o.cpu.num_bytes, ...(o.disk?.path !== undefined && { diskPath: o.disk.path }) };
}
