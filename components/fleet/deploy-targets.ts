import type * as pulumi from "@pulumi/pulumi";
import type { DeployTarget, IslandContext, ServiceIsland } from "../backend";
import type { StackPlan } from "../plan/stack-plan";
import type { TargetKind } from "../config/target-registry";
import { kubernetesDeployTarget, type KubernetesIslandOutputs } from "../kubernetes/deploy";
import { slurmDeployTarget, type SlurmIslandOutputs } from "../slurm/deploy";
import { localDeployTarget, type LocalIslandOutputs } from "../local/deploy";

/** One island in the `islands` stack output, as the target that deployed it reports it. */
export type IslandOutputs = SlurmIslandOutputs | KubernetesIslandOutputs | LocalIslandOutputs;

/** A `DeployTarget` with its own connection and context types hidden, so targets can share one registry. */
export interface RegisteredDeployTarget {
  connect(config: pulumi.Config, name: string, stack: StackPlan): unknown;
  /**
   * Makes the fleet's context once and deploys every island of every service: alone, or with the
   * others of its group (`DeployTarget.groups`). Outputs per service, in island order.
   */
  deploy(
    fleet: pulumi.ComponentResource,
    stack: StackPlan,
    common: IslandContext,
    connection: unknown,
  ): pulumi.Output<IslandOutputs>[][];
}

const key = (m: ServiceIsland) => `${m.plan.service ?? ""}/${m.island.index}`;

function register<Connection, Context extends IslandContext, Outputs extends IslandOutputs>(
  target: DeployTarget<Connection, Context, Outputs>,
): RegisteredDeployTarget {
  return {
    connect: target.connect,
    deploy: (fleet, stack, common, connection) => {
      // `connection` is what this same target's connect() returned (index.ts).
      const ctx = target.fleetContext(fleet, stack, common, connection as Connection);
      const done = new Map<string, pulumi.Output<Outputs>>();
      for (const group of target.groups?.(stack) ?? []) {
        if (group.length < 2 || !target.deployGroup) continue;
        target.deployGroup(fleet, group, ctx).forEach((out, k) => done.set(key(group[k]), out));
      }
      // Output<T> is covariant in T, but its lifted property types hide that from the compiler.
      return stack.services.map((plan) =>
        plan.islands.map(
          (island) =>
            (done.get(key({ plan, island })) ??
              target.deployIsland(fleet, plan, island, ctx)) as unknown as pulumi.Output<IslandOutputs>,
        ),
      );
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
