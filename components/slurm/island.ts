import { createHash } from "node:crypto";
import type * as command from "@pulumi/command";
import * as pulumi from "@pulumi/pulumi";
import type { BaseIslandOutputs, GroupDeployer, IslandContext, IslandDeployer, PartOutputs } from "../backend";
import type { SecretName } from "../credentials";
import { renderIslandJob } from "./island-job";
import { parseIslandResult, type IslandResult } from "../host/island-result";
import { renderSecretFiles, renderSecretFilesIn, secretFilesPayload, type SecretFilesJob } from "./secret-files";
import { componentJobId, hetjobDir, hetjobName, parseHetjobResult, renderHetjob, type HetjobResult } from "./hetjob";
import { SlurmJob } from "./slurm-job";
import { coScheduledJobResourceName, slurmJobResourceName } from "./urn";
import { generationIn, type Presence } from "../host/presence";
import { jobName } from "./sbatch";

export interface SlurmIslandContext extends IslandContext {
  /** The login node. */
  connection: pulumi.Input<command.types.input.remote.ConnectionArgs>;
  /** What the login node said of each job before planning, by job name (island-presence.ts). */
  presence: pulumi.Output<Record<string, Presence>>;
}

/** A SLURM island in the `islands` stack output: the common URLs and its job. */
export interface SlurmIslandOutputs extends BaseIslandOutputs {
  /** The job's unique name. */
  jobName: string;
  /** The job id; null in a dry run. A co-scheduled island's is its component's, `<leader id>+<offset>` as squeue prints it. */
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

/** The configured credentials (none in a dry run: it starts no engine) and the command that writes their files. */
function secretFiles(ctx: SlurmIslandContext, dryRun: boolean, render: (names: SecretName[]) => SecretFilesJob) {
  const { secrets } = ctx;
  const names = dryRun ? [] : (Object.keys(secrets) as SecretName[]);
  const values = pulumi.all(
    Object.fromEntries(names.map((n) => [n, secrets[n]!])) as Record<string, pulumi.Output<string>>,
  );
  const payload = values.apply((v) => secretFilesPayload(v, ctx.secretKey));
  const files = names.length
    ? {
        files: render(names),
        payload,
        fingerprint: payload.apply((p) => createHash("sha256").update(p).digest("hex")),
      }
    : undefined;
  return { names, files };
}

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
  const { names, files } = secretFiles(ctx, plan.dryRun, (n) => renderSecretFiles(plan, island, n));
  const job = new SlurmJob(
    base,
    {
      connection: ctx.connection,
      job: (g) => renderIslandJob(plan, island, names, g),
      generation: ctx.presence.apply((seen) => generationIn(seen, jobName(plan, island.index))),
      secrets: files,
      parse: parseIslandResult,
    },
    { parent },
  );
  // The parts exist once the job runs them.
  ctx.parts(plan, island, job.result.apply(partOutputs), job);
  return job.result.apply(islandOutputs);
};

/**
 * Co-scheduled islands (hetjob.ts): ONE job of one component per island, with one secrets command
 * for all of them (their files sit in the job's folder), and each island's parts fed from its own
 * entry of the job's result line. Outputs in `members` order, each island's job id its component's.
 */
export const deploySlurmGroup: GroupDeployer<SlurmIslandContext, SlurmIslandOutputs> = (parent, members, ctx) => {
  const dryRun = members[0].plan.dryRun;
  const { names, files } = secretFiles(ctx, dryRun, (n) =>
    renderSecretFilesIn(hetjobName(members), hetjobDir(members), n),
  );
  const job = new SlurmJob<HetjobResult>(
    coScheduledJobResourceName(ctx.name),
    {
      connection: ctx.connection,
      job: (g) => renderHetjob(members, names, g),
      generation: ctx.presence.apply((seen) => generationIn(seen, hetjobName(members))),
      secrets: files,
      parse: parseHetjobResult,
    },
    { parent },
  );
  return members.map(({ plan, island }, k) => {
    const result = job.result.apply((r) => memberResult(r, k, members.length));
    ctx.parts(plan, island, result.apply(partOutputs), job);
    return result.apply((r) => {
      const out = islandOutputs(r);
      return r.dryRun ? out : { ...out, jobId: componentJobId(r.jobId, k) };
    });
  });
};

/** Member k's island result from the job's line, which must hold one per member. */
function memberResult(r: HetjobResult, k: number, count: number): IslandResult {
  if (r.islands.length !== count)
    throw new Error(`the co-scheduled job ${r.jobName} reported ${r.islands.length} island(s); it runs ${count}`);
  return r.islands[k];
}
