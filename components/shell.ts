import { partsOf, type Ref, type Value } from "./plan/values";

/**
 * The one shell-quoting function: every value that reaches a script goes through it, so no config
 * string (model name, env value, path, chat template, ...) is ever interpreted by the shell.
 *
 * Plain POSIX quoting, chosen so shellcheck has nothing to say about the quoting itself: single
 * quotes, or double quotes (with \ " $ ` escaped) when the value holds a quote, `$` or a backtick
 * (inside single quotes shellcheck takes `$(...)` for a forgotten expansion, SC2016). Backslashes
 * stay out of single quotes (before the closing quote or a newline shellcheck reads them as failed
 * escapes, SC1003/SC1004), and Unicode quote marks go in the other kind of quotes (SC1111/SC1112
 * take them for mistyped ones).
 */
export function shq(value: string): string {
  if (value.includes("\0")) throw new Error("a NUL byte cannot be passed to a shell");
  if (PLAIN_WORD.test(value)) return value;
  if (value === "") return "''";
  if (/['$`]/.test(value))
    return value.replace(DOUBLE_RUNS, (run) =>
      UNICODE_DOUBLE_QUOTES.test(run) ? `'${run}'` : `"${run.replace(/["\\$`]/g, "\\$&")}"`,
    );
  return value.replace(SINGLE_RUNS, (run) =>
    run === "\\" ? "\\\\" : UNICODE_SINGLE_QUOTES.test(run) ? `"${run}"` : `'${run}'`,
  );
}

/**
 * A whole rendered one-line script as the single argument of `bash -c`, for the login shell that
 * sshd starts, whatever it is. Only single quotes (with '\'' for a quote) mean the same in sh, bash
 * and csh: csh expands `$` inside double quotes, backslash or not. The script's own values were
 * quoted with shq already; this wraps the script, not a config value.
 */
export function loginShellArg(script: string): string {
  if (script.includes("\0") || /[\r\n]/.test(script))
    throw new Error("internal error: a login-shell argument must be one line");
  return `'${script.replaceAll("'", "'\\''")}'`;
}

/** Words bash reads literally as they are (no ~, globs, braces, quotes, $ or spaces): left bare for readability. */
const PLAIN_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;
/** The Unicode quote marks shellcheck flags inside single quotes, and inside double quotes. */
const UNICODE_SINGLE_QUOTES = /^[\u2018\u2019]/;
const UNICODE_DOUBLE_QUOTES = /^[\u201c\u201d\u2033\u2036]/;
/** A backslash, a run of Unicode single quotes, or a run of anything else. */
const SINGLE_RUNS = /\\|[\u2018\u2019]+|[^\\\u2018\u2019]+/g;
/** A run of Unicode double quotes, or a run of anything else. */
const DOUBLE_RUNS = /[\u201c\u201d\u2033\u2036]+|[^\u201c\u201d\u2033\u2036]+/g;

/** How a backend spells a run-time reference in bash (e.g. "${NODE_ADDR[2]}"). */
export type RefSpelling = (ref: Ref) => string;

/** One shell word for a Value: quoted literals next to double-quoted variable expansions. */
export function shellWord(value: Value, spell: RefSpelling): string {
  const parts = partsOf(value);
  if (parts.length === 1 && typeof parts[0] === "string") return shq(parts[0]);
  return parts.map((p) => (typeof p === "string" ? (p === "" ? "" : shq(p)) : `"${spell(p)}"`)).join("");
}

export function shellWords(values: Value[], spell: RefSpelling): string {
  return values.map((v) => shellWord(v, spell)).join(" ");
}

/**
 * A heredoc delimiter that no line of `body` equals, so quoted-heredoc bodies cannot be cut short
 * by a config value that happens to contain the delimiter on a line of its own.
 */
export function heredocDelimiter(base: string, body: string): string {
  const lines = new Set(body.split("\n").map((l) => l.trim()));
  let name = base;
  for (let i = 1; lines.has(name); i++) name = `${base}_${i}`;
  return name;
}
