/**
 * The stack-file key reference (docs/stack-file.md), written from the stack file's JSON Schema
 * (bin/schema.ts derives it from the zod schema), so the page lists exactly the keys the loader
 * accepts. Pure: schema in, Markdown out. `npm run schema` writes it; test/bin/schema.test.ts fails
 * when the committed page differs from what this returns.
 *
 * Defaults: a key's default is printed only where the schema declares one (JSON Schema `default`,
 * or a `type` the schema lets one omit). Where a default exists only as prose in `.describe()`,
 * the description says it and the default column points there; nothing else is inferred.
 */

type Schema = Record<string, any>;

interface Row {
  key: string;
  type: string;
  def: string;
  meaning: string;
}

interface Section {
  title: string;
  notes: string[];
  rows: Row[];
}

/** The largest integer zod gives as an unbounded integer's limit; printing it says nothing. */
const UNBOUNDED = Number.MAX_SAFE_INTEGER;

const code = (s: string) => "`" + s + "`";
const literal = (v: unknown) => code(JSON.stringify(v));

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

const withArticle = (type: string) => (/^[aeiou]/.test(type) ? "an " : "a ") + type;

const isObjectTable = (s: Schema | undefined): boolean => !!s && s.type === "object" && !!s.properties;
const alternativesOf = (s: Schema): Schema[] | undefined => s.anyOf ?? s.oneOf;

/** The object variants of a table (one for a plain table, several for a union) and its non-table alternatives. */
function tableVariants(
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

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** `type` when every variant pins it to a constant: the key that selects the variant. */
function discriminator(variants: Schema[]): string | undefined {
  if (variants.length < 2) return undefined;
  return variants.every((v) => v.properties.type?.const !== undefined) ? "type" : undefined;
}

const bracket = (path: string[], array: boolean) => (array ? `[[${path.join(".")}]]` : `[${path.join(".")}]`);

interface TableInput {
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
function tableSections(t: TableInput, out: Section[]): void {
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

function renderSections(sections: Section[], level: string): string[] {
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

/**
 * The layouts of a stack-file schema: the standalone one (inference keys at the root) and those that
 * embed them under `[inference]` (RL-embedded; prime-rl's RL and SFT files), in schema order.
 */
function layouts(schema: Schema): { standalone: Schema; embedded: Schema[] } {
  const branches = (alternativesOf(schema) ?? [schema]).filter(isObjectTable);
  const embedded = branches.filter((b) => isObjectTable(b.properties.inference));
  const standalone = branches.find((b) => !embedded.includes(b));
  if (!standalone) throw new Error("the stack-file schema has no standalone layout (an object without [inference])");
  return { standalone, embedded };
}

/** How one schema's layouts are titled on the page. */
interface LayoutTitles {
  /** `## ...` heading of the standalone layout. */
  standalone: string;
  /** Added to the titles of the standalone layout's sections. */
  suffix: string;
  /** Each embedding layout's heading and section suffix, in schema order. */
  embedded: { title: string; suffix: string }[];
}

/** The stack of services (a branch with `services`): what it holds, in terms of the layouts above. */
function servicesLines(schema: Schema): string[] {
  const branch = (alternativesOf(schema) ?? []).find((b) => isObjectTable(b) && b.properties.services);
  if (!branch) return [];
  const services = branch.properties.services as Schema;
  const service = (services.additionalProperties ?? {}) as Schema;
  const shared = Object.keys(branch.properties).filter((k) => k !== "services");
  const own = (service.properties?.slurm ?? {}) as Schema;
  const ownSlurm = Object.keys((alternativesOf(own) ?? [own]).find(isObjectTable)?.properties ?? {});
  return [
    "## Stack of services",
    "",
    `A file with ${code("[services]")} serves several models, each a ${code("[services.<name>]")} table (guide: services.md).`,
    `Its top level holds only what the services share: ${shared.map((k) => code(k)).join(", ")}.`,
    "",
    "| key | type | default | meaning |",
    "| --- | --- | --- | --- |",
    `| ${code("services")} | table of tables | — | ${services.description ?? ""} |`,
    "",
    `### ${code("[services.<name>]")}`,
    "",
    "The standalone layout's top-level keys and tables (above), or prime-rl's layout's, as in a file of one",
    `model; not the shared keys. Its ${code("[services.<name>.slurm]")} sets what the service's own job asks`,
    `for, over the file's ${code("[slurm]")}: ${ownSlurm.map((k) => code(k)).join(", ")}.`,
    "",
  ];
}

const SEED_TITLES: LayoutTitles = {
  standalone: "Standalone layout",
  suffix: "",
  embedded: [{ title: "RL-embedded layout", suffix: " (RL-embedded layout)" }],
};

/**
 * The sections of one schema's layouts: the standalone one table by table, each embedding one as
 * its differences from it: which standalone keys live under `[inference]`, which are shared as
 * they are, and its own tables.
 */
function layoutLines(schema: Schema, titles: LayoutTitles, older?: Schema): string[] {
  const { standalone, embedded } = layouts(schema);
  if (embedded.length > titles.embedded.length)
    throw new Error(`the schema has ${embedded.length} layouts with [inference], titles for ${titles.embedded.length}`);
  const lines: string[] = [`## ${titles.standalone}`, ""];
  const sections: Section[] = [];
  // A top-level table exactly as the older standalone layout has it is not listed again.
  const sameAs = (path: string[], s: Schema) =>
    older && path.length === 1 && deepEqual(s, older.properties?.[path[0]])
      ? `The same keys, types and defaults as ${code(`[${path[0]}]`)} of the older layout's standalone file.`
      : undefined;
  tableSections(
    { path: [], variants: [standalone], rootTitle: `Top level${titles.suffix}`, suffix: titles.suffix, sameAs },
    sections,
  );
  sections[0].notes.push("Keys outside any table: write them above the first `[table]` header.");
  lines.push(...renderSections(sections, "###"));

  embedded.forEach((rl, i) => {
    const { title, suffix: rlSuffix } = titles.embedded[i];
    lines.push(`## ${title}`, "");
    const inference = rl.properties.inference as Schema;
    const same = (a: Schema | undefined, b: Schema | undefined) =>
      a !== undefined && b !== undefined && deepEqual(a, b);
    const underInference = Object.keys(inference.properties);
    const moved = underInference.filter((k) => same(inference.properties[k], standalone.properties[k]));
    const changed = underInference.filter((k) => !moved.includes(k));
    const example = moved.find((k) => k !== "model" && tableVariants(standalone.properties[k]));
    const tablesOf = (keys: string[], prefix: string[]) => {
      const out: Section[] = [];
      tableSections(
        {
          path: prefix,
          variants: [
            { type: "object", properties: Object.fromEntries(keys.map((k) => [k, standalone.properties[k]])) },
          ],
          rootTitle: "",
        },
        out,
      );
      return out.slice(1).map((s) => s.title);
    };
    lines.push(
      `\`[inference]\`${(rl.required ?? []).includes("inference") ? " (required: it is what marks the layout)" : ""} holds the same keys, with the same types, defaults and meanings, as the standalone layout: ` +
        moved.map(code).join(", ") +
        `, and the tables below them: ${tablesOf(moved, ["inference"]).join(", ")}.` +
        (example ? ` For example, ${code(`[${example}]`)} becomes ${code(`[inference.${example}]`)}.` : ""),
      "",
    );
    if (changed.length) {
      const out: Section[] = [];
      tableSections(
        {
          path: ["inference"],
          variants: [inference],
          rootTitle: code("[inference]") + " (keys that differ from the standalone layout)",
          only: (k) => changed.includes(k),
        },
        out,
      );
      lines.push(...renderSections(out, "###"));
    }
    const top = Object.keys(rl.properties).filter((k) => k !== "inference");
    const shared = top.filter((k) => same(rl.properties[k], standalone.properties[k]));
    const own = top.filter((k) => !shared.includes(k));
    if (shared.length) {
      const titled = shared.map((k) => (tableVariants(standalone.properties[k]) ? code(`[${k}]`) : code(k)));
      lines.push(`At the top level, as in the standalone layout: ${titled.join(", ")}.`, "");
    }
    if (own.length) {
      const out: Section[] = [];
      tableSections(
        {
          path: [],
          variants: [rl],
          rootTitle: `Top level${rlSuffix}`,
          only: (k) => own.includes(k),
          suffix: rlSuffix,
        },
        out,
      );
      lines.push(...renderSections(out, "###"));
    }
  });
  return lines;
}

/** prime-rl's layout, for the second part of the page: its schema and the keys that tell the layouts apart. */
export interface PrimeLayoutInput {
  schema: Schema;
  /** Keys only prime-rl's layout has at the inference root, and only the older one has. */
  primeMarkers: string[];
  olderMarkers: string[];
  /** Where its JSON Schema is written, relative to the package root. */
  schemaFile: string;
}

/** The prime-rl part's introduction: what the layout is and which layout a file is read in (load.ts chooseLayout). */
function primeIntro(p: PrimeLayoutInput): string[] {
  const keys = (list: string[]) => list.map(code).join(", ");
  const paragraphs = [
    "A stack file may also be written in prime-rl's current layout (its inference config since its pass-through `[vllm]` table): a standalone inference file with `[vllm]`, `[deployment]`, `[router]`, ... at the top level, or a whole RL file with them under `[inference]`, next to the run's own `[model]`, `[deployment]`, `[trainer]`, `[orchestrator]`, ... (or an SFT file, whose `[inference]` serves the online evals of its `[eval]`). Its defaults are prime-rl's (the default column gives them), not the model catalog's. Keys vllm-fleet does not act on are accepted and listed in the plan as ignored; their meaning says so. Editors get this layout's JSON Schema from " +
      code(p.schemaFile) +
      ".",
    "Which layout a file is read in:",
  ];
  const steps = [
    `A key only one layout has decides. At the inference root (the top level, or \`[inference]\`), ${keys(p.primeMarkers)} mean prime-rl's layout, as do, in a file with \`[inference]\`, prime-rl's RL and SFT tables (\`[orchestrator]\`, \`[ckpt]\`, \`[data]\`, \`[eval]\`, ...) and a top-level \`env_vars\`; ${keys(p.olderMarkers)}, or \`model_catalog\`, mean the older one. A file with keys of both is refused, naming each older key and where prime-rl's layout keeps it.`,
    "A file with only keys both layouts have (`[deployment]`, `[server]`, `[slurm]`, `[kubernetes]`, `[kv_cache_offload]`, `env_vars`, `backend_port`, `output_dir`, `dry_run`; in an RL file also `[model]`, `[trainer]` and the top-level `[deployment]`) is read in the older layout if it loads there without a problem, else in prime-rl's if it loads there. A file that loaded before keeps loading the same way. Few files load in both: a standalone file never (the older layout needs `[model]`), an RL file only with a `[model]` name, and prime-rl's RL files have `[orchestrator]`.",
    "A file that loads in neither gets the problems of the layout it is closer to: the one that knows more of its keys, then the one with fewer problems, then the older one. A key only the other layout knows is named as that layout's.",
  ];
  return [
    "## prime-rl's layout",
    "",
    ...paragraphs.flatMap((t) => [...wrap(t, ""), ""]),
    ...steps.flatMap((t, i) => wrap(t, `${i + 1}. `, "   ")),
    "",
    ...wrap(
      "Command-line overrides are written in the file's layout (`--vllm.max-model-len 4096` for prime-rl's, `--model.max_model_len 4096` for the older one, which also takes prime-rl's `--vllm.*` spellings).",
      "",
    ),
    "",
  ];
}

/** Text wrapped at 100 columns, as the hand-written pages are: `first` starts the first line, `rest` the others. */
function wrap(text: string, first: string, rest = first, width = 100): string[] {
  const lines: string[] = [];
  let line = first;
  for (const word of text.split(" ")) {
    const lead = lines.length ? rest : first;
    if (line.length > lead.length && line.length + 1 + word.length > width) {
      lines.push(line);
      line = rest + word;
    } else line += (line.length > lead.length ? " " : "") + word;
  }
  lines.push(line);
  return lines;
}

/**
 * Markdown listing every key of the stack-file schema, grouped by table, with type, default and
 * meaning; then, given prime-rl's layout, the same for it, with which layout a file is read in.
 */
export function keyReference(schema: Schema, prime?: PrimeLayoutInput): string {
  const lines: string[] = [
    "# Stack-file key reference",
    "",
    "<!-- Generated by `npm run schema` from the zod schema in components/config/schema/ (via",
    "     components/config/key-reference.ts). Do not edit: test/bin/schema.test.ts fails when this",
    "     file differs from what the schema gives. -->",
    "",
    "Every key a stack file may contain, table by table, as the loader's schema defines it. Unknown",
    'keys are errors (with a "did you mean" hint). Columns:',
    "",
    "- **type**: the TOML value; `table` is a sub-table (its keys follow in their own section);",
    '  ranges are inclusive unless written with `>` or `<`; "required" keys must be present when',
    "  their table is.",
    '- **default**: a default the schema itself declares. "see meaning" means the schema states the',
    '  default only in the key\'s description; "—" means the schema states none. The loader may still',
    "  fill in a value: from the model catalog (launch defaults per model), from `DEFAULTS` in",
    "  components/config/normalise.ts, or from other keys (see the guides in this folder).",
    "- **meaning**: the key's description in the schema, where it has one.",
    "",
    "A stack file uses one of two layouts. The **standalone** layout has the inference keys at the top",
    "level. The **RL-embedded** layout (a file with an `[inference]` table) puts the same keys under",
    "`[inference]`, next to the top-level `[deployment]` of an RL training config.",
    ...(prime
      ? [
          "Both are the older layout of prime-rl's configs; prime-rl's current one is described after them",
          "([prime-rl's layout](#prime-rls-layout)).",
        ]
      : []),
    "",
    ...layoutLines(schema, SEED_TITLES),
    ...servicesLines(schema),
  ];
  if (prime) {
    lines.push(
      ...primeIntro(prime),
      ...layoutLines(
        prime.schema,
        {
          standalone: "prime-rl's layout: standalone inference file",
          suffix: " (prime-rl)",
          embedded: [
            { title: "prime-rl's layout: RL file", suffix: " (prime-rl RL file)" },
            { title: "prime-rl's layout: SFT file (online evals)", suffix: " (prime-rl SFT file)" },
          ],
        },
        layouts(schema).standalone,
      ),
    );
  }
  while (lines[lines.length - 1] === "") lines.pop();
  return lines.join("\n") + "\n";
}
