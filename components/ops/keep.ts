/**
 * `fleet keep <stack>`: for the hours nobody watches. Each round asks the fleet what `fleet status`
 * asks; when an island's job or run is gone (the status report's `replace`: started, ended, not by
 * `pulumi destroy`), it runs the `pulumi up` that starts it again (host/presence.ts makes that up
 * replace exactly the gone islands), within a budget of ups per window, and logs what it saw and did.
 * Past the budget it gives up, saying so, rather than loop on an island that cannot start.
 */
import type { FleetStatusReport } from "./commands";

export interface KeepOptions {
  /** Seconds between checks. @default 60 */
  every: number;
  /** Ups allowed within `window` before the keeper gives up. @default 3 */
  maxUps: number;
  /** Seconds over which `maxUps` counts. @default 3600 */
  window: number;
  /** One check (and at most one up), then exit: for cron. @default false */
  once: boolean;
}

export const KEEP_DEFAULTS: KeepOptions = { every: 60, maxUps: 3, window: 3600, once: false };

/** What the keeper acts through: the status check, the up, the clock and its log. */
export interface KeepDeps {
  check(): Promise<FleetStatusReport>;
  /** Runs `pulumi up`; its exit status and the tail of its output. */
  up(): Promise<{ code: number; tail: string }>;
  log(line: string): void;
  sleep(seconds: number): Promise<void>;
  now(): number;
  /** Set once the keeper should stop (SIGINT, SIGTERM); checked between rounds. */
  stopped(): boolean;
}

/** How one island is gone, from the status report: its job and the scheduler's last word. */
function goneText(report: FleetStatusReport, islands: number[]): string {
  return islands
    .map((k) => {
      const i = report.islands.find((x) => x.island === k);
      const job = i?.jobId ? ` (job ${i.jobId}${i.schedulerState ? ` ${i.schedulerState}` : ""})` : "";
      return `island ${k}${job}`;
    })
    .join(", ");
}

/**
 * The keeper's loop; resolves to its exit status: 0 when stopped or after a `once` round that
 * needed nothing or brought the fleet back, 1 when an up failed in a `once` round or the budget ran
 * out. A round whose check fails (ssh, squeue) does nothing and says so: nothing is started on a
 * guess.
 */
export async function keep(o: KeepOptions, d: KeepDeps): Promise<number> {
  const ups: number[] = [];
  let last = "";
  for (;;) {
    let report: FleetStatusReport | undefined;
    try {
      report = await d.check();
    } catch (e) {
      d.log(`could not check the fleet, so nothing was done: ${(e as Error).message}`);
      if (o.once) return 1;
    }
    // An island that released itself when idle (docs/idle-release.md) stays released: only a
    // `pulumi up` someone runs brings it back, never the keeper.
    const released = new Set(report?.islands.filter((i) => i.status === "IDLE-RELEASED").map((i) => i.island));
    const gone = (report?.replace?.islands ?? []).filter((k) => !released.has(k));
    if (report && gone.length === 0) {
      const state = `${report.status}: ${report.islands.map((i) => `island ${i.island} ${i.status}`).join(", ")}`;
      // One line per change, not per round: a day of checks stays readable.
      if (state !== last) d.log(state);
      last = state;
      if (o.once) return 0;
    } else if (report) {
      last = "";
      const since = d.now() - o.window * 1000;
      while (ups.length && ups[0] < since) ups.shift();
      if (ups.length >= o.maxUps) {
        d.log(
          `gave up: ${goneText(report, gone)} gone, and ${ups.length} pulumi up(s) already in the last ${o.window} s (--max-ups ${o.maxUps}); see fleet logs`,
        );
        return 1;
      }
      ups.push(d.now());
      d.log(
        `${goneText(report, gone)} gone: ${report.replace!.command} (up ${ups.length} of ${o.maxUps} in ${o.window} s)`,
      );
      const started = d.now();
      const run = await d.up();
      const took = ((d.now() - started) / 1000).toFixed(1);
      if (run.code === 0) d.log(`pulumi up done in ${took} s`);
      else d.log(`pulumi up failed (exit ${run.code}) after ${took} s:\n${run.tail}`);
      if (o.once) return run.code === 0 ? 0 : 1;
    }
    if (d.stopped()) return 0;
    await d.sleep(o.every);
    if (d.stopped()) return 0;
  }
}
