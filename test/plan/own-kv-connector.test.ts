import { describe, expect, it } from "vitest";
import { buildPlan } from "../../components/planner";
import { planJson } from "../../components/report/plan-json";
import { planText } from "../../components/report/plan-text";
import { showValue } from "../../components/plan/values";
import { checkArgv } from "../../components/upstream/check";
import { issuesOf, load, SLURM } from "../helpers";

/** A connector of the user's own (vllm_extra.kv_transfer_config) goes to vLLM as given. */
const OWN = {
  kv_connector: "LMCacheMPConnector",
  kv_role: "kv_both",
  kv_connector_extra_config: { "lmcache.mp.host": "tcp://lmcache.example", "lmcache.mp.port": 6555, nested: [1, "a"] },
};
const TOML = `[model]\nname = "m"\n[vllm_extra]\nkv_transfer_config = '${JSON.stringify(OWN)}'${SLURM}`;

const argvAfter = (argv: string[], flag: string) => argv.filter((_, i) => argv[i - 1] === flag);

describe("a KV connector of the user's own", () => {
  const cfg = load(TOML);
  const plan = buildPlan(cfg, "t");
  const engine = plan.islands[0].engines[0];
  const argv = engine.argv.map((v) => showValue(v, 0));

  it("reaches vLLM's argv unchanged, once, and passes vLLM's manifest", () => {
    const values = argvAfter(argv, "--kv-transfer-config");
    expect(values).toHaveLength(1);
    expect(JSON.parse(values[0])).toEqual(OWN);
    expect(engine.kvTransferConfig).toEqual(OWN);
    expect(checkArgv("vllm", argv.slice(2))).toEqual([]);
  });

  it("is given as a TOML table too (prime-rl's [vllm.kv_transfer_config]), keys and values as written", () => {
    const table = `[model]\nname = "m"\n[vllm_extra.kv_transfer_config]\nkv_connector = "NixlConnector"\nkv_role = "kv_producer"\nkv_port = 20001\nkv_connector_extra_config = { "a.b" = 1.5 }${SLURM}`;
    const e = buildPlan(load(table), "t").islands[0].engines[0];
    expect(
      JSON.parse(
        argvAfter(
          e.argv.map((v) => showValue(v, 0)),
          "--kv-transfer-config",
        )[0],
      ),
    ).toEqual({
      kv_connector: "NixlConnector",
      kv_role: "kv_producer",
      kv_port: 20001,
      kv_connector_extra_config: { "a.b": 1.5 },
    });
  });

  it("takes a connector vLLM does not register when kv_connector_module_path names its module", () => {
    const mine = { kv_connector: "MyConnector", kv_connector_module_path: "my_pkg.connector", kv_role: "kv_both" };
    const text = `[model]\nname = "m"\n[vllm_extra]\nkv_transfer_config = '${JSON.stringify(mine)}'${SLURM}`;
    expect(buildPlan(load(text), "t").islands[0].engines[0].kvTransferConfig).toEqual(mine);
    const unknown = text.replace(',"kv_connector_module_path":"my_pkg.connector"', "");
    expect(issuesOf(unknown).map((i) => i.path)).toEqual(["vllm_extra.kv_transfer_config.kv_connector"]);
  });

  it("the plan says the fleet does not manage its store, in text and JSON", () => {
    expect(plan.ownKvConnector).toEqual({ key: "vllm_extra.kv_transfer_config" });
    expect(planJson(plan, cfg).own_kv_connector).toEqual({
      key: "vllm_extra.kv_transfer_config",
      fleet_manages_store: false,
    });
    expect(planText(plan, "t.toml")).toMatch(
      /note: vllm_extra\.kv_transfer_config: your own KV connector \(LMCacheMPConnector\) reaches vLLM unchanged; the fleet does not start, manage or watch the store/,
    );
    expect(plan.kvTiers).toBeNull();
    expect(plan.islands[0].mooncake).toBeUndefined();
  });

  it("without one, the plan has no own connector and no such note", () => {
    const p = buildPlan(load(`[model]\nname = "m"${SLURM}`), "t");
    expect(p.ownKvConnector).toBeNull();
    expect(p.notes.join("\n")).not.toMatch(/own KV connector/);
  });
});
