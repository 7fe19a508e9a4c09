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

import {
  alternativesOf,
  code,
  deepEqual,
  isObjectTable,
  renderSections,
  type Schema,
  type Section,
  tableSections,
  tableVariants,
} from "./key-reference-tables";

export { cellText, typeText } from "./key-reference-tables";

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
