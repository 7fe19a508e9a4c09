import type * as command from "@pulumi/command";
import * as pulumi from "@pulumi/pulumi";
import type { DeploymentPlan, IslandPlan, Role } from "../plan/types";
import { renderIslandJob } from "../render/island-job";
import type { IslandResult } from "../report/island-result";
import { SlurmJob } from "../slurm/slurm-job";
import { MooncakeStore, PrefillDecodeGroup, Router, VllmReplica, type EngineEndpoint } from "./parts";

export interface InferenceDeploymentArgs {
  plan: DeploymentPlan;
  /** The SLURM login node. */
  connection: pulumi.Input<command.types.input.remote.ConnectionArgs>;
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
 * A whole fleet: per island one SLURM job plus the logical parts it runs (router, replicas or a
 * prefill/decode group, Mooncake store), whose outputs come from that job's result line.
 */
export class InferenceDeployment extends pulumi.ComponentResource {
  public readonly islands: pulumi.Output<IslandOutputs[]>;
  public readonly jobs: SlurmJob[];

  constructor(name: string, args: InferenceDeploymentArgs, opts?: pulumi.ComponentResourceOptions) {
    super("vllm-fleet:fleet:InferenceDeployment", name, {}, opts);
    const { plan } = args;
    if (plan.target !== "slurm") throw new Error(`InferenceDeployment runs SLURM fleets; this stack targets ${plan.target}`);
    this.jobs = plan.islands.map((island) => this.island(name, island, args));
    this.islands = pulumi.all(this.jobs.map((j) => j.result)).apply((rs) => rs.map(islandOutputs));
    this.registerOutputs({ islands: this.islands });
  }

  private island(name: string, island: IslandPlan, args: InferenceDeploymentArgs): SlurmJob {
    const base = `${name}-i${island.index}`;
    const job = new SlurmJob(base, { connection: args.connection, job: renderIslandJob(args.plan, island) }, { parent: this });
    // The parts exist once the job runs them.
    const part = { parent: this, dependsOn: job };
    const engines = job.result.apply(engineEndpoints);
    if (island.router) new Router(`${base}-router`, { kind: island.router.kind, url: job.result.apply((r) => (r.dryRun ? null : r.routerUrl)) }, part);
    if (args.plan.shape === "disaggregated") {
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
