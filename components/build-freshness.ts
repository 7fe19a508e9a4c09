/**
 * Pulumi runs the program compiled into dist/ (Pulumi.yaml `main`), so an edit to a source file
 * does nothing until `npm run build`. Rather than deploy the old code silently, the compiled
 * program looks for a TypeScript source newer than itself.
 */
import * as fs from "node:fs";
import * as path from "node:path";

/** What the program in dist/ is built from (tsconfig.build.json's include, less the CLIs). */
export const PROGRAM_SOURCES = ["index.ts", "components"];

/** A file tsc compiles or copies into dist/ (JSON modules, such as the upstream flag subsets, too). */
const BUILT = /\.(ts|json)$/;

/** The first source under `root` (in `sources`) modified after `built` (a file's path), or undefined. */
export function newerSource(root: string, built: string, sources = PROGRAM_SOURCES): string | undefined {
  const builtAt = fs.statSync(built).mtimeMs;
  const walk = (p: string): string | undefined => {
    const stat = fs.statSync(p, { throwIfNoEntry: false });
    if (!stat) return undefined;
    if (stat.isDirectory()) {
      for (const entry of fs.readdirSync(p).sort()) {
        const found = walk(path.join(p, entry));
        if (found) return found;
      }
      return undefined;
    }
    return BUILT.test(p) && stat.mtimeMs > builtAt ? p : undefined;
  };
  for (const s of sources) {
    const found = walk(path.join(root, s));
    if (found) return found;
  }
  return undefined;
}

/** Throws when `compiled` (the running program's own file, in dist/) is older than a source. */
export function assertBuildFresh(root: string, compiled: string): void {
  if (!compiled.endsWith(".js")) return; // run from source (vitest, tsx): nothing to be stale
  const newer = newerSource(root, compiled);
  if (newer)
    throw new Error(
      `${path.relative(root, newer)} is newer than the compiled program ${path.relative(root, compiled)}: run \`npm run build\` first (Pulumi runs dist/, which npm ci builds)`,
    );
}
