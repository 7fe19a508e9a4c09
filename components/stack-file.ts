import * as fs from "node:fs";
import * as path from "node:path";
import { packagePath } from "./package-root";

export const STACKS_DIR = packagePath("stacks");

/** `multi-replica` -> stacks/multi-replica.toml; an existing path is used as is. */
export function resolveStackFile(nameOrFile: string): { file: string; stack: string } {
  if (fs.existsSync(nameOrFile) && fs.statSync(nameOrFile).isFile()) {
    return { file: nameOrFile, stack: path.basename(nameOrFile).replace(/\.toml$/, "") };
  }
  return { file: path.join(STACKS_DIR, `${nameOrFile}.toml`), stack: nameOrFile };
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
