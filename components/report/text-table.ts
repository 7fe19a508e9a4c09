import type Table from "cli-table3";
import { cliTablePackage } from "../lazy-packages";

/** The one table style of every human-facing listing (plan, fleet status, metrics, list): compact, no colour. */
export function textTable(head: string[]): Table.Table {
  const Table = cliTablePackage();
  return new Table({
    head,
    style: { head: [], border: [], compact: true },
    chars: { mid: "", "left-mid": "", "mid-mid": "", "right-mid": "" },
  });
}
