/**
 * Co-scheduling (`slurm.co_schedule`): every island of every service of a stack as ONE heterogeneous
 * SLURM job, one `#SBATCH hetjob` component per island, each with its own service's directives.
 * SLURM starts it only once every component is allocated, and the first component to end ends it.
 * Pure: the SlurmJob component (slurm-job.ts) runs what this renders (deploy side: island.ts).
 */
import { z } from "zod";
import type { ServiceIsland } from "../backend";
import { SECRETS, secretOrder, type SecretName } from "../credentials";
import type { StackPlan } from "../plan/stack-plan";
import { dryRunLine, islandResultSchema, parseResultLine, resultTemplate, TOKENS } from "../host/island-result";
import { apiKeyFileIn, probeView, readinessProbes, RESULT_TOKENS, STDERR_LINE_BOUND } from "../host/readiness";
import { scriptHash } from "../host/script-hash";
import { weightsRecordView } from "../host/weights-record";
import { heredocDelimiter, shq } from "../shell";
import { renderOneLine, renderTemplate } from "../templates";
import { jobCommands, type IslandJob } from "./island-job";
import { directives, fleetDir, islandDir, jobBase, jobName, srunView } from "./sbatch";
import { secretsDir } from "./secret-files";
import { slurmSettings } from "./settings";

/** The co-scheduled job's result line: every member island's result (island-result.ts), in component order. */
export const HETJOB_FORMAT = "vllm-fleet/hetjob/v1";

/** Stands bare for the islands' results inside the group's result template. */
const ISLANDS_TOKEN = "__FLEET_ISLANDS__";

export const hetjobResultSchema = z.discriminatedUnion("dryRun", [
  z.object({
    format: z.literal(HETJOB_FORMAT),
    dryRun: z.literal(false),
    stack: z.string(),
    jobName: z.string(),
    jobId: z.string().regex(/^\d+$/),
    islands: z.array(islandResultSchema).min(1),
  }),
  z.object({
    format: z.literal(HETJOB_FORMAT),
    dryRun: z.literal(true),
    stack: z.string(),
    jobName: z.string(),
    script: z.string(),
    islands: z.array(islandResultSchema).min(1),
  }),
]);
export type HetjobResult = z.infer<typeof hetjobResultSchema>;

/**
 * The islands SLURM deploys together: all of them, as one group, when the services ask for
 * co-scheduling (each service's `slurm.co_schedule` is resolved: true by default with several
 * services) and there are two islands or more in all; else none (one job per island).
 */
export function coScheduledGroups(stack: StackPlan): ServiceIsland[][] {
  const members = stack.services.flatMap((plan) => plan.islands.map((island) => ({ plan, island })));
  const co = stack.services.every((p) => p.settings.kind === "slurm" && p.settings.co_schedule === true);
  return co && members.length > 1 ? [members] : [];
}

/** The co-scheduled job's unique name: the first service's job base + `-cosched` (island jobs end in -i<k>). */
export const hetjobName = (members: ServiceIsland[]): string => `${jobBase(members[0].plan)}-cosched`;

/** Its folder: the script, batch output, job_id and secrets, beside the islands' own folders. */
export const hetjobDir = (members: ServiceIsland[]): string =>
  `${fleetDir(members[0].plan).replace(/\/+$/, "")}/cosched`;

/** Each member's SLURM job id in outputs and `fleet status`: the leader's id + the component offset, as squeue prints it. */
export const componentJobId = (leader: string, offset: number): string => `${leader}+${offset}`;

/**
 * Where the fleet CLI finds each co-scheduled island's job (scheduler.ts IslandJobRef): the group's
 * name, the island's own folder and its component offset, keyed `<service>/<island>`. Empty when
 * the stack is not co-scheduled.
 */
export function coScheduledPlacements(stack: StackPlan): Map<string, CoScheduledPlacement> {
  const out = new Map<string, CoScheduledPlacement>();
  for (const members of coScheduledGroups(stack))
    members.forEach(({ plan, island }, k) =>
      out.set(`${plan.service ?? ""}/${island.index}`, {
        jobName: hetjobName(members),
        islandDir: islandDir(plan, island),
        jobDir: hetjobDir(members),
        component: k,
        nodeCount: island.nodes.length,
      }),
    );
  return out;
}

export interface CoScheduledPlacement {
  jobName: string;
  islandDir: string;
  /** Where the batch output is: the group's folder. */
  jobDir: string;
  component: number;
  nodeCount: number;
}

/** The heterogeneous sbatch script: one component per member, then one background srun per component. */
export function renderHetjobScript(members: ServiceIsland[], configuredSecrets: readonly SecretName[] = []): string {
  const secrets = secretOrder(configuredSecrets);
  const name = hetjobName(members);
  const dir = hetjobDir(members);
  const components = members.map(({ plan, island }, k) => {
    slurmSettings(plan, "renderHetjobScript");
    return {
      index: k,
      separator: k > 0,
      island: shq(island.name),
      // Only the first component's --output counts: the batch script runs in it.
      directives: directives(plan, island, { jobName: name, output: k === 0 ? `${dir}/slurm-%j.out` : null }),
      ...srunView(plan, island, secrets).view,
    };
  });
  return renderTemplate("slurm/hetjob.sbatch.mustache", {
    stack: members[0].plan.stack,
    summary: members
      .map(({ plan, island }) => `${island.name} (${island.nodes.length} node(s), model ${plan.model})`)
      .join(", ")
      .replace(/\n/g, " "),
    components,
    groupDir: shq(dir),
    secretFiles: secrets.map((s) => SECRETS[s].file),
    hasSecrets: secrets.length > 0,
  });
}

/** The group's result line with tokens for the job id and the islands' results (filled in by result.sh). */
function groupTemplate(members: ServiceIsland[], name: string): string {
  const doc = {
    format: HETJOB_FORMAT,
    dryRun: false,
    stack: members[0].plan.stack,
    jobName: name,
    jobId: TOKENS.jobId,
    islands: ISLANDS_TOKEN,
  };
  return JSON.stringify(doc).replace(JSON.stringify(ISLANDS_TOKEN), `[${ISLANDS_TOKEN}]`);
}

/** The create template of a co-scheduled job (its partials under templates/slurm/hetjob/ and the shared ones). */
const HETJOB_CREATE_TEMPLATE = "slurm/hetjob/create.sh.mustache";

/** The create script's view (every value shell-quoted), the script's hash and the larger of the members' timeouts. */
export function hetjobCreateView(members: ServiceIsland[], secrets: readonly SecretName[] = []) {
  if (members.length < 2) throw new Error("internal error: a co-scheduled job has two islands or more");
  const name = hetjobName(members);
  const dir = hetjobDir(members);
  const script = renderHetjobScript(members, secrets);
  const hash = scriptHash(name, script);
  const scriptName = `${name}.sbatch`;
  const settings = members.map((m) => slurmSettings(m.plan, "renderHetjob"));
  // The job waits for its slowest component and its slowest island.
  const pending = Math.max(...settings.map((t) => t.pending_timeout));
  const ready = Math.max(...settings.map((t) => t.ready_timeout));
  const dryRun = members[0].plan.dryRun;
  // Node k of member m is hosts[first[m] + k] on the login node: its probes' URLs say so.
  const offsets = members.map((_, m) => members.slice(0, m).reduce((s, x) => s + x.island.nodes.length, 0));
  const probes = members.flatMap(({ plan, island }, m) =>
    readinessProbes(island, plan.model, islandDir(plan, island)).map((p) =>
      probeView(p, `${island.name}:${p.name}`, offsets[m]),
    ),
  );
  const islands = members.map(({ plan, island }, k) => ({
    index: k,
    name: shq(island.name),
    dir: shq(islandDir(plan, island)),
    alone: shq(jobName(plan, island.index)),
    nodeCount: island.nodes.length,
    resultTemplate: shq(resultTemplate(plan, island, name)),
  }));
  const dryRunIslands = members.map(({ plan, island }) =>
    JSON.parse(dryRunLine(plan, island, name, `${dir}/${scriptName}`)),
  );
  const view = {
    jobName: shq(name),
    islandDir: shq(dir),
    scriptName: shq(scriptName),
    comment: shq(`vllm-fleet:${hash}`),
    nodeCount: offsets[offsets.length - 1] + members[members.length - 1].island.nodes.length,
    pendingTimeout: pending,
    readyTimeout: ready,
    pendingTimeoutKey: "slurm.pending_timeout",
    readyTimeoutKey: "slurm.ready_timeout",
    script: script.trimEnd(),
    scriptDelimiter: heredocDelimiter("FLEET_SCRIPT", script),
    dryRun,
    dryRunLine: shq(
      JSON.stringify({
        format: HETJOB_FORMAT,
        dryRun: true,
        stack: members[0].plan.stack,
        jobName: name,
        script: `${dir}/${scriptName}`,
        islands: dryRunIslands,
      }),
    ),
    islands,
    probes,
    weightRecords: members.map(({ plan, island }) => weightsRecordView(plan, islandDir(plan, island))),
    apiKeyFile: apiKeyFileIn(secrets, secretsDir(dir)),
    tokens: RESULT_TOKENS,
    lineBound: STDERR_LINE_BOUND,
    groupTemplate: shq(groupTemplate(members, name)),
    islandsToken: ISLANDS_TOKEN,
    // helpers.sh takes its job_state and show_logs from slurm/hetjob/components.sh.
    cosched: true,
  };
  return { view, scriptHash: hash, pending, ready };
}

/** The create and delete commands of the co-scheduled job, in an island job's shape (SlurmJob runs either). */
export function renderHetjob(members: ServiceIsland[], secrets: readonly SecretName[] = [], generation = 0): IslandJob {
  const { view, scriptHash: hash, pending, ready } = hetjobCreateView(members, secrets);
  const name = hetjobName(members);
  const dir = hetjobDir(members);
  const dryRun = members[0].plan.dryRun;
  const stdin = renderTemplate(HETJOB_CREATE_TEMPLATE, { ...view, generation });
  const del = renderOneLine("slurm/hetjob/delete.sh.mustache", {
    jobName: shq(name),
    dirs: [dir, ...members.map(({ plan, island }) => islandDir(plan, island))].map(shq),
    lineBound: STDERR_LINE_BOUND,
  });
  return jobCommands({
    jobName: name,
    islandDir: dir,
    stdin,
    deleteLine: del,
    scriptHash: hash,
    dryRun,
    pendingTimeout: pending,
    readyTimeout: ready,
  });
}

/** Reads the co-scheduled create's stdout: its last non-empty line, HETJOB_FORMAT. */
export const parseHetjobResult = (stdout: string): HetjobResult =>
  parseResultLine(stdout, hetjobResultSchema, "the co-scheduled job's");
