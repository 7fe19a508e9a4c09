import * as TOML from "@iarna/toml";
import { ConfigIssue } from "./issues";

export type TomlTable = Record<string, unknown>;

export type TomlResult = { ok: true; value: TomlTable } | { ok: false; issue: ConfigIssue };

/** Parses TOML text; a syntax error becomes one issue with its line and column. */
export function parseToml(text: string): TomlResult {
  try {
    return { ok: true, value: plain(TOML.parse(text)) as TomlTable };
  } catch (err: any) {
    if (err && typeof err.line === "number") {
      const reason = String(err.message ?? err).split("\n")[0];
      return {
        ok: false,
        issue: { path: "", message: `invalid TOML: ${reason}`, line: err.line + 1, column: (err.col ?? 0) + 1 },
      };
    }
    return { ok: false, issue: { path: "", message: `invalid TOML: ${String(err?.message ?? err)}` } };
  }
}

/**
 * @iarna/toml returns objects with symbol-tagged prototypes, Date subclasses and (for integers
 * beyond 2^53) BigInt; turn it all into plain JSON-like data so zod and JSON.stringify behave.
 */
function plain(value: unknown): unknown {
  if (typeof value === "bigint") {
    return Number.isSafeInteger(Number(value)) ? Number(value) : value;
  }
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(plain);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  }
  return value;
}
