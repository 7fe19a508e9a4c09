import * as fs from "node:fs";
import * as path from "node:path";
import ts from "typescript";
import { ROOT } from "./helpers";

/* The program's own sources, walked by the tests that check what they name (seams, fixtures, sizes). */

/** Every TypeScript source under `dir` (ROOT-relative), declaration files aside. */
export function sourceFiles(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) return sourceFiles(rel);
    return e.name.endsWith(".ts") && !e.name.endsWith(".d.ts") ? [rel] : [];
  });
}

/** The product: index.ts, components/ and bin/. */
export const productFiles = (): string[] => ["index.ts", ...sourceFiles("components"), ...sourceFiles("bin")];

/**
 * Every string literal of `text` (quoted or a template without substitutions) whose text `matches`,
 * found by the TypeScript parser, so a comment or an identifier (`slurm:` as a key) is not one;
 * import and export specifiers aside. As `file:line: literal`.
 */
export function stringLiterals(file: string, text: string, matches: (s: string) => boolean): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (
      ts.isStringLiteralLike(node) &&
      matches(node.text) &&
      !ts.isImportDeclaration(node.parent) &&
      !ts.isExportDeclaration(node.parent)
    )
      found.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${node.getText()}`);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The product's string literals that `match`, across every product file. */
export const productStringLiterals = (matches: (s: string) => boolean): string[] =>
  productFiles().flatMap((f) => stringLiterals(f, fs.readFileSync(path.join(ROOT, f), "utf8"), matches));
