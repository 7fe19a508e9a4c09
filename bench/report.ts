/**
 * What every benchmark section reports: figures with their units and, where the project set one, the
 * target they must meet. `npm run bench` prints them as one table and writes them as JSON.
 */
import Table from "cli-table3";

/** A bound a figure must stay within (`<=` for times and ratios). */
export interface Target {
  op: "<=" | ">=";
  value: number;
}

export interface Figure {
  /** What was measured, e.g. "program under mocks, 512 nodes". */
  name: string;
  value: number;
  unit: string;
  target?: Target;
  /** Raw samples behind a median, so the JSON shows the spread. */
  samples?: number[];
  /** The figure before the change that set its target (same unit), and where it was measured. */
  baseline?: { value: number; from: string };
  note?: string;
}

export interface Section {
  id: string;
  title: string;
  figures: Figure[];
  /** Why the section measured nothing (e.g. the SLURM test cluster cannot start here). */
  skipped?: string;
}

export const meets = (f: Figure): boolean | undefined =>
  f.target === undefined ? undefined : f.target.op === "<=" ? f.value <= f.target.value : f.value >= f.target.value;

export function median(xs: number[]): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Rounds for display and JSON alike: three significant decimals are plenty for wall-clock times. */
export const round = (x: number, digits = 3): number => Number(x.toFixed(digits));

export function sectionsTable(sections: Section[]): string {
  const table = new Table({
    head: ["section", "figure", "value", "baseline", "target", "ok"],
    style: { head: [], border: [] },
  });
  for (const s of sections) {
    if (s.skipped) {
      table.push([s.id, `skipped: ${s.skipped}`, "", "", "", ""]);
      continue;
    }
    for (const f of s.figures) {
      const ok = meets(f);
      table.push([
        s.id,
        f.note ? `${f.name} (${f.note})` : f.name,
        `${round(f.value)} ${f.unit}`,
        f.baseline ? `${round(f.baseline.value)} ${f.unit} (${f.baseline.from})` : "",
        f.target ? `${f.target.op} ${f.target.value} ${f.unit}` : "",
        ok === undefined ? "" : ok ? "yes" : "NO",
      ]);
    }
  }
  return table.toString();
}
