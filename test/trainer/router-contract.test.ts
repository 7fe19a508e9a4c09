/**
 * The island's `router` entry of the trainer contract (contract.ts islandRouterSchema): what a
 * client needs to keep a session on one engine and to release it. finishSession is true only for a
 * build that serves POST /finish_session (vllm-router-releases.json).
 */
import { describe, expect, it } from "vitest";
import { parseIslandResult, resultTemplate } from "../../components/host/island-result";
import { viewFromEndpoints } from "../../components/ops/fleet-view";
import { fleetEndpoints, stackEndpoints } from "../../components/outputs";
import type { DeploymentPlan } from "../../components/plan/deployment-plan";
import { islandRouter } from "../../components/trainer/router-contract";
import { fleetEndpointsSchema, islandEndpointsSchema } from "../../components/trainer/contract";
import { plan, SLURM } from "../helpers";

const contractOf = (p: DeploymentPlan) => islandRouter(p.routerSettings);

const multiNode = (router: string) =>
  `[model]\nname = "Qwen/Qwen3-8B"\n[deployment]\ntype = "multi_node"\n[deployment.router]\n${router}\n${SLURM}`;

describe("the island router in the trainer contract", () => {
  it.each([
    [
      'policy = "sticky_least_loaded"\nrelease = "primeintellect-v0.2.1"',
      {
        kind: "vllm-router",
        policy: "sticky_least_loaded",
        release: "primeintellect-v0.2.1",
        finishSession: true,
        sessionHeader: "X-Session-ID",
      },
    ],
    [
      'policy = "consistent_hash"',
      {
        kind: "vllm-router",
        policy: "consistent_hash",
        release: "vllm-router-0.1.17",
        finishSession: false,
        sessionHeader: "X-Session-ID",
      },
    ],
    // The fork's build serves /finish_session whatever the policy; round_robin pins no session.
    [
      'policy = "round_robin"\nrelease = "primeintellect-v0.2.1"',
      {
        kind: "vllm-router",
        policy: "round_robin",
        release: "primeintellect-v0.2.1",
        finishSession: true,
        sessionHeader: null,
      },
    ],
    ['type = "llm-d"', { kind: "llm-d", policy: null, release: null, finishSession: false, sessionHeader: null }],
  ])("%s", (router, expected) => {
    const p = plan(multiNode(router));
    expect(contractOf(p)).toEqual(expected);
    // The `endpoints` output as the program builds it from the stack's plans.
    const out = stackEndpoints(
      { stack: p.stack, services: [p], totals: p.totals },
      [
        [
          {
            island: 0,
            routerUrl: "http://10.0.0.1:8000/v1",
            adminUrls: ["http://10.0.0.1:8100/v1"],
            roles: ["replica"],
          },
        ],
      ],
      false,
    );
    const e = fleetEndpointsSchema.parse(out);
    expect(e.islands[0].router).toEqual(expected);
  });

  it("is null for a router-less island, and sglang-router's manual policy pins by its routing key", () => {
    const bare = plan(`[model]\nname = "Qwen/Qwen3-8B"\n[deployment.router]\ntype = "none"\n${SLURM}`);
    expect(contractOf(bare)).toBeNull();
    const sglang = plan(
      `engine = "sglang"\n[model]\nname = "Qwen/Qwen3-8B"\n[deployment]\ntype = "multi_node"\n[deployment.router]\ntype = "sglang-router"\npolicy = "manual"\n${SLURM}`,
    );
    expect(contractOf(sglang)).toEqual({
      kind: "sglang-router",
      policy: "manual",
      release: null,
      finishSession: false,
      sessionHeader: "X-SMG-Routing-Key",
    });
  });

  it("is optional: an island written before it existed still validates, and a view without it adds none", () => {
    const e = fleetEndpoints(
      { model: "m", target: "slurm", engine: "vllm" },
      [{ island: 0, routerUrl: null, adminUrls: ["http://10.0.0.1:8000/v1"], roles: ["replica"] }],
      false,
    );
    expect("router" in e.islands[0]).toBe(false);
    expect(islandEndpointsSchema.safeParse(e.islands[0]).success).toBe(true);
  });

  it("goes into the island's endpoints.json (the create command's result)", () => {
    const p = plan(multiNode('policy = "sticky_least_loaded"\nrelease = "primeintellect-v0.2.1"'));
    const line = resultTemplate(p, p.islands[0], "job")
      .replaceAll("__FLEET_JOB_ID__", "42")
      .replaceAll("__FLEET_ADOPTED__", "false")
      .replace(/__FLEET_T_[A-Z]+__/g, "1")
      .replace(/__FLEET_NODE_HOST_\d+__/g, "h")
      .replace(/__FLEET_NODE_ADDR_\d+__/g, "10.0.0.1");
    const r = parseIslandResult(line);
    expect(r.dryRun === false && r.router).toEqual(contractOf(p));
    expect(r.dryRun === false && r.router?.finishSession).toBe(true);
    // `fleet endpoints --endpoints <island's endpoints.json>` carries it into the contract.
    const view = viewFromEndpoints(JSON.parse(line), "endpoints.json");
    const e = fleetEndpoints(
      view,
      [{ island: 0, routerUrl: "http://10.0.0.1:8000/v1", adminUrls: ["http://10.0.0.1:8100/v1"], roles: ["replica"] }],
      false,
    );
    expect(e.islands[0].router).toEqual(contractOf(p));
  });
});
