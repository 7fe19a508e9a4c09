/** A pass-through flag's value as checked: what the command line gets. */
export type ExtraValue = boolean | number | string | (string | number)[] | Record<string, unknown>;

/** Who controls a flag instead of a pass-through table: a stack-file key (canonical path) and/or why. */
export interface FlagOwner {
  key?: string;
  why?: string;
}

/** The refusal of a flag the planner owns, in `table` (vllm_extra, sglang_extra, a router's extra), naming its key. */
export function ownedFlagMessage(table: string, owner: FlagOwner, userPath: (canonical: string) => string): string {
  const use = owner.key ? `set ${userPath(owner.key)} instead` : "";
  return `cannot be set in ${table}: ${[owner.why, use].filter(Boolean).join("; ")}`;
}

/** A numeric extra-flag entry (`max_num_seqs`, `kv_cache_memory_bytes`, ...), or undefined when unset or not a number. */
export const extraNumber = (extra: Record<string, ExtraValue>, key: string): number | undefined =>
  typeof extra[key] === "number" ? (extra[key] as number) : undefined;

/** What a pass-through table's value check reads of a flag's manifest entry (vLLM's and SGLang's alike). */
export interface FlagValueSpec {
  type: "bool" | "int" | "float" | "str" | "json" | "list";
  choices?: (string | number)[];
  negatable?: boolean;
  /** argparse's nargs: "*" takes none, a number exactly that many. */
  nargs?: string | number;
  item_type?: string;
}

/**
 * One `vllm_extra` / `sglang_extra` / router `extra` value against its flag's manifest entry: the value to emit, or
 * why it is refused. `program` names who would misread a value that starts with '-'.
 */
export function checkFlagValue(
  value: unknown,
  spec: FlagValueSpec,
  program: "vLLM" | "SGLang" | "vllm-router" | "sglang-router",
): { value: ExtraValue } | string {
  const dash = `must not start with '-' (${program} would read it as an option, not as this flag's value)`;
  const choices = spec.choices;
  const inChoices = (v: string | number) => !choices || choices.map(String).includes(String(v));
  switch (spec.type) {
    case "bool":
      if (typeof value !== "boolean") return `expects true or false, got ${describe(value)}`;
      if (value === false && !spec.negatable)
        return "is a switch without a --no- form: remove the key instead of setting false";
      return { value };
    case "int":
      if (typeof value !== "number" || !Number.isInteger(value))
        return `expects a whole number, got ${describe(value)}`;
      if (!inChoices(value)) return `must be one of ${choices!.join(", ")}`;
      return { value };
    case "float":
      if (typeof value !== "number" || !Number.isFinite(value)) return `expects a number, got ${describe(value)}`;
      return { value };
    case "str":
      if (typeof value !== "string" || value.length === 0) return `expects a non-empty string, got ${describe(value)}`;
      if (value.includes("\0")) return "must not contain a NUL byte";
      // The value is its own argv word after the flag: argparse would read "-x" as an option.
      if (value.startsWith("-")) return dash;
      if (!inChoices(value)) return `must be one of ${choices!.join(", ")}`;
      return { value };
    case "json": {
      if (typeof value === "string") {
        try {
          const parsed = JSON.parse(value);
          if (parsed === null || typeof parsed !== "object") return "expects a JSON object or array";
          return { value: parsed };
        } catch {
          return "expects a table, an array or a JSON string, and this string is not valid JSON";
        }
      }
      if (value !== null && typeof value === "object") return { value: value as Record<string, unknown> };
      return `expects a table, an array or JSON, got ${describe(value)}`;
    }
    case "list": {
      const items = Array.isArray(value) ? value : [value];
      if (items.length === 0 && spec.nargs !== "*") return "expects at least one value";
      if (typeof spec.nargs === "number" && items.length !== spec.nargs)
        return `expects exactly ${spec.nargs} value${spec.nargs === 1 ? "" : "s"}`;
      for (const item of items) {
        if ((typeof item !== "string" && typeof item !== "number") || item === "")
          return `expects strings or numbers, got ${describe(item)}`;
        if (typeof item === "string" && item.includes("\0")) return "must not contain a NUL byte";
        if (typeof item === "string" && item.startsWith("-")) return dash;
        const n = typeof item === "string" ? Number(item) : item;
        if (spec.item_type === "int" && !Number.isInteger(n)) return `expects whole numbers, got ${describe(item)}`;
        if (spec.item_type === "float" && !Number.isFinite(n)) return `expects numbers, got ${describe(item)}`;
        if (!inChoices(item)) return `items must be one of ${choices!.join(", ")}, got ${describe(item)}`;
      }
      return { value: items as (string | number)[] };
    }
  }
}

/** A value as a refusal names it. */
export function describe(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  if (value === null) return "null";
  if (typeof value === "object") return "a table";
  return `${typeof value} ${JSON.stringify(value)}`;
}
