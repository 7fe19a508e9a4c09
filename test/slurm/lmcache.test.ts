import { describe, expect, it } from "vitest";
import { loadConfigText } from "../../components/config";
import { buildPlan } from "../../components/planner";
import { stackText } from "../helpers";
import { renderIslandScript } from "../../components/slurm/sbatch";

const plan = (name: string) => buildPlan(loadConfigText(stackText(name), `${name}.toml`), name);

/** kv_cache_offload.type = "lmcache" on SLURM: the node's LMCache server is up before its engines start. */
describe("LMCache offload on SLURM", () => {
  const p = plan("kv-offload-lmcache");
  const island = p.islands[0];

  it("SLURM: each node starts its server and waits for it to listen before its engines", () => {
    const { launchBody } = renderIslandScript(p, island);
    const server = launchBody.indexOf("fleet_run n1_lmcache_server");
    const wait = launchBody.indexOf("fleet_wait_listening n1_lmcache_server 127.0.0.1 5555");
    const engine = launchBody.indexOf("fleet_run n1_", wait + 1);
    expect(server).toBeGreaterThan(-1);
    expect(wait).toBeGreaterThan(server);
    expect(engine).toBeGreaterThan(wait);
  });

  it("the server restarts with its node's engines (one group): a restarted server alone leaves them waiting on it for good", () => {
    const { launchBody } = renderIslandScript(p, island);
    for (const node of [0, 1]) {
      const group = island.engines.find((e) => e.node === node)!.group;
      expect(launchBody).toContain(`fleet_run n${node}_lmcache_server lmcache_server ${group}\n`);
    }
  });
});
