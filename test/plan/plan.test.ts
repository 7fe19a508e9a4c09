import { describe, expect, it } from "vitest";
import { vllmArgvOf } from "../../components/plan/engines/vllm/argv";
import { buildPlan } from "../../components/planner";
import { resolveValue, showValue, type Value } from "../../components/plan/values";
import { checkArgv } from "../../components/upstream/check";
import { load, plan, SLURM, STACK_NAMES, stackPlanOf, stackText } from "../helpers";

const show = (argv: Value[], island = 0) => argv.map((v) => showValue(v, island));
const flag = (argv: Value[], name: string) => {
  const s = show(argv);
  const i = s.indexOf(name);
  return i < 0 ? undefined : s[i + 1];
};
const stackPlan = (name: string) => buildPlan(load(stackText(name)), name);

describe("each shape's stack: nodes, engines, GPUs, routers", () => {
  it("single node, tp = 8: one node, one engine on GPUs 0-7", () => {
    const p = stackPlan("single-node");
    expect(p.totals).toEqual({ nodes: 1, gpus: 8, gpusAllocated: 8, routers: 1, engines: 1 });
    const [e] = p.islands[0].engines;
    expect(e.gpus).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(flag(e.argv, "--tensor-parallel-size")).toBe("8");
    expect(e.dp).toBeUndefined();
  });

  it("multi-replica, 2 nodes tp=2 dp=4: 2 replicas of tp2 x dp4 and 1 router on replica 1's node", () => {
    const p = stackPlan("multi-replica");
    expect(p.shape).toBe("multi_replica");
    expect(p.totals).toMatchObject({ nodes: 2, routers: 1, engines: 2, gpus: 16 });
    const island = p.islands[0];
    expect(island.engines.map((e) => [e.replica, e.node])).toEqual([
      [0, 0],
      [1, 1],
    ]);
    for (const e of island.engines) {
      expect(flag(e.argv, "--tensor-parallel-size")).toBe("2");
      expect(flag(e.argv, "--data-parallel-size")).toBe("4");
      expect(e.dp).toMatchObject({ size: 4, local: 4, mode: "internal" });
      expect(flag(e.argv, "--data-parallel-address")).toBeUndefined(); // one-node DP needs no address
    }
    expect(island.router).toMatchObject({ kind: "vllm-router", node: island.engines[0].node });
    expect(island.nodes[0].services).toContain("vllm-router");
  });

  it("wide-EP, 2 nodes tp=2 dp=8: 2 processes with dp_local=4, EP across both, both behind the router", () => {
    const p = stackPlan("wide-ep");
    expect(p.shape).toBe("wide_ep");
    const [a, b] = p.islands[0].engines;
    expect(p.islands[0].engines).toHaveLength(2);
    for (const [e, start] of [
      [a, 0],
      [b, 4],
    ] as const) {
      expect(e.dp).toMatchObject({ size: 8, local: 4, startRank: start, mode: "hybrid" });
      expect(showValue(e.dp!.address, 0)).toBe("<i0-n0>");
      expect(show(e.argv)).toContain("--enable-expert-parallel");
      expect(show(e.argv)).toContain("--data-parallel-hybrid-lb");
      expect(flag(e.argv, "--data-parallel-size-local")).toBe("4");
      expect(e.gpus).toHaveLength(8);
    }
    expect(flag(b.argv, "--data-parallel-start-rank")).toBe("4");
    const router = p.islands[0].router!;
    if (router.kind !== "vllm-router") throw new Error("expected vllm-router");
    expect(show(router.argv)).toEqual(expect.arrayContaining(["http://<i0-n0>:8100", "http://<i0-n1>:8100"]));
    // A host starts it without workers and tells it each (POST /add_worker) as it answers /health.
    const late = router.lateWorkers!;
    expect(show(late.argv)).toEqual(show(router.argv).slice(0, show(router.argv).indexOf("--worker-urls")));
    expect(show(router.follow!.urls)).toEqual(["http://<i0-n0>:8100", "http://<i0-n1>:8100"]);
    expect(router.follow!.routes).toBe("query");
    expect(late.count).toBe(2);
  });

  it("a router is told its workers at start where it cannot start without them", () => {
    const late = (text: string) => {
      const r = plan(text).islands[0].router!;
      return r.kind === "llm-d" ? undefined : r.lateWorkers;
    };
    const file = (router: string) =>
      `[model]\nname = "m"\n[deployment]\ntype = "multi_node"\n[deployment.router]\n${router}\n${SLURM}`;
    expect(late(file('policy = "consistent_hash"'))).toBeDefined();
    // P/D mode requires --prefill and --decode; power_of_two refuses fewer than 2 workers at start.
    expect(late(stackText("disaggregated"))).toBeUndefined();
    expect(late(file('policy = "power_of_two"'))).toBeUndefined();
    // PrimeIntellect's build is not known to serve POST /add_worker.
    expect(late(file('release = "primeintellect-v0.2.1"'))).toBeUndefined();
    expect(late(stackText("sglang-multi-replica"))).toBeUndefined();
  });

  it("a router with run-time worker routes is followed in them; vllm-router's P/D islands are not", () => {
    const follow = (text: string) => {
      const r = plan(text).islands[0].router!;
      return r.kind === "llm-d" ? undefined : r.follow;
    };
    const file = (router: string) =>
      `[model]\nname = "m"\n[deployment]\ntype = "multi_node"\n[deployment.router]\n${router}\n${SLURM}`;
    expect(follow(file('policy = "consistent_hash"'))?.routes).toBe("query");
    // sglang-router keeps its --worker-urls at start (it registers them in the background) and is
    // followed in its /workers routes.
    const sglang = follow(stackText("sglang-multi-replica"))!;
    expect(sglang.routes).toBe("workers");
    expect(show(sglang.urls)).toHaveLength(2);
    expect(sglang.weightVersion).toBe("/model_info");
    // vllm-router has no run-time add or remove in P/D mode; sglang-router's /workers routes take a
    // P/D worker's type and bootstrap port.
    expect(follow(stackText("disaggregated"))).toBeUndefined();
    expect(follow(stackText("sglang-disaggregated"))?.routes).toBe("workers");
    expect(follow(file('policy = "power_of_two"'))).toBeUndefined();
  });

  it("disaggregated 2/2/2/1: 6 nodes, 4 prefill and 2 decode", () => {
    const p = stackPlan("disaggregated");
    expect(p.totals).toMatchObject({ nodes: 6, routers: 1, engines: 6 });
    const roles = p.islands[0].nodes.map((n) => n.role);
    expect(roles).toEqual(["prefill", "prefill", "prefill", "prefill", "decode", "decode"]);
    expect(p.islands[0].nodes.map((n) => n.replica)).toEqual([0, 0, 1, 1, 0, 0]);
  });

  it("the same island x3: 18 nodes and 3 routers, each island behind its own", () => {
    const p = stackPlan("disaggregated-x3");
    expect(p.totals).toMatchObject({ nodes: 18, routers: 3, engines: 18, gpus: 144 });
    expect(p.islands.map((i) => i.name)).toEqual(["island-0", "island-1", "island-2"]);
    expect(new Set(p.islands.flatMap((i) => i.engines.map((e) => e.id))).size).toBe(18);
  });
});

describe("P/D geometry", () => {
  const p = stackPlan("disaggregated");
  const engines = p.islands[0].engines;

  it("makes each role replica its own DP group headed by its first node", () => {
    const heads = engines.map((e) => showValue(e.dp!.address, 0));
    expect(heads).toEqual(["<i0-n0>", "<i0-n0>", "<i0-n2>", "<i0-n2>", "<i0-n4>", "<i0-n4>"]);
    expect(engines.map((e) => e.dp!.startRank)).toEqual([0, 4, 0, 4, 0, 4]);
    expect(engines.every((e) => e.dp!.size === 8 && e.dp!.local === 4)).toBe(true);
  });

  it("sets the all2all backend and decode CUDA graphs per role", () => {
    for (const e of engines) {
      expect(flag(e.argv, "--all2all-backend")).toBe(
        e.role === "prefill" ? "deepep_high_throughput" : "deepep_low_latency",
      );
      const cc = flag(e.argv, "--compilation-config");
      if (e.role === "decode") expect(JSON.parse(cc!)).toEqual({ cudagraph_mode: "FULL_DECODE_ONLY" });
      else expect(cc).toBeUndefined();
    }
  });

  it("ports: prefill 8100, decode 8200, NIXL side channel 5600+k on the node's own address", () => {
    expect(engines.map((e) => e.port)).toEqual([8100, 8100, 8100, 8100, 8200, 8200]);
    for (const e of engines) {
      expect(e.nixlPorts).toEqual([5600, 5601, 5602, 5603]);
      const env = Object.fromEntries(e.env.map(([k, v]) => [k, showValue(v, 0)]));
      expect(env.VLLM_NIXL_SIDE_CHANNEL_HOST).toBe("<self>");
      expect(env.VLLM_NIXL_SIDE_CHANNEL_PORT).toBe("5600");
    }
  });

  it("layers env: defaults, then env_vars, then role env, then per-process values", () => {
    const prefill = engines[0].env.map(([k]) => k);
    expect(prefill.indexOf("CUDA_DEVICE_ORDER")).toBeLessThan(prefill.indexOf("VLLM_ENABLE_MOE_DP_CHUNK"));
    expect(prefill.indexOf("VLLM_ENABLE_MOE_DP_CHUNK")).toBeLessThan(prefill.indexOf("CUDA_VISIBLE_DEVICES"));
    const decodeEnv = Object.fromEntries(engines[5].env);
    expect(decodeEnv.VLLM_DEEP_GEMM_WARMUP).toBe("skip");
    expect(decodeEnv.VLLM_ENABLE_MOE_DP_CHUNK).toBeUndefined();
    const layered = plan(
      `[model]\nname = "m"\n[env_vars]\nA = "global"\nB = "global"\n[deployment]\ntype = "disaggregated"\ndecode_env_vars = { B = "decode" }${SLURM}`,
    );
    const decode = Object.fromEntries(layered.islands[0].engines.find((e) => e.role === "decode")!.env);
    expect(decode).toMatchObject({ A: "global", B: "decode" });
  });

  it("routes P/D through vllm-router: every prefill rank, then every decode rank", () => {
    const router = p.islands[0].router!;
    if (router.kind !== "vllm-router") throw new Error("expected vllm-router");
    const r = show(router.argv);
    expect(r).toContain("--vllm-pd-disaggregation");
    expect(r.filter((a, i) => r[i - 1] === "--prefill")).toEqual([
      "http://<i0-n0>:8100",
      "http://<i0-n1>:8100",
      "http://<i0-n2>:8100",
      "http://<i0-n3>:8100",
    ]);
    expect(r.filter((a, i) => r[i - 1] === "--decode")).toEqual(["http://<i0-n4>:8200", "http://<i0-n5>:8200"]);
  });
});

describe("admin URL order (the trainer contract)", () => {
  it("is node-major and, for P/D, prefill then decode, island by island", () => {
    const p = stackPlan("disaggregated-x3");
    for (const island of p.islands) {
      expect(island.endpoints.engines.map((e) => e.role)).toEqual([
        "prefill",
        "prefill",
        "prefill",
        "prefill",
        "decode",
        "decode",
      ]);
      expect(island.endpoints.engines.map((e) => e.url.node)).toEqual([0, 1, 2, 3, 4, 5]);
      expect(island.endpoints.router).toEqual({ node: 0, port: 8000, path: "/v1" });
    }
  });

  it("lists only engines that serve HTTP (headless wide-EP workers are reached through the head)", () => {
    const p = plan(
      `enable_expert_parallel = true\n[model]\nname = "m"\n[parallel]\ntp = 2\ndp = 8\n[deployment]\ntype = "multi_node"\nnum_nodes = 2\n[vllm_extra]\nheadless = true${SLURM}`,
    );
    const [head, worker] = p.islands[0].engines;
    expect(head.headless).toBe(false);
    expect(worker.headless).toBe(true);
    expect(show(worker.argv)).toContain("--headless");
    expect(show(worker.argv)).not.toContain("--port");
    expect(show(head.argv)).not.toContain("--data-parallel-hybrid-lb");
    expect(p.islands[0].endpoints.engines.map((e) => e.id)).toEqual([head.id]);
  });
});

describe("KV transfer config", () => {
  const base = `[model]\nname = "m"${SLURM}`;
  const kv = (text: string) => buildPlan(load(text), "t").islands[0].engines[0].kvTransferConfig;

  it("none without P/D or offload", () => expect(kv(base)).toBeUndefined());

  it("native CPU offload: OffloadingConnector with the byte budget; with disk: TieringOffloadingSpec", () => {
    expect(kv(`${base}\n[kv_cache_offload]\ntype = "native"\ncpu = { num_bytes = 1000 }`)).toEqual({
      kv_connector: "OffloadingConnector",
      kv_role: "kv_both",
      kv_connector_extra_config: { cpu_bytes_to_use: 1000 },
    });
    expect(kv(stackText("kv-offload-native"))).toEqual({
      kv_connector: "OffloadingConnector",
      kv_role: "kv_both",
      kv_connector_extra_config: {
        cpu_bytes_to_use: 128_000_000_000,
        spec_name: "TieringOffloadingSpec",
        secondary_tiers: [{ type: "fs_python", root_dir: "/scratch/kv" }],
      },
    });
  });

  it("P/D with offload: MultiConnector with NIXL first", () => {
    const c = kv(
      `${base}\n[deployment]\ntype = "disaggregated"\n[kv_cache_offload]\ntype = "native"\ncpu = { num_bytes = 5 }`,
    ) as any;
    expect(c.kv_connector).toBe("MultiConnector");
    expect(c.kv_connector_extra_config.connectors.map((x: any) => x.kv_connector)).toEqual([
      "NixlConnector",
      "OffloadingConnector",
    ]);
  });

  it("forces prefix caching on the command line when offloading", () => {
    const e = stackPlan("kv-offload-native").islands[0].engines[0];
    expect(show(e.argv)).toContain("--enable-prefix-caching");
  });
});

describe("Mooncake", () => {
  const p = stackPlan("kv-offload-mooncake");
  const m = p.islands[0].mooncake!;

  it("runs the master and metadata server on the head node and a client on every node", () => {
    expect(m.headNode).toBe(0);
    expect(m.clients.map((c) => c.node)).toEqual([0, 1]);
    expect(show(m.master.argv)).toEqual(
      expect.arrayContaining([
        "--rpc_port=50051",
        "--http_metadata_server_port=8080",
        "--default_kv_lease_ttl=3600000",
      ]),
    );
    expect(show(m.clients[1].argv)).toEqual(
      expect.arrayContaining([
        "--master_server_address=<i0-n0>:50051",
        "--metadata_server=http://<i0-n0>:8080/metadata",
        "--global_segment_size=128000000000",
        "--device_names=mlx5_0,mlx5_1",
        "--host=<self>",
      ]),
    );
    expect(p.islands[0].nodes[1].services).toEqual(["mooncake_client"]);
  });

  it("points engines at a standalone-store config with zero segment", () => {
    expect(m.engineConfig).toMatchObject({
      mode: "standalone-store",
      global_segment_size: 0,
      local_buffer_size: 4294967296,
      protocol: "rdma",
    });
    const env = Object.fromEntries(p.islands[0].engines[0].env.map(([k, v]) => [k, showValue(v, 0)]));
    expect(env).toMatchObject({ PYTHONHASHSEED: "0", MOONCAKE_CONFIG_PATH: "<file:mooncake-config>" });
    expect(p.islands[0].engines[0].kvTransferConfig).toMatchObject({ kv_connector: "MooncakeStoreConnector" });
  });
});

describe("llm-d", () => {
  it("plans EPP with file discovery of every engine, Envoy on the client port, prime-rl's default scorer weights", () => {
    const r = stackPlan("llm-d").islands[0].router!;
    if (r.kind !== "llm-d") throw new Error("expected llm-d");
    expect(r.port).toBe(8000);
    expect(r.endpoints.map((e) => [showValue(e.address, 0), e.port])).toEqual([
      ["<i0-n0>", 8100],
      ["<i0-n1>", 8100],
    ]);
    const cfg = r.epp.config as any;
    expect(cfg.kind).toBe("EndpointPickerConfig");
    expect(cfg.schedulingProfiles[0].plugins).toEqual([
      { pluginRef: "prefix-cache-scorer", weight: 3 },
      { pluginRef: "active-request-scorer", weight: 2 },
      { pluginRef: "max-score-picker" },
    ]);
    expect(r.sidecars).toEqual([]);
  });

  // llm-d-router v0.10.0: vllmhttp-parser claims only inference/v1/generate (parsers/vllmhttp/vllmhttp.go),
  // "you must also configure openai-parser" for OpenAI paths (parsers/README.md).
  it("Envoy's ext_proc filter fails closed: a down EPP is a 5xx, never traffic no one picked", () => {
    const r = stackPlan("llm-d").islands[0].router!;
    if (r.kind !== "llm-d") throw new Error("expected llm-d");
    const text = JSON.stringify(r.envoy.config);
    expect(text).toContain("envoy.filters.http.ext_proc");
    expect(text).not.toContain("failure_mode_allow");
  });

  it("registers openai-parser next to vllmhttp-parser so /v1/completions and /v1/chat/completions resolve", () => {
    for (const p of [
      stackPlan("llm-d"),
      plan(`[model]\nname = "m"\n[deployment]\ntype = "disaggregated"\n[deployment.router]\ntype = "llm-d"${SLURM}`),
    ]) {
      const r = p.islands[0].router!;
      if (r.kind !== "llm-d") throw new Error("expected llm-d");
      const cfg = r.epp.config as any;
      expect(cfg.plugins.map((x: any) => x.type)).toEqual(expect.arrayContaining(["vllmhttp-parser", "openai-parser"]));
      expect(cfg.requestHandler.parsers).toEqual([{ pluginRef: "vllmhttp-parser" }, { pluginRef: "openai-parser" }]);
    }
  });

  it("for P/D points decode endpoints at a pd-sidecar on every decode node and merges per-profile weights", () => {
    const p = plan(
      `[model]\nname = "m"\n[deployment]\ntype = "disaggregated"\nnum_decode_nodes = 2\n[deployment.router]\ntype = "llm-d"${SLURM}`,
    );
    const r = p.islands[0].router!;
    if (r.kind !== "llm-d") throw new Error("expected llm-d");
    expect(r.endpoints.map((e) => [e.role, e.port])).toEqual([
      ["prefill", 8100],
      ["decode", 8300],
      ["decode", 8300],
    ]);
    expect(r.sidecars.map((s) => [s.node, s.vllmPort])).toEqual([
      [1, 8200],
      [2, 8200],
    ]);
    const prefill = (r.epp.config as any).schedulingProfiles
      .find((x: any) => x.name === "prefill")
      .plugins.map((x: any) => x.pluginRef);
    expect(prefill).toEqual([
      "prefill-filter",
      "prefix-cache-scorer",
      "active-request-scorer",
      "queue-scorer",
      "kv-cache-utilization-scorer",
      "max-score-picker",
    ]);
  });
});

describe("every generated command line passes the upstream manifests", () => {
  const resolve = (v: Value) => resolveValue(v, (r) => (r.ref === "file" ? "/x" : "10.1.2.3"));
  it.each(STACK_NAMES)("%s", (name) => {
    for (const island of stackPlanOf(name).services.flatMap((p) => p.islands)) {
      for (const e of island.engines) {
        if (e.engine === "sglang") {
          expect(e.argv.slice(0, 3)).toEqual(["python3", "-m", "sglang.launch_server"]);
          expect(checkArgv("sglang", e.argv.slice(3).map(resolve))).toEqual([]);
          continue;
        }
        // prime-rl's server takes `vllm serve`'s flags as --vllm.<flag>: checked in that form.
        const argv = vllmArgvOf(e.argv);
        expect(argv.slice(0, 2)).toEqual(["vllm", "serve"]);
        expect(checkArgv("vllm", argv.slice(2).map(resolve))).toEqual([]);
      }
      const r = island.router;
      if (r?.kind === "vllm-router") expect(checkArgv("vllm-router", r.argv.slice(1).map(resolve))).toEqual([]);
      if (r?.kind === "sglang-router") {
        expect(r.argv.slice(0, 3)).toEqual(["python3", "-m", "sglang_router.launch_router"]);
        expect(checkArgv("sglang-router", r.argv.slice(3).map(resolve))).toEqual([]);
      }
      if (r?.kind === "llm-d") expect(checkArgv("epp", r.epp.argv.slice(1).map(resolve))).toEqual([]);
      if (island.mooncake)
        expect(checkArgv("mooncake_client", island.mooncake.clients[0].argv.slice(1).map(resolve))).toEqual([]);
    }
  });

  it("the check itself rejects flags the manifests lack", () => {
    expect(checkArgv("vllm", ["m", "--tensor-parallel-size", "2", "--no-such-flag"])).toEqual([
      "vllm: unknown flag --no-such-flag",
    ]);
    expect(checkArgv("vllm", ["--all2all-backend", "bogus"])[0]).toMatch(/not one of/);
    expect(checkArgv("vllm-router", ["--pd-disaggregation"])).toEqual([
      "vllm-router: unknown flag --pd-disaggregation",
    ]);
  });
});

describe("determinism", () => {
  it.each(STACK_NAMES)("%s plans identically twice", (name) => {
    expect(JSON.stringify(stackPlanOf(name))).toBe(JSON.stringify(stackPlanOf(name)));
  });
});

describe("warnings", () => {
  it("flags allocated but idle GPUs", () => {
    const p = plan(`[model]\nname = "m"\n[parallel]\ntp = 2${SLURM}exclusive = true\n`);
    expect(p.warnings[0]).toMatch(
      /use 2 of deployment\.gpus_per_node = 8 GPUs, and slurm\.exclusive = true holds the whole node/,
    );
  });
});
