import { quote } from "shell-quote";
import { partsOf, type Ref, type Value } from "../plan/values";

/**
 * The one shell-quoting function: every value that reaches a script goes through it, so no config
 * string (model name, env value, path, chat template, ...) is ever interpreted by the shell.
 */
export function shq(value: string): string {
  if (value.includes("\0")) throw new Error("a NUL byte cannot be passed to a shell");
  return PLAIN_WORD.test(value) ? value : quote([value]);
}

/** Words bash reads literally as they are (no ~, globs, braces, quotes, $ or spaces): left bare for readability. */
const PLAIN_WORD = /^[A-Za-z0-9_@%+=:,.\/-]+$/;

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
