import { createHash } from "node:crypto";
import * as pulumi from "@pulumi/pulumi";
import type { BaseIslandOutputs, IslandContext, IslandDeployer, PartOutputs } from "../backend";
import type { SecretName } from "../credentials";
import type { IslandResult } from "../host/island-result";
import { islandName } from "../plan/naming";
import { renderLocalRun, secretEnvironment } from "./island-run";
import { LocalIslandRun } from "./local-run";
import { generationIn, type Presence } from "../host/presence";
import { runName } from "./names";

/** A local island in the `islands` stack output: the common URLs and its run. */
export interface LocalIslandOutputs extends BaseIslandOutputs {
  /** The run's unique name. */
  runName: string;
  /** The supervisor's pid; null in a dry run. */
  pid: string | null;
  dryRun: boolean;
  /** Where a dry run left the script. */
  script: string | null;
}

function islandOutputs(r: IslandResult): LocalIslandOutputs {
  const common = { island: r.island, runName: r.jobName, dryRun: r.dryRun };
  return r.dryRun
    ? { ...common, pid: null, script: r.script, routerUrl: null, adminUrls: [], roles: [] }
    : { ...common, pid: r.jobId, script: null, routerUrl: r.routerUrl, adminUrls: r.adminUrls, roles: r.roles };
}

const partOutputs = (r: IslandResult): PartOutputs =>
  r.dryRun
    ? { routerUrl: null, engines: [], mooncake: null }
    : { routerUrl: r.routerUrl, engines: r.engines, mooncake: r.mooncake };

export interface LocalIslandContext extends IslandContext {
  /** What this machine said of each run before planning, by run name (presence.ts). */
  presence: pulumi.Output<Record<string, Presence>>;
}

/** One island on this machine: one run, and the logical parts it runs, whose outputs come from its result line. */
export const deployLocalIsland: IslandDeployer<LocalIslandContext, LocalIslandOutputs> = (
  parent,
  plan,
  island,
  ctx,
) => {
  // A dry run starts nothing, so it gets no credential.
  const names = plan.dryRun ? [] : (Object.keys(ctx.secrets) as SecretName[]);
  const values = pulumi.all(
    Object.fromEntries(names.map((n) => [n, ctx.secrets[n]!])) as Record<string, pulumi.Output<string>>,
  );
  const environment = values.apply((v) => secretEnvironment(v, ctx.secretKey));
  const secrets = names.length
    ? {
        environment,
        fingerprint: environment.apply((env) => createHash("sha256").update(JSON.stringify(env)).digest("hex")),
      }
    : undefined;
  const run = new LocalIslandRun(
    islandName(ctx.name, plan.service, island.index),
    {
      run: (g) => renderLocalRun(plan, island, names, g),
      generation: ctx.presence.apply((seen) => generationIn(seen, runName(plan, island.index))),
      secrets,
    },
    { parent },
  );
  ctx.parts(plan, island, run.result.apply(partOutputs), run);
  return run.result.apply(islandOutputs);
};
