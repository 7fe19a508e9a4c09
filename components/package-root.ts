/**
 * The package's root directory (the one holding package.json), found once by walking up from this
 * file. The program reads its data files (templates/, stacks/, schema/, the model catalog) from
 * there, so the lookups are the same whether this module runs from source (tsx, vitest, Pulumi) or
 * compiled into dist/ (`npm run build`), where __dirname is one level deeper.
 */
import * as fs from "node:fs";
import * as path from "node:path";

function findRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, "package.json"))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${start}`);
  }
}

export const PACKAGE_ROOT = findRoot(__dirname);

/** A path inside the package, e.g. `packagePath("templates", "island.sbatch.mustache")`. */
export const packagePath = (...parts: string[]): string => path.join(PACKAGE_ROOT, ...parts);
