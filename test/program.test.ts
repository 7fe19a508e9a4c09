import * as pulumi from "@pulumi/pulumi";
import { beforeAll, describe, expect, it, vi } from "vitest";

const registered: pulumi.runtime.MockResourceArgs[] = [];

beforeAll(() => {
  pulumi.runtime.setMocks(
    {
      newResource: (args) => {
        registered.push(args);
        return { id: `${args.name}-id`, state: args.inputs };
      },
      call: (args) => args.inputs,
    },
    "vllm-fleet",
    "multi-replica",
  );
});

/** Resolves a stack export the way `pulumi stack output` would see it. */
function value<T>(input: pulumi.Input<T>): Promise<pulumi.Unwrap<T>> {
  return new Promise((resolve) => {
    pulumi.output(input).apply((v) => resolve(v));
  });
}

async function program(config: Record<string, string>) {
  pulumi.runtime.setAllConfig(config);
  vi.resetModules();
  return import("../index");
}

describe("Pulumi program under mocks", () => {
  it("loads stacks/<stack>.toml by default and exports the planned endpoints", async () => {
    const infra = await program({});
    const planned = await value(infra.planned);
    expect(planned.shape).toBe("multi_replica");
    expect(planned.totals).toMatchObject({ nodes: 2, routers: 1, engines: 2 });
    expect(planned.islands).toEqual([
      {
        island: 0,
        routerUrl: "http://<i0-n0>:8000/v1",
        adminUrls: ["http://<i0-n0>:8100/v1", "http://<i0-n1>:8100/v1"],
        roles: ["replica", "replica"],
      },
    ]);
  });

  it("deploys the stack file the stackFile config key names", async () => {
    const infra = await program({ "vllm-fleet:stackFile": "disaggregated-x3" });
    const planned = await value(infra.planned);
    expect(planned.totals).toMatchObject({ nodes: 18, routers: 3, engines: 18 });
    expect(planned.islands.map((i) => i.roles.join(","))).toEqual(Array(3).fill("prefill,prefill,prefill,prefill,decode,decode"));
  });

  it("refuses an invalid stack file before registering anything", async () => {
    const before = registered.length;
    await expect(program({ "vllm-fleet:stackFile": "test/fixtures/program/invalid.toml" })).rejects.toThrow(/parallel\.tp/);
    expect(registered.length).toBe(before);
  });
});
