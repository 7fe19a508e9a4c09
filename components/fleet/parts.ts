import * as pulumi from "@pulumi/pulumi";
import type { Role } from "../plan/deployment-plan";

/** One engine as trainers see it: its id, role and admin base URL. */
export interface EngineEndpoint {
  id: string;
  role: Role;
  url: string;
}

/*
 * The logical parts of an island. On SLURM the island's one job runs them all, so these carry the
 * outputs read from that job's result; on Kubernetes they will own their workloads.
 */

export class Router extends pulumi.ComponentResource {
  /** Where clients send requests (`.../v1`); null in a dry run. */
  public readonly url: pulumi.Output<string | null>;
  constructor(name: string, args: { kind: "vllm-router" | "llm-d"; url: pulumi.Input<string | null> }, opts?: pulumi.ComponentResourceOptions) {
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
  constructor(name: string, args: { master: pulumi.Input<string | null>; metadata: pulumi.Input<string | null> }, opts?: pulumi.ComponentResourceOptions) {
    super("vllm-fleet:fleet:MooncakeStore", name, {}, opts);
    this.master = pulumi.output(args.master);
    this.metadata = pulumi.output(args.metadata);
    this.registerOutputs({ master: this.master, metadata: this.metadata });
  }
}
