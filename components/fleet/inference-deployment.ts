import type * as command from "@pulumi/command";
import type * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { IslandContext, IslandOutputs } from "../backend";
import type { SecretName } from "../credentials";
import { kubernetesBackend, kubernetesFleet } from "../kubernetes/deploy";
import type { DeploymentPlan, IslandPlan } from "../plan/deployment-plan";
import { slurmBackend } from "../slurm/deploy";
import { islandParts } from "./parts";

export interface InferenceDeploymentArgs {
  plan: DeploymentPlan;
  /** Credentials from Pulumi config secrets: 0600 files on SLURM, the fleet's Secret on Kubernetes. */
  secrets?: Partial<Record<SecretName, pulumi.Output<string>>>;
  /** How a credential's config key is spelled in errors (e.g. vllm-fleet:apiKey). */
  secretKey?: (name: SecretName) => string;
  /** SLURM stacks: the login node. */
  connection?: pulumi.Input<command.types.input.remote.ConnectionArgs>;
  /** Kubernetes stacks: the cluster. */
  kubernetes?: { provider: k8s.Provider };
}

/**
 * A whole fleet: per island the logical parts (router, replicas or a prefill/decode group, Mooncake
 * store), the same on every target, and the target's own resources from its backend. On SLURM one
 * job runs the island and the parts report its result line; on Kubernetes each part owns its
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
    let deploy: (island: IslandPlan) => pulumi.Output<IslandOutputs>;
    if (plan.target === "slurm") {
      if (!args.connection) throw new Error("a SLURM fleet needs the login node connection");
      const ctx = { ...common, connection: args.connection };
      deploy = (island) => slurmBackend.deployIsland(this, plan, island, ctx);
    } else {
      if (!args.kubernetes) throw new Error("a Kubernetes fleet needs a provider");
      const ctx = { ...common, ...kubernetesFleet(this, plan, args.kubernetes.provider, secrets) };
      deploy = (island) => kubernetesBackend.deployIsland(this, plan, island, ctx);
    }
    this.islands = pulumi.all(plan.islands.map(deploy));
    this.registerOutputs({ islands: this.islands });
  }
}
