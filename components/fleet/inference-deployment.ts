import { createHash } from "node:crypto";
import type * as command from "@pulumi/command";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { KubernetesTarget } from "../config/types";
import { kubernetesIsland } from "../kubernetes/island";
import type { DeploymentPlan, IslandPlan, Role } from "../plan/deployment-plan";
import { renderIslandJob } from "../slurm/island-job";
import { renderK8sFleet, type K8sIslandEndpoints } from "../kubernetes/fleet-objects";
import { SECRET_KEYS } from "../kubernetes/objects";
import { renderSecretFiles, secretFilesPayload } from "../slurm/secret-files";
import type { SecretName } from "../credentials";
import type { IslandResult } from "../slurm/island-result";
import { SlurmJob } from "../slurm/slurm-job";
import { MooncakeStore, PrefillDecodeGroup, Router, VllmReplica, type EngineEndpoint } from "./parts";

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

/** What one island hands to trainers: the same fields as `planned`, with real hosts. */
export interface IslandOutputs {
  island: number;
  jobName: string;
  jobId: string | null;
  dryRun: boolean;
  /** Where a dry run left the script. */
  script: string | null;
  nodes: { name: string; host: string; addr: string }[];
  routerUrl: string | null;
  adminUrls: string[];
  roles: Role[];
}

function islandOutputs(r: IslandResult): IslandOutputs {
  if (r.dryRun) return { island: r.island, jobName: r.jobName, jobId: null, dryRun: true, script: r.script, nodes: [], routerUrl: null, adminUrls: [], roles: [] };
  return { island: r.island, jobName: r.jobName, jobId: r.jobId, dryRun: false, script: null, nodes: r.nodes, routerUrl: r.routerUrl, adminUrls: r.adminUrls, roles: r.roles };
}

const engineEndpoints = (r: IslandResult): (EngineEndpoint & { replica: number })[] => (r.dryRun ? [] : r.engines);
const endpoint = ({ id, role, url }: EngineEndpoint): EngineEndpoint => ({ id, role, url });

/**
 * A whole fleet. On SLURM: per island one job plus the logical parts it runs (router, replicas or
 * a prefill/decode group, Mooncake store), whose outputs come from that job's result line. On
 * Kubernetes: per island the same parts, each owning its workloads, with in-cluster URLs.
 */
export class InferenceDeployment extends pulumi.ComponentResource {
  public readonly islands: pulumi.Output<(IslandOutputs | K8sIslandEndpoints)[]>;
  public readonly jobs: SlurmJob[] = [];

  constructor(name: string, args: InferenceDeploymentArgs, opts?: pulumi.ComponentResourceOptions) {
    super("vllm-fleet:fleet:InferenceDeployment", name, {}, opts);
    const { plan } = args;
    const secrets = Object.fromEntries(Object.entries(args.secrets ?? {}).filter(([, v]) => v !== undefined)) as Partial<Record<SecretName, pulumi.Output<string>>>;
    if (plan.target === "slurm") {
      if (!args.connection) throw new Error("a SLURM fleet needs the login node connection");
      const connection = args.connection;
      const secretKey = args.secretKey ?? ((n: SecretName) => n);
      this.jobs = plan.islands.map((island) => this.slurmIsland(name, island, plan, connection, secrets, secretKey));
      this.islands = pulumi.all(this.jobs.map((j) => j.result)).apply((rs) => rs.map(islandOutputs));
    } else {
      if (!args.kubernetes) throw new Error("a Kubernetes fleet needs a provider");
      this.islands = this.kubernetesFleet(name, plan, args.kubernetes.provider, secrets);
    }
    this.registerOutputs({ islands: this.islands });
  }

  private kubernetesFleet(name: string, plan: DeploymentPlan, provider: k8s.Provider, secrets: Partial<Record<SecretName, pulumi.Output<string>>>) {
    const configured = Object.keys(secrets) as SecretName[];
    const fleet = renderK8sFleet(plan, configured);
    // The only object that holds credentials; every pod reads them through secretKeyRef.
    const secret = fleet.secret
      ? new k8s.core.v1.Secret(fleet.secret.metadata.name, { ...fleet.secret, stringData: Object.fromEntries(configured.map((k) => [SECRET_KEYS[k], pulumi.secret(secrets[k]!)])) }, { parent: this, provider })
      : undefined;
    const startupTimeout = (plan.config.target as KubernetesTarget).startup_timeout;
    return pulumi.all(fleet.islands.map((objects) => kubernetesIsland(name, this, { plan: plan.islands[objects.island], disaggregated: plan.shape === "disaggregated", objects, provider, startupTimeout, secret })));
  }

  private slurmIsland(
    name: string,
    island: IslandPlan,
    plan: DeploymentPlan,
    connection: pulumi.Input<command.types.input.remote.ConnectionArgs>,
    secrets: Partial<Record<SecretName, pulumi.Output<string>>>,
    secretKey: (name: SecretName) => string,
  ): SlurmJob {
    const base = `${name}-i${island.index}`;
    // A dry run starts no engine, so it puts no credential on the cluster.
    const names = plan.config.dry_run ? [] : (Object.keys(secrets) as SecretName[]);
    const values = pulumi.all(Object.fromEntries(names.map((n) => [n, secrets[n]!])) as Record<string, pulumi.Output<string>>);
    const payload = values.apply((v) => secretFilesPayload(v, secretKey));
    const files = names.length
      ? { files: renderSecretFiles(plan, island, names), payload, fingerprint: payload.apply((p) => createHash("sha256").update(p).digest("hex")) }
      : undefined;
    const job = new SlurmJob(base, { connection, job: renderIslandJob(plan, island, names), secrets: files }, { parent: this });
    // The parts exist once the job runs them.
    const part = { parent: this, dependsOn: job };
    const engines = job.result.apply(engineEndpoints);
    if (island.router) new Router(`${base}-router`, { kind: island.router.kind, url: job.result.apply((r) => (r.dryRun ? null : r.routerUrl)) }, part);
    if (plan.shape === "disaggregated") {
      new PrefillDecodeGroup(`${base}-pd`, { engines: engines.apply((es) => es.map(endpoint)) }, part);
    } else {
      const replicas = [...new Set(island.engines.map((e) => e.replica))];
      for (const r of replicas) {
        const mine = engines.apply((es) => es.filter((e) => e.replica === r).map(endpoint));
        new VllmReplica(`${base}-replica${r}`, { engines: mine }, part);
      }
    }
    if (island.mooncake) {
      new MooncakeStore(
        `${base}-mooncake`,
        { master: job.result.apply((r) => (r.dryRun ? null : r.mooncake?.master ?? null)), metadata: job.result.apply((r) => (r.dryRun ? null : r.mooncake?.metadata ?? null)) },
        part,
      );
    }
    return job;
  }
}
