import { loadCatalog, lookupModel } from "../config/catalog";
import { ConfigError } from "../config/issues";
import { textTable } from "../report/text-table";

const billions = (n: number | undefined) => (n === undefined ? "-" : `${(n / 1e9).toFixed(1)}B`);

/**
 * `fleet list [model] [--catalog file] [--json]`: the merged catalog, or one entry in full. JSON
 * is the entries as they are merged (ids as keys), so scripts see exactly what a stack file gets.
 */
export function catalogCommand(model: string | undefined, userCatalog: string | undefined, json: boolean): string {
  const catalog = loadCatalog(userCatalog);
  if (model !== undefined) {
    const entry = lookupModel(catalog, model);
    if (!entry)
      throw new ConfigError(
        [
          {
            path: "",
            message: `"${model}" is not in the catalog (${Object.keys(catalog.models).length} models; \`fleet list\` shows them)`,
          },
        ],
        catalog.files.join(" + "),
      );
    if (json) return JSON.stringify(entry, null, 2);
    const t = textTable(["field", "value"]);
    for (const [section, values] of [
      ["launch", entry.launch],
      ["arch", entry.arch],
    ] as const) {
      for (const [k, v] of Object.entries(values)) t.push([`${section}.${k}`, String(v)]);
    }
    return [
      `${entry.id} (${entry.family}, ${entry.type})${entry.aliases?.length ? `, aliases: ${entry.aliases.join(", ")}` : ""}`,
      t.toString(),
    ].join("\n");
  }
  if (json) return JSON.stringify(catalog.models, null, 2);
  const t = textTable([
    "model",
    "aliases",
    "type",
    "tp",
    "max_model_len",
    "params",
    "active",
    "layers",
    "attention",
    "parsers",
  ]);
  for (const [id, e] of Object.entries(catalog.models)) {
    const a = e.arch;
    const attention = a.attention === "mla" ? `mla r${a.kv_lora_rank}` : `gqa ${a.kv_heads}x${a.head_dim}`;
    const parsers = [e.launch.tool_call_parser, e.launch.reasoning_parser].filter(Boolean).join(" / ") || "-";
    t.push([
      id,
      e.aliases?.join(" ") ?? "",
      e.type,
      String(e.launch.tp * (e.launch.dp ?? 1)),
      String(e.launch.max_model_len),
      billions(a.params),
      billions(a.active_params),
      String(a.layers),
      attention,
      parsers,
    ]);
  }
  return [`catalog: ${catalog.files.join(" + ")}`, t.toString()].join("\n");
}
