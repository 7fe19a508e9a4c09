/**
 * docs/vllm-releases.md: what changed in `vllm serve` between the vLLM releases the program has a
 * manifest of (test/fixtures/upstream/vllm-serve-<release>.json), computed from those manifests.
 * `npm run sync-upstream` writes it; test/upstream/releases.test.ts fails when it is stale.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { packagePath } from "../components/package-root";

type Json = Record<string, any>;

export const releasesPage = packagePath("docs", "vllm-releases.md");

/** What changed from one release's manifest to the next's. */
export interface ReleaseChanges {
  from: string;
  to: string;
  added: string[];
  removed: string[];
  /** Switches whose off form changed: [flag, older, newer, the older form still parsed (hidden)]. */
  offForm: [string, string, string, boolean][];
  /** [flag, choices added, choices removed, whether the newer takes any value]. */
  choices: [string, string[], string[], boolean][];
  /** [flag, older default, newer default]. */
  defaults: [string, unknown, unknown][];
  /** Registries and config fields: name -> [added, removed]. */
  lists: Record<string, [string[], string[]]>;
}

const minus = (a: string[], b: string[]) => a.filter((x) => !b.includes(x)).sort();
const show = (v: unknown) => (v === undefined ? "(none)" : `\`${JSON.stringify(v)}\``);

export function releaseChanges(older: Json, newer: Json): ReleaseChanges {
  const [a, b] = [older.flags, newer.flags] as Json[];
  const both = Object.keys(a)
    .filter((f) => b[f])
    .sort();
  const lists: Record<string, [string[], string[]]> = {};
  const list = (name: string, x: string[], y: string[]) => (lists[name] = [minus(y, x), minus(x, y)]);
  list("--tool-call-parser names", ...parsers(older, newer, "--tool-call-parser"));
  list("--reasoning-parser names", ...parsers(older, newer, "--reasoning-parser"));
  list("KV connectors", Object.keys(older.kv_connectors), Object.keys(newer.kv_connectors));
  list(
    "KVTransferConfig fields",
    Object.keys(older.kv_transfer_config_fields),
    Object.keys(newer.kv_transfer_config_fields),
  );
  list("environment variables", older.env, newer.env);
  return {
    from: older.version,
    to: newer.version,
    added: minus(Object.keys(b), Object.keys(a)),
    removed: minus(Object.keys(a), Object.keys(b)),
    offForm: both
      .filter((f) => a[f].negative_form !== b[f].negative_form)
      .map((f) => [
        f,
        a[f].negative_form,
        b[f].negative_form,
        (b[f].hidden_option_strings ?? []).includes(a[f].negative_form),
      ]),
    choices: both
      .filter((f) => JSON.stringify(a[f].choices) !== JSON.stringify(b[f].choices))
      .map((f) => [
        f,
        minus(b[f].choices ?? [], a[f].choices ?? []),
        minus(a[f].choices ?? [], b[f].choices ?? []),
        !b[f].choices,
      ]),
    defaults: both
      .filter((f) => JSON.stringify(a[f].default) !== JSON.stringify(b[f].default))
      .map((f) => [f, a[f].default, b[f].default]),
    lists,
  };
}

function parsers(older: Json, newer: Json, flag: string): [string[], string[]] {
  return [older.post_parse_validated_values[flag], newer.post_parse_validated_values[flag]];
}

const names = (xs: string[]) => (xs.length ? xs.map((x) => `\`${x}\``).join(", ") : "none");

function section(c: ReleaseChanges, older: Json, newer: Json): string[] {
  const [from, to] = [c.from, c.to].map((v) => v.split(".").slice(0, 2).join("."));
  const out = [
    `## ${from} → ${to}`,
    "",
    `From ${older.source} (${older.flag_count} flags) to ${newer.source} (${newer.flag_count} flags): ` +
      `${c.added.length} added, ${c.removed.length} removed, ${c.offForm.length} switches turned off by another ` +
      `spelling, ${c.choices.length} with other choices, ${c.defaults.length} with another default.`,
    "",
    `**Added flags** (refused in vllm_extra with vllm_version = "${from}"): ${names(c.added)}.`,
    "",
    `**Removed flags**: ${names(c.removed)}.`,
    "",
  ];
  if (c.offForm.length) {
    const hidden = c.offForm.every(([, , , h]) => h);
    out.push(
      `**Switches turned off by another spelling** (the planner emits the one of the stack's vllm_version${hidden ? `; ${to} still parses every ${from} form, hidden from --help` : ""}):`,
      "",
      `| flag | ${from} | ${to} |`,
      "| --- | --- | --- |",
      ...c.offForm.map(
        ([f, x, y, h]) => `| \`${f}\` | \`${x}\` | \`${y}\`${h ? "" : ` (\`${x}\` no longer parsed)`} |`,
      ),
      "",
    );
  }
  if (c.choices.length)
    out.push(
      "**Choices changed**:",
      "",
      "| flag | added | removed |",
      "| --- | --- | --- |",
      ...c.choices.map(
        ([f, add, rm, free]) => `| \`${f}\` | ${names(add)} | ${free ? "any value now (no choice list)" : names(rm)} |`,
      ),
      "",
    );
  if (c.defaults.length)
    out.push(
      "**Defaults changed**:",
      "",
      `| flag | ${from} | ${to} |`,
      "| --- | --- | --- |",
      ...c.defaults.map(([f, x, y]) => `| \`${f}\` | ${show(x)} | ${show(y)} |`),
      "",
    );
  out.push("**Registries and fields** (added / removed):", "");
  for (const [name, [add, rm]] of Object.entries(c.lists)) out.push(`- ${name}: ${names(add)} / ${names(rm)}`);
  out.push("");
  return out;
}

/** The page for the manifests of `versions` (major.minor, oldest first), read by `read`. */
export function releasesMarkdown(versions: string[], read: (version: string) => Json): string {
  const out = [
    "# vLLM releases: what changed in `vllm serve`",
    "",
    "<!-- Generated by `npm run sync-upstream` (bin/vllm-releases.ts) from test/fixtures/upstream/vllm-serve-<release>.json; test/upstream/releases.test.ts fails when it is stale. -->",
    "",
    `A stack names the vLLM release its engines run with \`vllm_version\` (prime-rl's layout: \`[vllm_fleet] vllm_version\`; one of ${versions.join(", ")}, default the newest, ${versions[versions.length - 1]}): vllm_extra, every generated \`vllm serve\` command line and the planner's own flags are checked against that release's manifest, a switch turned off is spelled as that release spells it, and on Kubernetes it picks the image tag. How the manifests are made: [testing.md](testing.md) (upstream manifests).`,
    "",
  ];
  for (let i = 1; i < versions.length; i++) {
    const [older, newer] = [read(versions[i - 1]), read(versions[i])];
    out.push(...section(releaseChanges(older, newer), older, newer));
  }
  return out.join("\n").trimEnd() + "\n";
}

/** The page for the vendored manifests (fixturesDir, versions from vllmServeVersions). */
export function releasesPageText(fixturesDir: string, versions: string[], file: (v: string) => string): string {
  return releasesMarkdown(versions, (v) => JSON.parse(fs.readFileSync(path.join(fixturesDir, file(v)), "utf8")));
}
