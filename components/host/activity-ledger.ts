/*
 * An island's activity ledger: what its engines were doing, as its activity monitor saw it on their
 * own /metrics (and pause routes). The idle release decides from it; `fleet cost` reads it for the
 * share of the held GPU time the engines served. One text format for every target: on a host
 * (SLURM, local) the file ACTIVITY_FILE in the island's attempt folder; on Kubernetes the same
 * text in a ConfigMap key. A line is `<epoch seconds> <state>`, written when the state changes and
 * at least every ACTIVITY_HEARTBEAT_S while it holds, so the last line bounds what was seen.
 */

/** busy: a request running or waiting; paused: the trainer paused an engine (a weight update), not idle; unseen: no scrape answered. */
export const ACTIVITY_STATES = ["busy", "idle", "paused", "unseen"] as const;
export type ActivityState = (typeof ACTIVITY_STATES)[number];

/** The ledger's name in an island's attempt folder (and its ConfigMap key on Kubernetes). */
export const ACTIVITY_FILE = "activity";
/** The marker an idle release leaves beside the ledger: `<epoch seconds released> <epoch seconds idle since>`. */
export const IDLE_RELEASED_FILE = "idle-released";
/** The longest a monitor goes without writing a line while the state holds. */
export const ACTIVITY_HEARTBEAT_S = 60;

export interface ActivityEntry {
  at: number;
  state: ActivityState;
}

export interface IdleReleased {
  at: number;
  idleSince: number;
}

const STATES = new Set<string>(ACTIVITY_STATES);

/**
 * The ledger's lines in order. A torn last line (a monitor killed mid-write) and any line that is
 * not `<number> <state>` are skipped: the ledger is evidence, and one bad line must not void the rest.
 */
export function parseActivity(text: string): ActivityEntry[] {
  const out: ActivityEntry[] = [];
  for (const line of text.split(/\r?\n/)) {
    const m = /^(\d+(?:\.\d+)?) ([a-z]+)$/.exec(line.trim());
    if (!m || !STATES.has(m[2])) continue;
    const at = Number(m[1]);
    if (out.length && at < out[out.length - 1].at) continue; // a clock stepped back: keep the order
    out.push({ at, state: m[2] as ActivityState });
  }
  return out;
}

export function parseIdleReleased(text: string): IdleReleased | undefined {
  const m = /^(\d+(?:\.\d+)?) (\d+(?:\.\d+)?)\s*$/.exec(text.trim());
  return m ? { at: Number(m[1]), idleSince: Number(m[2]) } : undefined;
}

/** Seconds in each state within [from, to]; `unrecorded` is the part of the window the ledger does not cover. */
export type ActivityShares = Record<ActivityState | "unrecorded", number>;

/**
 * How the window [from, to] splits between the states. A state holds from its line to the next
 * line, but never past its line plus twice the heartbeat: a monitor that died says nothing after
 * that, and that time is unrecorded rather than credited to the last state it wrote.
 */
export function activityShares(entries: readonly ActivityEntry[], from: number, to: number): ActivityShares {
  const shares: ActivityShares = { busy: 0, idle: 0, paused: 0, unseen: 0, unrecorded: 0 };
  if (to <= from) return shares;
  let covered = 0;
  entries.forEach((e, i) => {
    const next = i + 1 < entries.length ? entries[i + 1].at : Infinity;
    const end = Math.min(next, e.at + 2 * ACTIVITY_HEARTBEAT_S, to);
    const start = Math.max(e.at, from);
    if (end > start) {
      shares[e.state] += end - start;
      covered += end - start;
    }
  });
  shares.unrecorded = to - from - covered;
  return shares;
}
