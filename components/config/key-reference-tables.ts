/*
 * The key reference's tables (key-reference.ts): one section per stack-file table, written from its
 * JSON Schema, with each key's type, default and meaning, and the Markdown they print as.
 */

export type Schema = Record<string, any>;

export interface Row {
  key: string;
  type: string;
  def: string;
  meaning: string;
}

export interface Section {
  title: string;
  notes: string[];
  rows: Row[];
}

/** The largest integer zod gives as an unbounded integer's limit; printing it says nothing. */
export const UNBOUNDED = Number.MAX_SAFE_INTEGER;

export const code = (s: string) => "`" + s + "`";
export const literal = (v: unknown) => code(JSON.stringify(v));

/**
 * Text for Markdown: pipes escaped everywhere (GitHub tables split on them even in code spans),
 * and `<` outside code spans as an entity so `<job_name>` is not read as an HTML tag.
 */
export function cellText(s: string): string {
  return s
    .split("`")
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/</g, "&lt;")))
    .join("`")
    .replace(/\|/g, "\\|")
    .replace(/\r?\n/g, " ");
}

export const withArticle = (type: string) => (/^[aeiou]/.test(type) ? "an " : "a ") + type;

export const isObjectTable = (s: Schema | undefined): boolean => !!s && s.type === "object" && !!s.properties;
export const alternativesOf = (s: Schema): Schema[] | undefined => s.anyOf ?? s.oneOf;

/** The object variants of a table (one for a plain table, several for a union) and its non-table alternatives. */
export function tableVariants(
  s: Schema | undefined,
): { variants: Schema[]; others: Schema[]; description?: string } | undefined {
  if (!s) return undefined;
  if (isObjectTable(s)) return { variants: [s], others: [], description: s.description };
  const alts = alternativesOf(s);
  if (!alts) return undefined;
  const variants = alts.filter(isObjectTable);
  if (!variants.length) return undefined;
  const description = s.description ?? (variants.length === 1 ? variants[0].description : undefined);
  return { variants, others: alts.filter((a) => !isObjectTable(a)), description };
}

function range(s: Schema): string {
  const lo =
    s.exclusiveMinimum !== undefined
      ? `> ${s.exclusiveMinimum}`
      : s.minimum !== undefined && s.minimum > -UNBOUNDED
        ? `≥ ${s.minimum}`
        : undefined;
  const hi =
    s.exclusiveMaximum !== undefined
      ? `< ${s.exclusiveMaximum}`
      : s.maximum !== undefined && s.maximum < UNBOUNDED
        ? `≤ ${s.maximum}`
        : undefined;
  if (lo?.startsWith("≥") && hi?.startsWith("≤")) return ` ${s.minimum}–${s.maximum}`;
  return [lo, hi].filter(Boolean).length ? " " + [lo, hi].filter(Boolean).join(", ") : "";
}

/** A value's type in a few words: `integer 1–64`, `one of "a", "b"`, `array of string`, ... */
export function typeText(s: Schema): string {
  if (s.const !== undefined) return literal(s.const);
  if (Array.isArray(s.enum))
    return s.enum.length === 1 ? literal(s.enum[0]) : `one of ${s.enum.map(literal).join(", ")}`;
  const alts = alternativesOf(s);
  if (alts) return alts.map(typeText).join(" or ");
  switch (s.type) {
    case "integer":
    case "number":
      return s.type + range(s);
    case "string":
    case "boolean":
      return s.type;
    case "array":
      return isObjectTable(s.items) ? "array of tables" : `array of ${s.items ? typeText(s.items) : "any"}`;
    case "object": {
      if (isObjectTable(s)) return "table";
      const value = s.additionalProperties;
      return value && typeof value === "object" && Object.keys(value).length
        ? `table of ${typeText(value)}`
        : "table of any values";
    }
    default:
      return "any";
  }
}

function defaultText(s: Schema, meaning: string): string {
  if (s.default !== undefined) return literal(s.default);
  return /\bdefault/i.test(meaning) ? "see meaning" : "—";
}

export function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** `type` when every variant pins it to a constant: the key that selects the variant. */
function discriminator(variants: Schema[]): string | undefined {
  if (variants.length < 2) return undefined;
  return variants.every((v) => v.properties.type?.const !== undefined) ? "type" : undefined;
}

export const bracket = (path: string[], array: boolean) => (array ? `[[${path.join(".")}]]` : `[${path.join(".")}]`);

export interface TableInput {
  path: string[];
  variants: Schema[];
  others?: Schema[];
  description?: string;
  /** Array of tables (`[[path]]`). */
  array?: boolean;
  /** The root of a layout: its own scalars form a section titled `rootTitle`; its tables are not listed as rows. */
  rootTitle?: string;
  /** Only these keys (the root of the RL layout lists what differs from the standalone one). */
  only?: (key: string) => boolean;
  /** Added to every section title below this table, e.g. " (RL-embedded layout)". */
  suffix?: string;
  /** A note that replaces a child table's keys (and its own tables): it is the same table as one described elsewhere. */
  sameAs?: (path: string[], s: Schema) => string | undefined;
  /** This table's keys are not listed: the note says where they are. */
  elided?: string;
}

/** One table's section, then a section for each table below it, depth first in schema order. */
export function tableSections(t: TableInput, out: Section[]): void {
  const { path, variants } = t;
  const section: Section = {
    title: t.rootTitle ?? code(bracket(path, !!t.array)) + (t.suffix ?? ""),
    notes: [],
    rows: [],
  };
  if (t.elided) {
    section.notes.push(t.elided);
    out.push(section);
    return;
  }
  if (t.description) section.notes.push(cellText(t.description.endsWith(".") ? t.description : t.description + "."));
  for (const other of t.others ?? []) {
    const what = other.description ? `: ${cellText(other.description)}` : "";
    section.notes.push(
      `Instead of the table, ${code(path[path.length - 1])} may be ${withArticle(typeText(other))}${what}.`,
    );
  }
  if (t.array)
    section.notes.push(
      `A list: repeat ${code(bracket(path, true))} for each entry, or write an inline array of tables.`,
    );
  out.push(section);
  const tag = discriminator(variants);
  if (tag) {
    const consts = variants.map((v) => v.properties[tag].const as string);
    const optional = variants
      .filter((v) => !(v.required ?? []).includes(tag))
      .map((v) => v.properties[tag].const as string);
    section.notes.push(
      `${code(tag)} selects the kind of table (${consts.map(literal).join(", ")}); a key marked "only with" applies to those kinds alone.`,
    );
    section.rows.push({
      key: code(tag),
      type: typeText({ enum: consts }) + (optional.length ? "" : ", required"),
      def: optional.length === 1 ? literal(optional[0]) : "—",
      meaning:
        optional.length === 1
          ? `Which kind of table this is; omitted, it is ${literal(optional[0])}.`
          : "Which kind of table this is.",
    });
  }
  const keys: string[] = [];
  for (const v of variants) for (const k of Object.keys(v.properties)) if (!keys.includes(k) && k !== tag) keys.push(k);
  const later: TableInput[] = [];
  for (const key of keys) {
    if (t.only && !t.only(key)) continue;
    const holders = variants.filter((v) => key in v.properties);
    // Kinds that define a key alike share a row; a key two kinds define differently gets a row each.
    const groups: Schema[][] = [];
    for (const v of holders) {
      const group = groups.find((g) => deepEqual(g[0].properties[key], v.properties[key]));
      if (group) group.push(v);
      else groups.push([v]);
    }
    for (const group of groups) {
      const s = group[0].properties[key] as Schema;
      const required = group.every((v) => (v.required ?? []).includes(key));
      const only =
        tag && group.length < variants.length
          ? ` Only with ${group.map((v) => code(`${tag} = ${JSON.stringify(v.properties[tag].const)}`)).join(", ")}.`
          : "";
      const sub = tableVariants(s);
      const items = s.type === "array" ? tableVariants(s.items) : undefined;
      const childPath = [...path, key];
      if ((sub || items) && groups.length > 1) {
        throw new Error(
          `${bracket(path, false)} ${key}: the kinds of this table define this sub-table differently; the key reference cannot print one section for it`,
        );
      }
      if (sub) {
        later.push({ path: childPath, ...sub, elided: t.sameAs?.(childPath, s) });
        if (t.rootTitle === undefined) {
          const own = sub.description ? cellText(sub.description.replace(/\.?$/, ". ")) : "";
          section.rows.push({
            key: code(key),
            type: "table" + (required ? ", required" : ""),
            def: "—",
            meaning: `${own}See ${code(bracket(childPath, false))}.${only}`,
          });
        }
        continue;
      }
      if (items) {
        later.push({ path: childPath, ...items, description: s.description ?? items.description, array: true });
        if (t.rootTitle === undefined) {
          section.rows.push({
            key: code(key),
            type: "array of tables" + (required ? ", required" : ""),
            def: "—",
            meaning: `See ${code(bracket(childPath, true))}.${only}`,
          });
        }
        continue;
      }
      const meaning = s.description ? cellText(s.description.replace(/\.?$/, ".")) : "";
      section.rows.push({
        key: code(key),
        type: cellText(typeText(s)) + (required ? ", required" : ""),
        def: defaultText(s, meaning),
        meaning: (meaning + only).trim(),
      });
    }
  }
  for (const child of later) tableSections({ ...child, suffix: t.suffix, sameAs: t.sameAs }, out);
}

export function renderSections(sections: Section[], level: string): string[] {
  const lines: string[] = [];
  for (const s of sections) {
    if (!s.rows.length && !s.notes.length) continue;
    lines.push(`${level} ${s.title}`, "");
    if (s.notes.length) lines.push(s.notes.join(" "), "");
    if (s.rows.length) {
      lines.push("| key | type | default | meaning |", "| --- | --- | --- | --- |");
      for (const r of s.rows) lines.push(`| ${r.key} | ${r.type} | ${r.def} | ${r.meaning} |`);
      lines.push("");
    }
  }
  return lines;
}
