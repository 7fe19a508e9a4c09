import { createHash } from "node:crypto";
import type * as command from "@pulumi/command";
import * as pulumi from "@pulumi/pulumi";
import type { BaseIslandOutputs, IslandContext, IslandDeployer, PartOutputs } from "../backend";
import type { SecretName } from "../credentials";
import { renderIslandJob } from "./island-job";
import type { IslandResult } from "../host/island-result";
import { renderSecretFiles, secretFilesPayload } from "./secret-files";
import { SlurmJob } from "./slurm-job";
import { slurmJobResourceName } from "./urn";

export interface SlurmIslandContext extends IslandContext {
  /** The login node. */
  connection: pulumi.Input<command.types.input.remote.ConnectionArgs>;
}

/** A SLURM island in the `islands` stack output: the common URLs and its job. */
export interface SlurmIslandOutputs extends BaseIslandOutputs {
  /** The job's unique name. */
  jobName: string;
  /** The job id; null in a dry run. */
  jobId: string | null;
  /** A dry run submitted nothing. */
  dryRun: boolean;
  /** Where a dry run left the script. */
  script: string | null;
  /** The job's nodes (none in a dry run). */
  nodes: { name: string; host: string; addr: string }[];
}

function islandOutputs(r: IslandResult): SlurmIslandOutputs {
  if (r.dryRun)
    return {
      island: r.island,
      jobName: r.jobName,
      jobId: null,
      dryRun: true,
      script: r.script,
      nodes: [],
      routerUrl: null,
      adminUrls: [],
      roles: [],
    };
  return {
    island: r.island,
    jobName: r.jobName,
    jobId: r.jobId,
    dryRun: false,
    script: null,
    nodes: r.nodes,
    routerUrl: r.routerUrl,
    adminUrls: r.adminUrls,
    roles: r.roles,
  };
}

const partOutputs = (r: IslandResult): PartOutputs =>
  r.dryRun
    ? { routerUrl: null, engines: [], mooncake: null }
    : { routerUrl: r.routerUrl, engines: r.engines, mooncake: r.mooncake };

/**
 * One island on SLURM: one job (plus the command that writes its credentials' files), and the
 * logical parts it runs (router, replicas or a prefill/decode group, Mooncake store), whose
 * outputs come from that job's result line.
 */
export const deploySlurmIsland: IslandDeployer<SlurmIslandContext, SlurmIslandOutputs> = (
  parent,
  plan,
  island,
  ctx,
) => {
  const base = slurmJobResourceName(ctx.name, island.index, plan.service);
  const { secrets } = ctx;
  // A dry run starts no engine, so it puts no credential on the cluster.
  const names = plan.dryRun ? [] : (Object.keys(secrets) as SecretName[]);
  const values = pulumi.all(
    Object.fromEntries(names.map((n) => [n, secrets[n]!])) as Record<string, pulumi.Output<string>>,
  );
  const payload = values.apply((v) => secretFilesPayload(v, ctx.secretKey));
  const files = names.length
    ? {
        files: renderSecretFiles(plan, island, names),
        payload,
        fingerprint: payload.apply((p) => createHash("sha256").update(p).digest("hex")),
      }
    : undefined;
  const job = new SlurmJob(
    base,
    { connection: ctx.connection, job: renderIslandJob(plan, island, names), secrets: files },
    { parent },
  );
  // The parts exist once the job runs them.
  ctx.parts(plan, island, job.result.apply(partOutputs), job);
  return job.result.apply(islandOutputs);
};
