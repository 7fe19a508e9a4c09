import type * as pulumi from "@pulumi/pulumi";
import type { DeployTarget, IslandContext } from "../backend";
import type { TargetKind } from "../config/target-kinds";
import type { DeploymentPlan, IslandPlan } from "../plan/deployment-plan";
import { kubernetesDeployTarget, type KubernetesIslandOutputs } from "../kubernetes/deploy";
import { slurmDeployTarget, type SlurmIslandOutputs } from "../slurm/deploy";
import { localDeployTarget, type LocalIslandOutputs } from "../local/deploy";

/** One island in the `islands` stack output, as the target that deployed it reports it. */
export type IslandOutputs = SlurmIslandOutputs | KubernetesIslandOutputs | LocalIslandOutputs;

/** A `DeployTarget` with its own connection and context types hidden, so targets can share one registry. */
export interface RegisteredDeployTarget {
  connect(config: pulumi.Config, name: string, plan: DeploymentPlan): unknown;
  /** Makes the fleet's context once and returns the island deployer that uses it. */
  deployer(
    fleet: pulumi.ComponentResource,
    plan: DeploymentPlan,
    common: IslandContext,
    connection: unknown,
  ): (island: IslandPlan) => pulumi.Output<IslandOutputs>;
}

function register<Connection, Context extends IslandContext, Outputs extends IslandOutputs>(
  target: DeployTarget<Connection, Context, Outputs>,
): RegisteredDeployTarget {
  return {
    connect: target.connect,
    deployer: (fleet, plan, common, connection) => {
      // `connection` is what this same target's connect() returned (index.ts).
      const ctx = target.fleetContext(fleet, plan, common, connection as Connection);
      // Output<T> is covariant in T, but its lifted property types hide that from the compiler.
      return (island) => target.deployIsland(fleet, plan, island, ctx) as unknown as pulumi.Output<IslandOutputs>;
    },
  };
}

/**
 * The registry of targets, Pulumi side: every target's `DeployTarget` by kind, for index.ts and
 * InferenceDeployment (the pure side is components/targets.ts).
 */
const DEPLOY_TARGETS: Record<TargetKind, RegisteredDeployTarget> = {
  slurm: register(slurmDeployTarget),
  kubernetes: register(kubernetesDeployTarget),
  local: register(localDeployTarget),
};

export function deployTargetOf(kind: TargetKind): RegisteredDeployTarget {
  return DEPLOY_TARGETS[kind];
}
