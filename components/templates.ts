import * as fs from "node:fs";
import * as path from "node:path";
import { mustachePackage } from "./lazy-packages";
import { packagePath } from "./package-root";

const TEMPLATES = packagePath("templates");

/** Template texts read so far: every island renders the same few templates and partials. */
const templateTexts = new Map<string, string>();

/** A template's text by its path under templates/ (also how partials are named: `{{> slurm/create/submit.sh.mustache}}`). */
export function readTemplate(name: string): string {
  let text = templateTexts.get(name);
  if (text === undefined) {
    text = fs.readFileSync(path.join(TEMPLATES, name), "utf8");
    templateTexts.set(name, text);
  }
  return text;
}

/**
 * Renders a mustache template with HTML escaping off: values are shell-quoted (or YAML/JSON
 * encoded) before they reach a template, and escaping them again would corrupt them. Partials
 * render with the same view.
 */
export function renderTemplate(name: string, view: object): string {
  return mustachePackage().render(readTemplate(name), view, readTemplate, { escape: (v: string) => v });
}

/** A template written one command per line (each ending in `;`), as the single line a login shell runs. */
export function renderOneLine(name: string, view: object): string {
  return renderTemplate(name, view)
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .join(" ");
}
