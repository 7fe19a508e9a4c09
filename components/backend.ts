import type * as pulumi from "@pulumi/pulumi";
import type { SecretName } from "./credentials";
import type { DeploymentPlan, IslandPlan, Role } from "./plan/deployment-plan";

/*
 * What a backend (components/slurm, components/kubernetes) is to the rest of the program: one
 * island deployer for `pulumi up` and one renderer for `plan --out`. InferenceDeployment picks the
 * backend by the plan's target and creates the parts every target shares; the backend creates its
 * own resources and reports the island's outputs.
 */

/** One engine as trainers see it: its id, role and admin base URL. */
export interface EngineEndpoint {
  id: string;
  role: Role;
  url: string;
}

/**
 * One island once it serves, as the `islands` stack output shows it: the router and admin URLs
 * every target reports, plus the target's own details (absent on the other target).
 */
export interface IslandOutputs {
  island: number;
  /** SLURM: the job's unique name. */
  jobName?: string;
  /** SLURM: the job id; null in a dry run. */
  jobId?: string | null;
  /** SLURM: a dry run submitted nothing. */
  dryRun?: boolean;
  /** SLURM: where a dry run left the script. */
  script?: string | null;
  /** SLURM: the job's nodes (none in a dry run). */
  nodes?: { name: string; host: string; addr: string }[];
  /** Kubernetes: the fleet's namespace. */
  namespace?: string;
  /** The island's router (`.../v1`); null without one, or in a dry run. */
  routerUrl: string | null;
  /** Every engine's URL (`.../v1`) in the planner's order. */
  adminUrls: string[];
  /** The role of each admin URL, position by position. */
  roles: Role[];
  /** Kubernetes: every engine pod with its DNS name, in node order. */
  pods?: { node: number; pod: string; host: string }[];
  /** Kubernetes: the Mooncake master's RPC address and metadata URL, when the island has a store. */
  mooncake?: { master: string; metadata: string } | null;
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
  parts(island: IslandPlan, outputs: pulumi.Input<PartOutputs>, dependsOn?: pulumi.Resource): IslandParts;
}

/** Deploys one island under `parent`; the output resolves once the island serves. */
export type IslandDeployer<Context extends IslandContext> = (
  parent: pulumi.ComponentResource,
  plan: DeploymentPlan,
  island: IslandPlan,
  ctx: Context,
) => pulumi.Output<IslandOutputs>;

/** One file `plan --out` writes: its path under the output directory, its text and mode. */
export interface PlanOutFile {
  path: string;
  text: string;
  mode?: number;
}

export interface Backend<Context extends IslandContext> {
  deployIsland: IslandDeployer<Context>;
  /** What `plan --out` writes besides plan.json: everything `pulumi up` would submit, for people to read. */
  planOut(plan: DeploymentPlan): PlanOutFile[];
}
