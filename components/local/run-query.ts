import { emptyReport, readMarkerRecord, type IslandJobRef, type JobReport } from "../host/job-report";
import { IDLE_RELEASED_FILE } from "../host/activity-ledger";
import { shq } from "../shell";
import { renderTemplate } from "../templates";

/**
 * What `fleet status` and `fleet metrics` learn of each island's run on this machine, from its run
 * record (templates/local/run-query.sh.mustache): RUNNING while the recorded supervisor lives (pid
 * and start time), FAILED once it ended by itself (the first process that exited ends it; its exit
 * marker names it), and no job once `pulumi destroy` removed the record.
 */
export function runQueryScript(islands: IslandJobRef[]): string {
  const calls = islands
    .filter((i) => i.islandDir)
    .map((i) => ({ island: i.island, islandDir: shq(i.islandDir!), nodes: i.nodeCount ?? 1 }));
  return renderTemplate("local/run-query.sh.mustache", { islands: calls, markerFile: IDLE_RELEASED_FILE });
}

/** Parses runQueryScript's records; an island with none was not observed, and says so. */
export function parseRunReport(text: string, islands: number[]): Map<number, JobReport> {
  const reports = new Map<number, JobReport>(islands.map((k) => [k, emptyReport(k)]));

  const answered = new Set<number>();
  for (const line of text.split("\n")) {
    const [kind, k, ...rest] = line.split("\t");
    const r = reports.get(Number(k));
    if (!r) continue;
    if (kind === "none") answered.add(r.island);
    if (kind === "run") {
      answered.add(r.island);
      const [pid, state] = rest;
      // A run that ended by itself failed: nothing but `pulumi destroy` (which removes the record) stops one.
      Object.assign(r, { jobId: pid, state: state === "RUNNING" ? "RUNNING" : "FAILED", source: "run record" });
    } else if (kind === "node") {
      r.hosts.push(rest[0]);
      r.addrs.push(rest[1] ?? "");
    } else readMarkerRecord(kind, rest, r);
  }
  const unseen = islands.filter((k) => !answered.has(k));
  if (unseen.length)
    throw new Error(`could not read the run record of island(s) ${unseen.join(", ")}, so no state is reported`);
  return reports;
}
