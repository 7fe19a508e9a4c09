import Table from "cli-table3";

/** The one table style of every human-facing listing (plan, fleet status, metrics, list): compact, no colour. */
export function textTable(head: string[]): Table.Table {
  return new Table({
    head,
    style: { head: [], border: [], compact: true },
    chars: { mid: "", "left-mid": "", "mid-mid": "", "right-mid": "" },
  });
}
