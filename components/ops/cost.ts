import { activityShares, type ActivityShares } from "../host/activity-ledger";
import type { HeldJob, IslandHeld, UnseenJob } from "../host/held-time";
import { textTable } from "../report/text-table";

/*
 * `fleet cost`: the GPU-hours each island has held, in all and since the last `pulumi up` (its
 * current job or run), from what the target's scheduler said (host/held-time.ts), and how that time
 * split between serving (busy), idle, paused, unseen and unrecorded by the island's activity ledger.
 * Every share is in GPU-hours, so islands and jobs add up; a price turns hours into money.
 */

/** GPU-hours: held, and each ledger state's part of it (unrecorded: what no ledger covers). */
export interface HoursSum extends ActivityShares {
  gpuHours: number;
  /** gpuHours x cost.gpu_hour_price, when the stack sets a price. */
  money?: number;
}

export interface CostJob {
  id: string;
  current: boolean;
  running: boolean;
  /** ISO time it started holding its GPUs; null when it never did. */
  start: string | null;
  hours: number;
  gpus: number;
  gpuSource: string;
  seenBy: string;
  /** false: no activity ledger, so its whole time is unrecorded. */
  ledger: boolean;
  held: HoursSum;
}

export interface CostIsland {
  island: number;
  jobs: CostJob[];
  /** Jobs or runs the island had whose time nobody answered for: not in any sum. */
  unaccounted: UnseenJob[];
  /** What the scheduler cannot tell at all, so no sum includes it. */
  notes: string[];
  total: HoursSum;
  sinceUp: HoursSum;
}

export interface CostReport {
  format: "vllm-fleet/cost/v1";
  model: string;
  target: string;
  /** When the report was made (ISO). */
  at: string;
  gpuHourPrice: number | null;
  islands: CostIsland[];
  total: HoursSum;
  sinceUp: HoursSum;
  /** false: some job's time was not seen (islands[].unaccounted say which): the sums are lower bounds. */
  complete: boolean;
}

const zero = (): HoursSum => ({ gpuHours: 0, busy: 0, idle: 0, paused: 0, unseen: 0, unrecorded: 0 });
const STATES = ["busy", "idle", "paused", "unseen", "unrecorded"] as const;

function addTo(sum: HoursSum, part: HoursSum): void {
  sum.gpuHours += part.gpuHours;
  for (const s of STATES) sum[s] += part[s];
}

function priced(sum: HoursSum, price: number | null): HoursSum {
  return price === null ? sum : { ...sum, money: sum.gpuHours * price };
}

/** One job's GPU-hours and their split by its ledger over the time it held the GPUs. */
export function jobHours(job: HeldJob): HoursSum {
  const perGpuHour = job.gpus / 3600;
  const sum = zero();
  sum.gpuHours = job.elapsed * perGpuHour;
  if (job.start === null || job.elapsed <= 0) return sum;
  const shares = activityShares(job.activity ?? [], job.start, job.start + job.elapsed);
  for (const s of STATES) sum[s] = shares[s] * perGpuHour;
  return sum;
}

export function costReport(
  held: IslandHeld[],
  meta: { model: string; target: string; gpuHourPrice?: number; now: Date },
): CostReport {
  const price = meta.gpuHourPrice ?? null;
  const total = zero();
  const sinceUp = zero();
  const islands = held.map((h) => {
    const t = zero();
    const since = zero();
    const jobs = h.jobs.map((j) => {
      const hours = jobHours(j);
      addTo(t, hours);
      if (j.current) addTo(since, hours);
      return {
        id: j.id,
        current: j.current,
        running: j.running,
        start: j.start === null ? null : new Date(j.start * 1000).toISOString(),
        hours: j.elapsed / 3600,
        gpus: j.gpus,
        gpuSource: j.gpuSource,
        seenBy: j.seenBy,
        ledger: j.activity !== null,
        held: priced(hours, price),
      };
    });
    addTo(total, t);
    addTo(sinceUp, since);
    return {
      island: h.island,
      jobs,
      unaccounted: h.unseen,
      notes: h.notes ?? [],
      total: priced(t, price),
      sinceUp: priced(since, price),
    };
  });
  return {
    format: "vllm-fleet/cost/v1",
    model: meta.model,
    target: meta.target,
    at: meta.now.toISOString(),
    gpuHourPrice: price,
    islands,
    total: priced(total, price),
    sinceUp: priced(sinceUp, price),
    complete: islands.every((i) => i.unaccounted.length === 0),
  };
}

const hours = (x: number) => x.toFixed(2);
const share = (part: number, of: number) => (of > 0 ? `${((part / of) * 100).toFixed(1)}%` : "-");

function sumCells(s: HoursSum, price: number | null): string[] {
  return [
    hours(s.gpuHours),
    ...STATES.map((k) => share(s[k], s.gpuHours)),
    ...(price === null ? [] : [(s.money ?? 0).toFixed(2)]),
  ];
}

export function costText(r: CostReport): string {
  const price = r.gpuHourPrice;
  const head = ["GPU-hours", ...STATES, ...(price === null ? [] : ["cost"])];
  const islands = textTable(["island", "what", ...head]);
  for (const i of r.islands) {
    islands.push([String(i.island), "since up", ...sumCells(i.sinceUp, price)]);
    islands.push([String(i.island), "in all", ...sumCells(i.total, price)]);
  }
  islands.push(["all", "since up", ...sumCells(r.sinceUp, price)]);
  islands.push(["all", "in all", ...sumCells(r.total, price)]);
  const jobs = textTable(["island", "job", "now", "start", "hours", "GPUs", "GPU count from", "seen by", "ledger"]);
  for (const i of r.islands)
    for (const j of i.jobs)
      jobs.push([
        String(i.island),
        j.id,
        j.current ? (j.running ? "current, running" : "current, ended") : "past",
        j.start ?? "never started",
        hours(j.hours),
        String(j.gpus),
        j.gpuSource,
        j.seenBy,
        j.ledger ? "yes" : "none (unrecorded)",
      ]);
  const lines = [
    `${r.model} (${r.target}): ${hours(r.sinceUp.gpuHours)} GPU-hours since the last up, ${hours(r.total.gpuHours)} in all` +
      (price === null ? "" : ` (at ${price} per GPU-hour: ${(r.total.money ?? 0).toFixed(2)})`),
    islands.toString(),
    jobs.toString(),
  ];
  const notes = [...new Set(r.islands.flatMap((i) => i.notes))];
  if (notes.length) lines.push(...notes.map((n) => `note: ${n}`));
  const missing = r.islands.flatMap((i) => i.unaccounted.map((u) => `island ${i.island} ${u.id}: ${u.why}`));
  if (missing.length)
    lines.push(`not accounted (the sums above leave them out and are lower bounds):\n  ${missing.join("\n  ")}`);
  return lines.join("\n");
}
