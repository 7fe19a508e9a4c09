import { describe, expect, it } from "vitest";
import { loadConfigText } from "../../components/config";
import { ConfigError, type ConfigIssue } from "../../components/config/issues";
import { buildPlan } from "../../components/planner";
import { showValue } from "../../components/plan/values";
import { l1SizeGb } from "../../components/plan/lmcache";
import { checkArgv } from "../../components/upstream/check";
import { issuesOf, stackText } from "../helpers";

/** kv_cache_offload.type = "lmcache": LMCache's server on every node, engines on LMCacheMPConnector. */
const plan = (name: string) => buildPlan(loadConfigText(stackText(name), `${name}.toml`), name);

describe("LMCache offload", () => {
  const p = plan("kv-offload-lmcache");
  const island = p.islands[0];

  it("plans one server per node, its argv passing lmcache server's manifest", () => {
    const l = island.lmcache!;
    expect(l.servers.map((s) => s.node)).toEqual([0, 1]);
    const argv = l.servers[0].argv.map((v) => showValue(v, 0));
    expect(argv.slice(0, 2)).toEqual(["lmcache", "server"]);
    expect(argv).toEqual(
      expect.arrayContaining(["--port=5555", "--l1-size-gb=59.605", "--chunk-size=256", "--host=127.0.0.1"]),
    );
    expect(checkArgv("lmcache", argv.slice(2))).toEqual([]);
    expect(island.nodes.every((n) => n.services.includes("lmcache_server"))).toBe(true);
    expect(p.kvTiers).toEqual({ store: "lmcache", cpuBytes: 64_000_000_000 });
  });

  it("the manifest check refuses what lmcache server refuses", () => {
    expect(checkArgv("lmcache", ["--eviction-policy=LFU"])).toHaveLength(1);
    expect(checkArgv("lmcache", ["--l1-size=2"])).toHaveLength(1);
  });

  it("points every engine at its node's server through LMCacheMPConnector, with prefix caching on", () => {
    for (const e of island.engines) {
      expect(e.kvTransferConfig).toEqual({
        kv_connector: "LMCacheMPConnector",
        kv_role: "kv_both",
        kv_connector_extra_config: { "lmcache.mp.host": "tcp://127.0.0.1", "lmcache.mp.port": 5555 },
      });
      expect(e.argv.map((v) => showValue(v, 0))).toContain("--enable-prefix-caching");
    }
  });

  it("sizes L1 in LMCache's GB (GiB) from cpu.num_bytes", () => {
    expect(l1SizeGb(2 * 1024 ** 3)).toBe("2");
    expect(l1SizeGb(1024 ** 3 / 2)).toBe("0.5");
  });

  it("refuses a disk tier (LMCache's L2 is not planned) and the local target's second node", () => {
    const base = `[model]\nname = "m"\n[kv_cache_offload]\ntype = "lmcache"\ncpu.num_bytes = 1_000_000_000\n`;
    expect(issuesOf(`${base}disk.path = "/scratch"\n[slurm]\njob_name = "t"\n`).map((i) => i.path)).toEqual([
      "kv_cache_offload.disk",
    ]);
    const local = `${base}[deployment]\ntype = "multi_node"\nnum_nodes = 2\n[local]\n`;
    let refused: ConfigIssue[] = [];
    try {
      buildPlan(loadConfigText(local, "t.toml"), "t");
    } catch (err) {
      if (err instanceof ConfigError) refused = err.issues;
      else throw err;
    }
    expect(refused.find((i) => i.path === "kv_cache_offload.type")?.message).toMatch(
      /= "lmcache" runs an LMCache server on each of the plan's 2 nodes/,
    );
  });
});
