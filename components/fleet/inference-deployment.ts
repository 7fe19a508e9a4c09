import * as pulumi from "@pulumi/pulumi";
import type { IslandContext } from "../backend";
import type { SecretName } from "../credentials";
import type { StackPlan } from "../plan/stack-plan";
import { deployTargetOf, type IslandOutputs } from "./deploy-targets";
import { islandParts } from "./parts";

export interface InferenceDeploymentArgs {
  /** Every service of the stack (one for a file without [services]). */
  plan: StackPlan;
  /** Credentials from Pulumi config secrets: 0600 files on SLURM, the fleet's Secret on Kubernetes. */
  secrets?: Partial<Record<SecretName, pulumi.Output<string>>>;
  /** How a credential's config key is spelled in errors (e.g. vllm-fleet:apiKey). */
  secretKey?: (name: SecretName) => string;
  /** What the plan's target made from Pulumi config (`DeployTarget.connect`): SLURM the login node, Kubernetes the provider. */
  connection: unknown;
}

/**
 * A whole fleet: per island the logical parts (router, replicas or a prefill/decode group, Mooncake
 * store), the same on every target, and the target's own resources from its deploy side. On SLURM
 * one job runs the island and the parts report its result line; on Kubernetes each part owns its
 * workloads and reports in-cluster URLs.
 */
export class InferenceDeployment extends pulumi.ComponentResource {
  /** Every island of every service, service by service in the file's order. */
  public readonly islands: pulumi.Output<IslandOutputs[]>;
  /** Each service's islands, in the stack's service order. */
  public readonly services: pulumi.Output<IslandOutputs[]>[];

  constructor(name: string, args: InferenceDeploymentArgs, opts?: pulumi.ComponentResourceOptions) {
    super("vllm-fleet:fleet:InferenceDeployment", name, {}, opts);
    const { plan } = args;
    const secrets = Object.fromEntries(
      Object.entries(args.secrets ?? {}).filter(([, v]) => v !== undefined),
    ) as Partial<Record<SecretName, pulumi.Output<string>>>;
    const common: IslandContext = {
      name,
      secrets,
      secretKey: args.secretKey ?? ((n: SecretName) => n),
      parts: (service, island, outputs, dependsOn) => islandParts(this, name, service, island, outputs, dependsOn),
    };
    const deployed = deployTargetOf(plan.services[0].target).deploy(this, plan, common, args.connection);
    this.services = deployed.map((islands) => pulumi.all(islands));
    // A named service's islands say whose they are (the fleet CLI's --service reads it from `islands`).
    const owned = plan.services.map((p, k) =>
      p.service === undefined
        ? this.services[k]
        : this.services[k].apply((islands) => islands.map((i) => ({ service: p.service, ...i }))),
    );
    this.islands = pulumi.all(owned).apply((all) => all.flat());
    this.registerOutputs({ islands: this.islands });
  }
}
