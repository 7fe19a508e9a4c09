import { LedgerLines, type HeldJob, type IslandHeld, type UnseenJob } from "../host/held-time";
import type { IslandJobRef } from "../host/job-report";
import { shq } from "../shell";
import { renderTemplate } from "../templates";

/** The supervisor's record of its run's start and end (`<start epoch> <end epoch>`), in the run's folder. */
export const RUN_ENDED_FILE = "ended";

/**
 * `fleet cost` on this machine (templates/local/cost-query.sh.mustache): the island's run from its
 * run record, started at the supervisor's kernel start time and held until now while it lives, x the
 * plan's GPUs (local.device = "cpu" holds none). A run that ended, now or earlier, counts from its
 * supervisor's own end record (RUN_ENDED_FILE); one without (killed by SIGKILL, or run before the
 * record existed) is reported as not accounted, never estimated.
 */
export function localHeldQueryScript(refs: IslandJobRef[]): string {
  const islands = refs.filter((r) => r.islandDir).map((r) => ({ island: r.island, islandDir: shq(r.islandDir!) }));
  return renderTemplate("local/cost-query.sh.mustache", { islands, endedFile: RUN_ENDED_FILE });
}

export function parseLocalHeldReport(text: string, refs: IslandJobRef[]): IslandHeld[] {
  const answered = new Set<number>();
  const runs = new Map<number, { id: string; ticks: number; running: boolean }>();
  const past = new Map<number, string[]>();
  const ended = new Map<string, { start: number; end: number }>();
  const ledgers = new LedgerLines();
  let clock: { now: number; btime: number; ticks: number } | undefined;
  for (const line of text.split("\n")) {
    const [kind, a, ...rest] = line.split("\t");
    if (kind === "error") throw new Error(`${rest.join(" ")}, so no hours are reported`);
    if (kind === "clock") clock = { now: Number(a), btime: Number(rest[0]), ticks: Number(rest[1]) };
    else if (kind === "island") answered.add(Number(a));
    else if (kind === "run")
      runs.set(Number(a), { id: rest[0], ticks: Number(rest[1]), running: rest[2] === "RUNNING" });
    else if (kind === "past") past.set(Number(a), [...(past.get(Number(a)) ?? []), rest[0]]);
    else if (kind === "ledger") ledgers.add(Number(a), rest[0], rest.slice(1).join("\t"));
    else if (kind === "ended" && Number(rest[2]) >= Number(rest[1]) && Number(rest[1]) > 0)
      ended.set(`${a}\t${rest[0]}`, { start: Number(rest[1]), end: Number(rest[2]) });
  }
  const missing = refs.filter((r) => !answered.has(r.island)).map((r) => r.island);
  if (!clock || missing.length)
    throw new Error(
      `could not read the run records of island(s) ${missing.join(", ") || "all"}, so no hours are reported`,
    );
  const { now, btime, ticks } = clock;
  return refs.map((ref) => {
    const jobs: HeldJob[] = [];
    const unseen: UnseenJob[] = [];
    // An ended run, with the supervisor's own record of its end, or not accounted.
    const over = (id: string, current: boolean, why: string): void => {
      const rec = ended.get(`${ref.island}\t${id}`);
      if (!rec) {
        unseen.push({ id, current, why });
        return;
      }
      jobs.push({
        id,
        current,
        running: false,
        start: rec.start,
        elapsed: rec.end - rec.start,
        gpus: ref.gpus ?? 0,
        gpuSource: "the plan",
        seenBy: "the run's own end record",
        activity: ledgers.of(ref.island, id),
      });
    };
    for (const id of past.get(ref.island) ?? [])
      over(id, false, "an earlier run: when it ended was not recorded (its supervisor was killed)");
    const run = runs.get(ref.island);
    if (run && !run.running)
      over(run.id, true, "the run has ended: when it ended was not recorded (its supervisor was killed)");
    else if (run) {
      const start = btime + run.ticks / ticks;
      jobs.push({
        id: run.id,
        current: true,
        running: true,
        start,
        elapsed: Math.max(0, now - start),
        gpus: ref.gpus ?? 0,
        gpuSource: "the plan",
        seenBy: "the run record and /proc",
        activity: ledgers.of(ref.island, run.id),
      });
    }
    return { island: ref.island, jobs, unseen };
  });
}
