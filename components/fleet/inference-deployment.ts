import * as pulumi from "@pulumi/pulumi";
import type { IslandContext } from "../backend";
import type { SecretName } from "../credentials";
import type { DeploymentPlan } from "../plan/deployment-plan";
import { deployTargetOf, type IslandOutputs } from "./deploy-targets";
import { islandParts } from "./parts";

export interface InferenceDeploymentArgs {
  plan: DeploymentPlan;
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
  public readonly islands: pulumi.Output<IslandOutputs[]>;

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
      parts: (island, outputs, dependsOn) => islandParts(this, name, plan, island, outputs, dependsOn),
    };
    const deployIsland = deployTargetOf(plan.target).deployer(this, plan, common, args.connection);
    this.islands = pulumi.all(plan.islands.map(deployIsland));
    this.registerOutputs({ islands: this.islands });
  }
}
