import * as fs from "node:fs";
import * as path from "node:path";
import { distance } from "fastest-levenshtein";
import { packagePath } from "./package-root";

export const STACKS_DIR = packagePath("stacks");

const isFile = (p: string) => fs.existsSync(p) && fs.statSync(p).isFile();

/** Typed as a path (`./x.toml`, `dir/x.toml`, `/abs/x.toml`), not as the name of a stack under stacks/. */
const looksLikePath = (s: string) => s.includes("/") || s.includes(path.sep) || s.startsWith(".");

/**
 * `multi-replica` (or `multi-replica.toml`) -> stacks/multi-replica.toml; an existing file is used
 * as is. A name that is neither gives the file it would be (which `missingStack` explains). A
 * relative path is taken from `base` when given (the project folder, for a path in Pulumi config,
 * whichever folder the program or the CLI runs in), else from the current folder.
 */
export function resolveStackFile(nameOrFile: string, base?: string): { file: string; stack: string } {
  if (base !== undefined && looksLikePath(nameOrFile) && !path.isAbsolute(nameOrFile))
    return resolveStackFile(path.join(base, nameOrFile));
  if (isFile(nameOrFile)) {
    return { file: nameOrFile, stack: path.basename(nameOrFile).replace(/\.toml$/, "") };
  }
  if (looksLikePath(nameOrFile)) return { file: nameOrFile, stack: path.basename(nameOrFile).replace(/\.toml$/, "") };
  const stack = nameOrFile.replace(/\.toml$/, "");
  return { file: path.join(STACKS_DIR, `${stack}.toml`), stack };
}

export function listStacks(): string[] {
  return fs.existsSync(STACKS_DIR)
    ? fs
        .readdirSync(STACKS_DIR)
        .filter((f) => f.endsWith(".toml"))
        .map((f) => f.slice(0, -5))
        .sort()
    : [];
}

/** The shipped stacks nearest a mistyped name, closest first (at most three). */
export function nearStacks(name: string, stacks = listStacks()): string[] {
  const typed = path
    .basename(name)
    .replace(/\.toml$/, "")
    .toLowerCase();
  const budget = Math.max(2, Math.floor(typed.length / 3));
  // A typo of the whole name before names that merely contain it ("single-nod": single-node first).
  return stacks
    .map((s) => {
      const edits = distance(typed, s.toLowerCase());
      const d = Math.min(edits, typed.length >= 3 && (s.includes(typed) || typed.includes(s)) ? 1 : Infinity);
      return { s, d, edits };
    })
    .filter(({ d }) => d <= budget)
    .sort((a, b) => a.d - b.d || a.edits - b.edits || a.s.localeCompare(b.s))
    .slice(0, 3)
    .map(({ s }) => s);
}

/**
 * Why `nameOrFile` names no stack file, in the user's own words: a path is reported as typed (and
 * where it resolves, from `base` or the current folder), a name as the stack under stacks/ it
 * would be; near stack names are suggested.
 */
export function missingStack(nameOrFile: string, base?: string): string {
  const near = nearStacks(nameOrFile);
  const hint = near.length ? ` (did you mean ${near.map((s) => `"${s}"`).join(" or ")}?)` : "";
  const resolved = base === undefined ? path.resolve(nameOrFile) : path.resolve(base, nameOrFile);
  const where = looksLikePath(nameOrFile)
    ? `no stack file ${nameOrFile}: no such file${resolved !== nameOrFile ? ` (${resolved})` : ""}`
    : `no stack "${nameOrFile}": no file ${nameOrFile} here, and no stacks/${nameOrFile.replace(/\.toml$/, "")}.toml`;
  return `${where}${hint}\nstacks: ${listStacks().join(", ")}`;
}
