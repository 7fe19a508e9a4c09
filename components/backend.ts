import type * as pulumi from "@pulumi/pulumi";
import type { SecretName } from "./credentials";
import type { DeploymentPlan, IslandPlan, Role } from "./plan/deployment-plan";
import type { StackPlan } from "./plan/stack-plan";

/*
 * What a target's Pulumi side (components/slurm/deploy.ts, components/kubernetes/deploy.ts) is to
 * the rest of the program: InferenceDeployment looks it up by the plan's target
 * (components/fleet/deploy-targets.ts) and creates the parts every target shares; the target
 * creates its own resources and reports the island's outputs.
 */

/** One engine as trainers see it: its id, role and admin base URL. */
export interface EngineEndpoint {
  id: string;
  role: Role;
  url: string;
}

/**
 * One island once it serves, as the `islands` stack output shows it: the router and admin URLs
 * every target reports. Each target extends it with its own details (SlurmIslandOutputs,
 * KubernetesIslandOutputs); the deploy registry (components/fleet/deploy-targets.ts) unites them.
 */
export interface BaseIslandOutputs {
  island: number;
  /** The island's router (`.../v1`); null without one, or in a dry run. */
  routerUrl: string | null;
  /** Every engine's URL (`.../v1`) in the planner's order. */
  adminUrls: string[];
  /** The role of each admin URL, position by position. */
  roles: Role[];
}

/** What an island's logical parts report: the router's URL, every serving engine, the Mooncake store. */
export interface PartOutputs {
  routerUrl: string | null;
  /** Every serving engine with its replica, in admin order. */
  engines: (EngineEndpoint & { replica: number })[];
  mooncake: { master: string; metadata: string } | null;
}

/** An island's logical parts, for the backend to parent its own resources under. */
export interface IslandParts {
  router?: pulumi.ComponentResource;
  mooncake?: pulumi.ComponentResource;
  /** The part that owns replica `replica`'s engines: its VllmReplica, or the island's PrefillDecodeGroup. */
  engines(replica: number): pulumi.ComponentResource;
}

/** What every island deployer gets; each backend adds its own (SLURM the login node, Kubernetes the provider). */
export interface IslandContext {
  /** The deployment's name: every resource name starts with `<name>-i<island>`. */
  name: string;
  /** The configured credentials, from Pulumi config secrets. */
  secrets: Partial<Record<SecretName, pulumi.Output<string>>>;
  /** How a credential's config key is spelled in errors (e.g. vllm-fleet:apiKey). */
  secretKey: (name: SecretName) => string;
  /**
   * Creates the island's parts (Router, a VllmReplica per replica or one PrefillDecodeGroup,
   * MooncakeStore) under the deployment, reporting `outputs`. `dependsOn`: the parts exist only
   * once that resource does (SLURM: the job that runs them).
   */
  parts(
    plan: DeploymentPlan,
    island: IslandPlan,
    outputs: pulumi.Input<PartOutputs>,
    dependsOn?: pulumi.Resource,
  ): IslandParts;
}

/** One island of one service of a stack. */
export interface ServiceIsland {
  plan: DeploymentPlan;
  island: IslandPlan;
}

/** Deploys several islands (of one or several services) as one unit, e.g. one heterogeneous SLURM job; outputs in `members` order. */
export type GroupDeployer<Context extends IslandContext, Outputs extends BaseIslandOutputs> = (
  parent: pulumi.ComponentResource,
  members: ServiceIsland[],
  ctx: Context,
) => pulumi.Output<Outputs>[];

/** Deploys one island under `parent`; the output resolves once the island serves. */
export type IslandDeployer<Context extends IslandContext, Outputs extends BaseIslandOutputs> = (
  parent: pulumi.ComponentResource,
  plan: DeploymentPlan,
  island: IslandPlan,
  ctx: Context,
) => pulumi.Output<Outputs>;

/** One file `plan --out` writes: its path under the output directory, its text and mode. */
export interface PlanOutFile {
  path: string;
  text: string;
  mode?: number;
}

/**
 * A target's Pulumi side, for `pulumi up` (its pure side is its `Target`, components/target.ts).
 * `connect` runs in index.ts before the deployment exists, `fleetContext` once under it, and
 * `deployIsland` per island.
 */
export interface DeployTarget<Connection, Context extends IslandContext, Outputs extends BaseIslandOutputs> {
  /** What the target needs from Pulumi config: SLURM the login connection, Kubernetes the provider. `name`: the deployment's. */
  connect(config: pulumi.Config, name: string, stack: StackPlan): Connection;
  /** The context every island of every service gets, with whatever they share (Kubernetes: namespace and Secret). */
  fleetContext(
    fleet: pulumi.ComponentResource,
    stack: StackPlan,
    common: IslandContext,
    connection: Connection,
  ): Context;
  /** Creates one island's resources under the fleet's component; its outputs are the island's URLs. */
  deployIsland: IslandDeployer<Context, Outputs>;
  /**
   * The islands the target deploys together (SLURM's co-scheduled hetjob), each group of two or
   * more given to `deployGroup`; every island not in a group is deployed alone. Pure.
   * @default undefined (every island alone)
   */
  groups?(stack: StackPlan): ServiceIsland[][];
  /**
   * Creates the islands of one group together (SLURM: one heterogeneous job); outputs in the group's order.
   * @default undefined (groups are deployed island by island)
   */
  deployGroup?: GroupDeployer<Context, Outputs>;
}
