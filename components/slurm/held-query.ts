import { LedgerLines, type HeldJob, type IslandHeld, type UnseenJob } from "../host/held-time";
import type { IslandJobRef } from "../host/job-report";
import { shq } from "../shell";
import { renderTemplate } from "../templates";
import { jobPhase } from "./scheduler";
import { slurmSeconds } from "./time-format";

/**
 * `fleet cost` on SLURM (templates/slurm/cost-query.sh.mustache): every job an island has had and
 * how long each held how many GPUs, from sacct (Start, ElapsedRaw, AllocTRES), or from scontrol
 * (StartTime, RunTime, TRES / TresPerNode x NumNodes) for a job sacct does not know (a cluster
 * without accounting; scontrol forgets a job MinJobAge after it ends).
 */
export function heldQueryScript(refs: IslandJobRef[]): string {
  // A co-scheduled island is its component of each heterogeneous job (<leader>+<offset>): its own
  // allocation and time, as sacct and scontrol keep them per component.
  const islands = refs
    .filter((r) => r.jobName && r.islandDir)
    .map((r) => ({
      island: r.island,
      jobName: shq(r.jobName!),
      islandDir: shq(r.islandDir!),
      ...(r.component !== undefined && { component: String(r.component) }),
    }));
  return renderTemplate("slurm/cost-query.sh.mustache", { islands });
}

/** `gres/gpu=N` of a TRES list (sacct AllocTRES, scontrol TRES): the untyped total; undefined without one. */
export function tresGpus(tres: string): number | undefined {
  const m = /(?:^|,)gres\/gpu=(\d+)(?:,|$)/.exec(tres);
  return m ? Number(m[1]) : undefined;
}

interface Seen {
  start: number | null;
  elapsed: number;
  running: boolean;
  gpus?: number;
  gpuSource?: string;
  seenBy: string;
}

function fromSacct(rest: string[]): Seen {
  const [start, elapsed, tres, , state] = rest;
  const gpus = tresGpus(tres ?? "");
  return {
    start: start ? Number(start) : null,
    elapsed: Number(elapsed) || 0,
    running: jobPhase(state?.split(" ")[0] ?? null) === "running",
    ...(gpus !== undefined && { gpus, gpuSource: "sacct AllocTRES gres/gpu" }),
    seenBy: "sacct",
  };
}

function fromScontrol(rest: string[]): Seen {
  const [start, ...line] = rest;
  const f: Record<string, string> = {};
  for (const m of line.join("\t").matchAll(/(?:^|\s)([A-Za-z/:]+)=(\S*)/g)) if (!(m[1] in f)) f[m[1]] = m[2];
  let gpus = tresGpus(f.TRES ?? "");
  let gpuSource = "scontrol TRES gres/gpu";
  const perNode = /(?:^|,)gres[:/]gpu[:=](\d+)(?:,|$)/.exec(f.TresPerNode ?? "");
  if (gpus === undefined && perNode && Number(f.NumNodes) > 0) {
    gpus = Number(perNode[1]) * Number(f.NumNodes);
    gpuSource = "scontrol TresPerNode x NumNodes";
  }
  const phase = jobPhase(f.JobState ?? null);
  return {
    start: start && phase !== "queued" ? Number(start) : null,
    elapsed: slurmSeconds(f.RunTime ?? "") ?? 0,
    running: phase === "running",
    ...(gpus !== undefined && { gpus, gpuSource }),
    seenBy: "scontrol",
  };
}

/**
 * Parses heldQueryScript's records. Throws when squeue failed for an island or an island printed
 * nothing: the jobs it had were not seen. A job neither sacct nor scontrol knows is unseen, with why.
 */
export function parseHeldReport(text: string, refs: IslandJobRef[]): IslandHeld[] {
  const jobs = new Map<number, { id: string; current: boolean }[]>();
  const answered = new Set<number>();
  const failures: string[] = [];
  const seen = new Map<string, Seen>();
  const ledgers = new LedgerLines();
  let noSacct = "sacct printed nothing for it";
  for (const line of text.split("\n")) {
    const [kind, a, ...rest] = line.split("\t");
    if (kind === "island") answered.add(Number(a));
    else if (kind === "error") failures.push(`island ${a}: ${rest.join(" ")}`);
    else if (kind === "job")
      jobs.set(Number(a), [...(jobs.get(Number(a)) ?? []), { id: rest[0], current: rest[1] === "current" }]);
    else if (kind === "ledger") ledgers.add(Number(a), rest[0], rest.slice(1).join("\t"));
    else if (kind === "sacct") seen.set(a, fromSacct(rest));
    else if (kind === "scontrol") seen.set(a, fromScontrol(rest));
    else if (kind === "nosacct") noSacct = `sacct did not answer (${a || "no message"})`;
  }
  if (failures.length)
    throw new Error(`the scheduler did not answer, so no hours are reported: ${failures.join("; ")}`);
  const missing = refs.filter((r) => !answered.has(r.island)).map((r) => r.island);
  if (missing.length)
    throw new Error(`the login node printed nothing for island(s) ${missing.join(", ")}, so no hours are reported`);
  return refs.map((ref) => {
    const held: HeldJob[] = [];
    const unseen: UnseenJob[] = [];
    for (const { id, current } of jobs.get(ref.island) ?? []) {
      const s = seen.get(id);
      if (!s) {
        unseen.push({ id, current, why: `${noSacct}, and scontrol no longer knows job ${id}` });
        continue;
      }
      held.push({
        id,
        current,
        running: s.running,
        start: s.start,
        elapsed: s.elapsed,
        gpus: s.gpus ?? ref.gpus ?? 0,
        gpuSource: s.gpuSource ?? `the plan (${s.seenBy} counts no GPUs on this cluster)`,
        seenBy: s.seenBy,
        activity: ledgers.of(ref.island, id),
      });
    }
    return { island: ref.island, jobs: held, unseen };
  });
}
