/**
 * engine_processes: prime-rl's topology, one engine process per DP rank (its
 * src/prime_rl/templates/_launch_rank.sh.j2, called from inference.sbatch.j2 and
 * multi_node_rl.sbatch.j2), by default for prime-rl-layout files and on request for the seed layout;
 * one process per node otherwise, on Kubernetes and for single-node deployments.
 */
import { spawnSync } from "node:child_process";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfigFile, loadConfigText, parseOverrides } from "../../components/config";
import type { EngineProcess } from "../../components/plan/deployment-plan";
import { buildPlan } from "../../components/planner";
import { showValue, type Value } from "../../components/plan/values";
import { renderIslandScript } from "../../components/slurm";
import { expectShellcheckClean } from "../shellcheck";
import { ROOT, load, SLURM, stackText } from "../helpers";

const show = (argv: Value[]) => argv.map((v) => showValue(v, 0));
const flag = (argv: Value[], name: string) => {
  const s = show(argv);
  const i = s.indexOf(name);
  return i < 0 ? undefined : s[i + 1];
};
const envOf = (e: EngineProcess) => new Map(e.env.map(([k, v]) => [k, showValue(v, e.island)]));
const fixtureCfg = (name: string) => loadConfigFile(path.join(ROOT, "test/fixtures/prime-rl", `${name}.toml`), []);
const fixture = (name: string) => buildPlan(fixtureCfg(name), name);
const primeCfg = (text: string, target?: "kubernetes") =>
  target
    ? loadConfigText(
        text,
        "t.toml",
        parseOverrides(["--kubernetes.router_image=r.example/vllm-router:1"]).overrides,
        ROOT,
        { target },
      )
    : loadConfigText(text + SLURM, "t.toml");
const prime = (text: string, target?: "kubernetes") => buildPlan(primeCfg(text, target), "t");
/** A seed-layout stack (RL-embedded: [inference]) with engine_processes set. */
const seedWith = (stack: string, value: string) =>
  buildPlan(load(stackText(stack).replace("[inference]\n", `[inference]\nengine_processes = "${value}"\n`)), stack);

/** The DP flags of an engine, as `vllm serve` spells them. */
const dpFlags = (e: EngineProcess) =>
  Object.fromEntries(
    [
      "--data-parallel-size",
      "--data-parallel-size-local",
      "--data-parallel-rank",
      "--data-parallel-address",
      "--data-parallel-rpc-port",
      "--data-parallel-start-rank",
      "--api-server-count",
    ].map((f) => [f, flag(e.argv, f)]),
  );

const WIDE_EP = `[vllm]
model = "Qwen/Qwen3-30B-A3B"
tensor_parallel_size = 2
data_parallel_size = 8
enable_expert_parallel = true
[deployment]
type = "multi_node"
num_nodes = 2
`;

describe("engine_processes: where it is set and what it defaults to", () => {
  it('prime-rl\'s layout defaults to "per_rank", the seed layout to "per_node"', () => {
    expect(fixtureCfg("multi-node").engine_processes).toBe("per_rank");
    expect(load(stackText("wide-ep")).engine_processes).toBe("per_node");
    expect(fixture("disaggregated-overrides").islands[0].engines).toHaveLength(8);
  });

  it('[vllm_fleet] engine_processes = "per_node" keeps one engine per node in prime-rl\'s layout', () => {
    const text = `${WIDE_EP}[vllm_fleet]\nengine_processes = "per_node"\n`;
    const p = prime(text);
    expect(p.islands[0].engines).toHaveLength(2);
    for (const e of p.islands[0].engines) {
      expect(e.dp?.mode).toBe("hybrid");
      expect(envOf(e).has("VLLM_RPC_BASE_PATH")).toBe(false);
    }
  });

  it('the seed layout runs per rank on request: inference.engine_processes = "per_rank"', () => {
    const p = seedWith("wide-ep", "per_rank"); // tp 2, dp 8, 2 nodes
    expect(p.islands[0].engines).toHaveLength(8);
    expect(p.islands[0].engines.every((e) => e.dp?.mode === "external")).toBe(true);
    expect(seedWith("wide-ep", "per_node").islands[0].engines).toHaveLength(2);
  });

  it("single_node deployments run one engine (internal load balancing) whatever the key says", () => {
    expect(fixture("single-node").islands[0].engines).toHaveLength(1);
    expect(seedWith("single-node", "per_rank").islands[0].engines).toHaveLength(1);
  });
});

describe("expert-parallel replicas per rank: one external-LB DP group", () => {
  const p = prime(WIDE_EP);
  const engines = p.islands[0].engines;

  it("one engine per rank: port backend_port + k, GPUs k*tp.., rank node*dp_local + k, the group head's address", () => {
    expect(p.shape).toBe("wide_ep");
    expect(engines).toHaveLength(8);
    engines.forEach((e, i) => {
      const k = i % 4;
      expect(e.node).toBe(Math.floor(i / 4));
      expect(e.port).toBe(8100 + k);
      expect(e.gpus).toEqual([2 * k, 2 * k + 1]);
      expect(envOf(e).get("CUDA_VISIBLE_DEVICES")).toBe(`${2 * k},${2 * k + 1}`);
      expect(e.headless).toBe(false);
      expect(dpFlags(e)).toEqual({
        "--data-parallel-size": "8",
        "--data-parallel-size-local": "1",
        "--data-parallel-rank": String(i),
        "--data-parallel-address": "<i0-n0>",
        "--data-parallel-rpc-port": "13345",
        "--data-parallel-start-rank": undefined,
        "--api-server-count": "1",
      });
      expect(show(e.argv)).not.toContain("--data-parallel-hybrid-lb");
    });
  });

  it("every rank has its own VLLM_RPC_BASE_PATH directory, named by its port", () => {
    for (const e of engines) expect(envOf(e).get("VLLM_RPC_BASE_PATH")).toBe(`<scratch:rpc-${e.port}>`);
  });

  it("the router lists every rank of every node", () => {
    const r = p.islands[0].router;
    expect(r?.kind).toBe("vllm-router");
    if (r?.kind !== "vllm-router") return;
    expect(show(r.argv).filter((a) => a.startsWith("http://"))).toEqual(
      ["<i0-n0>", "<i0-n1>"].flatMap((n) => [8100, 8101, 8102, 8103].map((port) => `http://${n}:${port}`)),
    );
  });

  it("a group of one rank per node still passes its rank; a group of one rank passes none (vLLM refuses dp 1)", () => {
    const perNode = prime(
      WIDE_EP.replace("tensor_parallel_size = 2", "tensor_parallel_size = 8").replace(
        "data_parallel_size = 8",
        "data_parallel_size = 2",
      ),
    );
    expect(perNode.islands[0].engines.map((e) => [e.id, e.port, dpFlags(e)["--data-parallel-rank"]])).toEqual([
      ["i0-replica0-n0", 8100, "0"],
      ["i0-replica0-n1", 8100, "1"],
    ]);
    const one = prime(
      `[vllm]\nmodel = "zai-org/GLM-4.5-Air"\ntensor_parallel_size = 8\n[deployment]\ntype = "disaggregated"\n`,
    );
    for (const e of one.islands[0].engines) {
      expect(e.dp).toBeUndefined();
      expect(show(e.argv)).not.toContain("--data-parallel-size");
      expect(envOf(e).get("VLLM_RPC_BASE_PATH")).toBe(`<scratch:rpc-${e.port}>`);
    }
  });

  it("RL multi_node replicas of one node each (islands) run per rank too, as multi_node_rl.sbatch.j2 does", () => {
    const rl = buildPlan(
      loadConfigText(
        `[model]\nname = "Qwen/Qwen3-30B-A3B"\n[deployment]\ntype = "multi_node"\nnum_train_nodes = 1\nnum_infer_nodes = 1\nnum_infer_replicas = 2\n[orchestrator]\n[inference.vllm]\ntensor_parallel_size = 2\ndata_parallel_size = 4\nenable_expert_parallel = true\n${SLURM}`,
        "rl.toml",
      ),
      "rl",
    );
    expect(rl.islands).toHaveLength(2);
    for (const island of rl.islands) {
      expect(island.engines.map((e) => [e.port, flag(e.argv, "--vllm.data-parallel-rank")])).toEqual([
        [8100, "0"],
        [8101, "1"],
        [8102, "2"],
        [8103, "3"],
      ]);
      expect(island.router?.kind === "vllm-router" && show(island.router.argv)).not.toContain(
        "--intra-node-data-parallel-size",
      );
    }
  });
});

describe("P/D per rank: each prefill or decode sub-replica is an external-LB DP group", () => {
  // 2 prefill nodes (one sub-replica), 2 decode sub-replicas of 1 node; tp 4: 2 ranks per node.
  const p = fixture("disaggregated-overrides");
  const engines = p.islands[0].engines;

  it("ports prefill_port + k / decode_port + k, GPUs k*tp.., rank role_rank*dp_per_node + k, address the group head", () => {
    expect(
      engines.map((e) => [
        e.id,
        e.node,
        e.port,
        e.gpus.join(","),
        dpFlags(e)["--data-parallel-size"],
        dpFlags(e)["--data-parallel-rank"],
        dpFlags(e)["--data-parallel-address"],
      ]),
    ).toEqual([
      ["i0-prefill0-n0-r0", 0, 8100, "0,1,2,3", "4", "0", "<i0-n0>"],
      ["i0-prefill0-n0-r1", 0, 8101, "4,5,6,7", "4", "1", "<i0-n0>"],
      ["i0-prefill0-n1-r0", 1, 8100, "0,1,2,3", "4", "2", "<i0-n0>"],
      ["i0-prefill0-n1-r1", 1, 8101, "4,5,6,7", "4", "3", "<i0-n0>"],
      ["i0-decode0-n0-r0", 2, 8200, "0,1,2,3", "2", "0", "<i0-n2>"],
      ["i0-decode0-n0-r1", 2, 8201, "4,5,6,7", "2", "1", "<i0-n2>"],
      ["i0-decode1-n0-r0", 3, 8200, "0,1,2,3", "2", "0", "<i0-n3>"],
      ["i0-decode1-n0-r1", 3, 8201, "4,5,6,7", "2", "1", "<i0-n3>"],
    ]);
    for (const e of engines) {
      expect(dpFlags(e)["--data-parallel-size-local"]).toBe("1");
      expect(dpFlags(e)["--api-server-count"]).toBe("1");
      expect(show(e.argv)).not.toContain("--data-parallel-hybrid-lb");
    }
  });

  it("NIXL side channel 5600 + k per rank, on the node's own address", () => {
    for (const e of engines) {
      const k = e.port! % 100;
      expect(e.nixlPorts).toEqual([5600 + k]);
      expect(envOf(e).get("VLLM_NIXL_SIDE_CHANNEL_PORT")).toBe(String(5600 + k));
      expect(envOf(e).get("VLLM_NIXL_SIDE_CHANNEL_HOST")).toBe("<self>");
    }
  });

  it("the P/D router lists every prefill rank, then every decode rank", () => {
    const r = p.islands[0].router;
    expect(r?.kind).toBe("vllm-router");
    if (r?.kind !== "vllm-router") return;
    const argv = show(r.argv);
    const role = (name: string) => argv.flatMap((a, i) => (a === name ? [argv[i + 1]] : []));
    expect(role("--prefill")).toEqual([
      "http://<i0-n0>:8100",
      "http://<i0-n0>:8101",
      "http://<i0-n1>:8100",
      "http://<i0-n1>:8101",
    ]);
    expect(role("--decode")).toEqual([
      "http://<i0-n2>:8200",
      "http://<i0-n2>:8201",
      "http://<i0-n3>:8200",
      "http://<i0-n3>:8201",
    ]);
    expect(p.islands[0].endpoints.engines.map((e) => `${e.role}:${e.url.node}:${e.url.port}`)).toEqual(
      engines.map((e) => `${e.role}:${e.node}:${e.port}`),
    );
  });
});

describe("llm-d P/D with Mooncake per rank (test/fixtures/prime-rl/disaggregated-mooncake-llm-d.toml)", () => {
  const p = fixture("disaggregated-mooncake-llm-d"); // 1 prefill node, a 2-node decode group, tp 4
  const island = p.islands[0];

  it("every rank an endpoint: prefill on prefill_port + k, decode through its sidecar on sidecar_port + k", () => {
    expect(island.engines).toHaveLength(6);
    const r = island.router;
    expect(r?.kind).toBe("llm-d");
    if (r?.kind !== "llm-d") return;
    expect(r.endpoints.map((e) => [e.name, showValue(e.address, 0), e.port, e.role])).toEqual([
      ["i0-prefill0-n0-r0", "<i0-n0>", 8100, "prefill"],
      ["i0-prefill0-n0-r1", "<i0-n0>", 8101, "prefill"],
      ["i0-decode0-n0-r0", "<i0-n1>", 8300, "decode"],
      ["i0-decode0-n0-r1", "<i0-n1>", 8301, "decode"],
      ["i0-decode0-n1-r0", "<i0-n2>", 8300, "decode"],
      ["i0-decode0-n1-r1", "<i0-n2>", 8301, "decode"],
    ]);
    // One pd-sidecar per decode node, one listener per rank (prime-rl: --data-parallel-size dp_per_node).
    expect(r.sidecars.map((s) => [s.node, s.port, s.vllmPort, flag(s.argv, "--data-parallel-size")])).toEqual([
      [1, 8300, 8200, "2"],
      [2, 8300, 8200, "2"],
    ]);
    const decode = island.engines.filter((e) => e.role === "decode");
    expect(decode.map((e) => dpFlags(e)["--data-parallel-rank"])).toEqual(["0", "1", "2", "3"]);
    expect(new Set(decode.map((e) => dpFlags(e)["--data-parallel-address"]))).toEqual(new Set(["<i0-n1>"]));
  });

  it("each rank has its own VLLM_RPC_BASE_PATH beside the node's Mooncake config", () => {
    for (const e of island.engines) {
      const env = envOf(e);
      expect(env.get("VLLM_RPC_BASE_PATH")).toBe(`<scratch:rpc-${e.port}>`);
      expect(env.get("MOONCAKE_CONFIG_PATH")).toBe("<file:mooncake-config>");
    }
    for (const node of island.nodes) {
      const paths = island.engines.filter((e) => e.node === node.index).map((e) => envOf(e).get("VLLM_RPC_BASE_PATH"));
      expect(new Set(paths).size).toBe(paths.length);
    }
    expect(show(island.engines[0].argv)).toContain("--kv-transfer-config");
    expect(flag(island.engines[0].argv, "--kv-transfer-config")).toContain("MooncakeStoreConnector");
  });

  it("the island script makes each rank's directory before it starts, and passes bash -n and shellcheck", () => {
    const { script, launchBody } = renderIslandScript(p, island);
    expect(launchBody).toContain(`FLEET_SCRATCH="/tmp/vllm-fleet-$(id -u)-$SLURM_JOB_ID"`);
    for (const e of island.engines) {
      const line = launchBody.split("\n").find((l) => l.includes(`>> "$NODE_DIR/${e.id}.log"`))!;
      // Inside the function that starts it (and restarts it: templates/host/keeper.sh.mustache).
      expect(line).toMatch(
        new RegExp(
          `^\\s*fleet_start_\\S+\\(\\) \\{ \\( mkdir -p "\\$\\{FLEET_SCRATCH\\}-rpc-${e.port}" \\|\\| exit 1; `,
        ),
      );
      expect(line).toContain(`export VLLM_RPC_BASE_PATH="\${FLEET_SCRATCH}-rpc-${e.port}"`);
    }
    expect(launchBody.match(/exec pd-sidecar .*--data-parallel-size 2 /g)).toHaveLength(2);
    for (const text of [script, launchBody]) {
      expect(spawnSync("bash", ["-n"], { input: text, encoding: "utf8" }).status).toBe(0);
      expectShellcheckClean(text);
    }
  });

  it("a seed-layout script without per-rank engines has no scratch directory", () => {
    const seed = buildPlan(load(stackText("kv-offload-mooncake")), "kv-offload-mooncake");
    expect(renderIslandScript(seed, seed.islands[0]).launchBody).not.toContain("FLEET_SCRATCH");
  });
});

describe("Kubernetes keeps one engine per node", () => {
  it("prime-rl's per_rank default becomes per_node there, with a note naming the key", () => {
    const text = `[vllm]\nmodel = "Qwen/Qwen3-8B"\ntensor_parallel_size = 2\n[deployment]\ntype = "multi_node"\n`;
    const p = prime(text, "kubernetes");
    expect(primeCfg(text, "kubernetes").engine_processes).toBe("per_node");
    expect(p.islands[0].engines).toHaveLength(2);
    expect(p.islands[0].engines.every((e) => !envOf(e).has("VLLM_RPC_BASE_PATH"))).toBe(true);
    expect(p.notes.join("\n")).toContain('vllm_fleet.engine_processes is "per_rank", which applies on SLURM only');
  });

  it("no note for a single-node deployment, where per_rank changes nothing", () => {
    const p = prime(`[vllm]\nmodel = "Qwen/Qwen3-8B"\n`, "kubernetes");
    expect(p.notes.join("\n")).not.toContain("engine_processes");
  });

  it("the seed layout's key is named as the file spells it", () => {
    const k8s = stackText("k8s-wide-ep").replace("[inference]\n", `[inference]\nengine_processes = "per_rank"\n`);
    const p = buildPlan(load(k8s), "k8s-wide-ep");
    expect(p.islands[0].engines).toHaveLength(2);
    expect(p.notes.join("\n")).toContain('inference.engine_processes is "per_rank"');
  });
});
