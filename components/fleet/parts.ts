import * as pulumi from "@pulumi/pulumi";
import type { EngineEndpoint, IslandParts, PartOutputs } from "../backend";
import type { DeploymentPlan, IslandPlan, RouterPlan } from "../plan/deployment-plan";
import { islandName } from "../plan/naming";

/*
 * The logical parts of an island. On SLURM the island's one job runs them all, so these carry the
 * outputs read from that job's result; on Kubernetes they own their workloads.
 */

export class Router extends pulumi.ComponentResource {
  /** Where clients send requests (`.../v1`); null in a dry run. */
  public readonly url: pulumi.Output<string | null>;
  constructor(
    name: string,
    args: { kind: RouterPlan["kind"]; url: pulumi.Input<string | null> },
    opts?: pulumi.ComponentResourceOptions,
  ) {
    super("vllm-fleet:fleet:Router", name, {}, opts);
    this.url = pulumi.output(args.url);
    this.registerOutputs({ url: this.url });
  }
}

export class VllmReplica extends pulumi.ComponentResource {
  /** This replica's engines (one per node), in admin order. */
  public readonly engines: pulumi.Output<EngineEndpoint[]>;
  constructor(name: string, args: { engines: pulumi.Input<EngineEndpoint[]> }, opts?: pulumi.ComponentResourceOptions) {
    super("vllm-fleet:fleet:VllmReplica", name, {}, opts);
    this.engines = pulumi.output(args.engines) as pulumi.Output<EngineEndpoint[]>;
    this.registerOutputs({ engines: this.engines });
  }
}

export class PrefillDecodeGroup extends pulumi.ComponentResource {
  public readonly prefill: pulumi.Output<EngineEndpoint[]>;
  public readonly decode: pulumi.Output<EngineEndpoint[]>;
  constructor(name: string, args: { engines: pulumi.Input<EngineEndpoint[]> }, opts?: pulumi.ComponentResourceOptions) {
    super("vllm-fleet:fleet:PrefillDecodeGroup", name, {}, opts);
    const engines = pulumi.output(args.engines) as pulumi.Output<EngineEndpoint[]>;
    this.prefill = engines.apply((es) => es.filter((e) => e.role === "prefill"));
    this.decode = engines.apply((es) => es.filter((e) => e.role === "decode"));
    this.registerOutputs({ prefill: this.prefill, decode: this.decode });
  }
}

export class MooncakeStore extends pulumi.ComponentResource {
  /** host:port of the master's RPC service; null in a dry run. */
  public readonly master: pulumi.Output<string | null>;
  /** The HTTP metadata server URL; null in a dry run. */
  public readonly metadata: pulumi.Output<string | null>;
  constructor(
    name: string,
    args: { master: pulumi.Input<string | null>; metadata: pulumi.Input<string | null> },
    opts?: pulumi.ComponentResourceOptions,
  ) {
    super("vllm-fleet:fleet:MooncakeStore", name, {}, opts);
    this.master = pulumi.output(args.master);
    this.metadata = pulumi.output(args.metadata);
    this.registerOutputs({ master: this.master, metadata: this.metadata });
  }
}

const endpoint = ({ id, role, url }: EngineEndpoint): EngineEndpoint => ({ id, role, url });

/**
 * One island's parts, the same on every target: a Router when the island has one, one
 * PrefillDecodeGroup (P/D) or a VllmReplica per replica, a MooncakeStore when it has a store.
 */
export function islandParts(
  parent: pulumi.ComponentResource,
  name: string,
  plan: DeploymentPlan,
  island: IslandPlan,
  outputs: pulumi.Input<PartOutputs>,
  dependsOn?: pulumi.Resource,
): IslandParts {
  const base = islandName(name, plan.service, island.index);
  const opts: pulumi.ComponentResourceOptions = dependsOn ? { parent, dependsOn } : { parent };
  const out = pulumi.output(outputs) as pulumi.Output<PartOutputs>;
  const engines = out.apply((o) => o.engines);
  const router = island.router
    ? new Router(`${base}-router`, { kind: island.router.kind, url: out.apply((o) => o.routerUrl) }, opts)
    : undefined;
  let engineParts: (replica: number) => pulumi.ComponentResource;
  if (plan.shape === "disaggregated") {
    const group = new PrefillDecodeGroup(`${base}-pd`, { engines: engines.apply((es) => es.map(endpoint)) }, opts);
    engineParts = () => group;
  } else {
    const replicas = new Map<number, VllmReplica>();
    for (const r of new Set(island.engines.map((e) => e.replica))) {
      const mine = engines.apply((es) => es.filter((e) => e.replica === r).map(endpoint));
      replicas.set(r, new VllmReplica(`${base}-replica${r}`, { engines: mine }, opts));
    }
    engineParts = (r) => {
      const part = replicas.get(r);
      if (!part) throw new Error(`internal error: island ${island.index} has no replica ${r}`);
      return part;
    };
  }
  const mooncake = island.mooncake
    ? new MooncakeStore(
        `${base}-mooncake`,
        {
          master: out.apply((o) => o.mooncake?.master ?? null),
          metadata: out.apply((o) => o.mooncake?.metadata ?? null),
        },
        opts,
      )
    : undefined;
  return { router, mooncake, engines: engineParts };
}
