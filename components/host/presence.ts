import type { DeploymentPlan, IslandPlan } from "../plan/deployment-plan";
import type { StackPlan } from "../plan/stack-plan";
import { jobPhase, queryJobs, type JobQuery, type JobReport } from "./job-report";
import type { Shell } from "./shell";

/*
 * Whether an island's job (SLURM) or run (local) is still there, as `pulumi preview` and `pulumi up`
 * see it before they plan (docs/development.md, "Seeing a gone island"). @pulumi/command 1.2.1 has
 * no Read (provider/pkg/provider/remote/commandController.go and local/commandController.go
 * implement Create, Update and Delete only), so the program asks the host itself, with the query
 * `fleet status` runs, and hands the answer to the job's resource as its revival generation.
 */

/** What the program learned of one island's job before planning. */
export interface Presence {
  /** The revival generation the island's folder records (0: never brought back). */
  generation: number;
  /** The job was up once and is gone now, not by `pulumi destroy`: this run starts it again. */
  gone: boolean;
  /** Why it counts as gone, for the warning `pulumi preview` and `up` print (empty when not gone). */
  why: string;
}

/**
 * Reads a JobReport as presence: gone when the folder records a job (a job id, a run) that ended
 * or failed and no `pulumi destroy` ended it (its delete leaves `destroyed`, the next create
 * removes it). An island with no record was never started: not gone.
 */
export function presenceOf(r: JobReport): Presence {
  const base = { generation: r.generation, gone: false, why: "" };
  if (r.destroyed || r.source === "none") return base;
  const id = r.jobId ? ` ${r.jobId}` : "";
  if (r.source === "job_id file") return { ...base, gone: true, why: `its job${id} is no longer known to SLURM` };
  const phase = jobPhase(r.state);
  if (phase !== "ended" && phase !== "failed") return base;
  if (r.idleReleased) {
    const at = new Date(r.idleReleased.at * 1000).toISOString();
    return { ...base, gone: true, why: `it released itself at ${at} after idle_release_after without a request` };
  }
  const exits = r.exits.map((e) => `${e.name} on node ${e.node} exited ${e.code}`).join(", ");
  const reason = r.reason ? `, ${r.reason}` : "";
  const noun = r.source === "run record" ? "run" : "job";
  return { ...base, gone: true, why: `its ${noun}${id} ended (${r.state}${reason})${exits ? `: ${exits}` : ""}` };
}

/** The generation the island's job is created with: the recorded one, one more when it is gone. */
export const generationOf = (p: Presence): number => (p.gone ? p.generation + 1 : p.generation);

/**
 * The script hash a job's replacement trigger carries: the hash alone for an island never brought
 * back (so a fleet deployed before this existed keeps its state), with the generation after.
 */
export const triggerHash = (hash: string, generation: number): string =>
  generation > 0 ? `${hash} revival ${generation}` : hash;

/**
 * What a job's resource takes from its generation: the create's stdin (rendered again only for a
 * revival, whose create records it) and the trigger's hash. `first` is the render at generation 0.
 */
export function atGeneration<T extends { stdin: string; scriptHash: string }>(
  render: (generation: number) => T,
  first: T,
  generation: number,
): { stdin: string; hash: string } {
  return {
    stdin: generation === 0 ? first.stdin : render(generation).stdin,
    hash: triggerHash(first.scriptHash, generation),
  };
}

/** A job the program asks about: its unique name and the island folder its create writes. */
export interface PresenceJob {
  jobName: string;
  islandDir: string;
  nodeCount?: number;
}

/** Where a target places an island's job (its FleetSupport.island): its name, the island's folder, the job's own. */
export type JobPlacement = (
  stack: StackPlan,
  plan: DeploymentPlan,
  island: IslandPlan,
) => { jobName: string; islandDir: string; nodeCount: number; jobDir?: string };

/**
 * Every job a stack starts, once each (the islands of a co-scheduled job are one), except a dry
 * run's: its name and the folder its create writes (the job's own when the islands share one).
 */
export function stackJobs(stack: StackPlan, place: JobPlacement): PresenceJob[] {
  const jobs = new Map<string, PresenceJob>();
  for (const plan of stack.services)
    for (const island of plan.islands) {
      if (plan.dryRun) continue;
      const { jobName, islandDir, jobDir, nodeCount } = place(stack, plan, island);
      if (!jobs.has(jobName)) jobs.set(jobName, { jobName, islandDir: jobDir ?? islandDir, nodeCount });
    }
  return [...jobs.values()];
}

type Observer = (jobs: PresenceJob[]) => Promise<Record<string, Presence>>;
/** On globalThis, so a test's observer reaches the program it imports after vi.resetModules(). */
const TEST_OBSERVER = Symbol.for("vllm-fleet.presence.test-observer");
const testObserver = (): Observer | undefined => (globalThis as Record<symbol, Observer | undefined>)[TEST_OBSERVER];

/** Under Pulumi's mocks no host answers: a test says what each job's presence is (test/program-harness.ts). */
export function observeInTests(observer: Observer | undefined): void {
  (globalThis as Record<symbol, Observer | undefined>)[TEST_OBSERVER] = observer;
}

/**
 * Asks the host about every job in one round trip (the query `fleet status` runs) and reads each
 * answer as presence, by job name. A host that cannot answer is an error: planning on a guess
 * would miss a gone island, or bring back one that serves.
 */
export async function observePresence(
  shell: Shell,
  scheduler: JobQuery,
  jobs: PresenceJob[],
  warn: (message: string) => void,
): Promise<Record<string, Presence>> {
  const seen = await (testObserver() ?? ((j: PresenceJob[]) => ask(shell, scheduler, j)))(jobs);
  for (const [name, p] of Object.entries(seen)) if (p.gone) warn(goneWarning(name, p));
  return seen;
}

async function ask(shell: Shell, scheduler: JobQuery, jobs: PresenceJob[]): Promise<Record<string, Presence>> {
  if (jobs.length === 0) return {};
  try {
    const reports = await queryJobs(
      shell,
      scheduler,
      jobs.map((j, k) => ({ island: k, ...j })),
    );
    return Object.fromEntries(jobs.map((j, k) => [j.jobName, presenceOf(reports.get(k)!)]));
  } catch (e) {
    throw new Error(
      `pulumi preview and up first ask ${shell.describe} whether each island's job is still there, to start again one that is gone (docs/development.md, "Seeing a gone island"), and could not: ${(e as Error).message}`,
      { cause: e },
    );
  }
}

/** A job the host has no record of: never started, nothing to bring back. */
export const NEVER_STARTED: Presence = { generation: 0, gone: false, why: "" };

/** The generation `jobName` is created with, from what the program observed. */
export const generationIn = (seen: Record<string, Presence>, jobName: string): number =>
  generationOf(seen[jobName] ?? NEVER_STARTED);

/** The warning `pulumi preview` and `up` print for a gone job, which this run creates again. */
export const goneWarning = (jobName: string, p: Presence): string =>
  `${jobName}: ${p.why}; pulumi up creates it again (revival ${generationOf(p)}), leaving the islands that serve untouched`;
