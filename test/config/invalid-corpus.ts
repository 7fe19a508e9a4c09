/**
 * The invalid-input corpus (test/fixtures/invalid/*.toml): stack files that must be rejected, each
 * stating in its leading comments where and how:
 *
 *   # expect-path: <dotted TOML path as the user wrote it>   (`<file>` = the whole file, path "")
 *   # expect-message: <fragment, matched case-insensitively against the issue messages>
 */
import * as fs from "node:fs";
import * as path from "node:path";

export const FIXTURES = path.join(__dirname, "..", "fixtures", "invalid");

export interface Fixture {
  name: string;
  file: string;
  text: string;
  paths: string[];
  messages: string[];
}

/** Reads the leading comment block; `# expect-path: <file>` stands for the whole-file path "". */
export function parseHeader(text: string): { paths: string[]; messages: string[]; malformed: string[] } {
  const paths: string[] = [];
  const messages: string[] = [];
  const malformed: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === "") continue;
    if (!line.startsWith("#")) break;
    if (!/^#\s*expect/i.test(line)) continue;
    const m = /^# expect-(path|message): (.*\S)\s*$/.exec(line);
    if (!m) {
      malformed.push(line);
      continue;
    }
    if (m[1] === "path") paths.push(m[2] === "<file>" ? "" : m[2]);
    else messages.push(m[2]);
  }
  return { paths, messages, malformed };
}

export const FIXTURE_LIST: Fixture[] = fs
  .readdirSync(FIXTURES)
  .filter((f) => f.endsWith(".toml"))
  .sort()
  .map((name) => {
    const file = path.join(FIXTURES, name);
    const text = fs.readFileSync(file, "utf8");
    const { paths, messages } = parseHeader(text);
    return { name, file, text, paths, messages };
  });
