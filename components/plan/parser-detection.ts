/**
 * `tool_call_parser = "auto"` / `reasoning_parser = "auto"` pick vLLM's parser from the model id,
 * as prime-rl's utils/parsers.py does. No match means no parser.
 */
/** An ordered model-id pattern table: first match wins. */
export type ParserTable = readonly (readonly [RegExp, string])[];

const TOOL_CALL: ParserTable = [
  [/^zai-org\/GLM-5/i, "glm47"],
  [/^zai-org\/GLM-4\.[5-7]/i, "glm45"],
  [/^Qwen\/Qwen3/i, "hermes"],
  [/^PrimeIntellect\/INTELLECT-3/i, "glm45"],
  [/^deepseek-ai\/DeepSeek-V3\.1/i, "deepseek_v31"],
  [/^deepseek-ai\/DeepSeek-V3/i, "deepseek_v3"],
  [/^moonshotai\/Kimi-K2/i, "kimi_k2"],
  [/^meta-llama\/(Meta-)?Llama-3/i, "llama3_json"],
  [/^mistralai\//i, "mistral"],
];

const REASONING: ParserTable = [
  [/^zai-org\/GLM-/i, "glm45"],
  [/^PrimeIntellect\/INTELLECT-3/i, "deepseek_r1"],
  [/^Qwen\/Qwen3/i, "qwen3"],
  [/^deepseek-ai\/DeepSeek-R1/i, "deepseek_r1"],
];

/** A parser setting as run: "auto" is looked up in the kind's table, anything else is taken as written. */
export function resolveParserWith(
  tables: { tool: ParserTable; reasoning: ParserTable },
  kind: "tool" | "reasoning",
  setting: string | undefined,
  model: string,
): string | undefined {
  if (setting !== "auto") return setting;
  return tables[kind].find(([re]) => re.test(model))?.[1];
}

/** The standalone and RL-embedded layouts' table. */
export function resolveParser(
  kind: "tool" | "reasoning",
  setting: string | undefined,
  model: string,
): string | undefined {
  return resolveParserWith({ tool: TOOL_CALL, reasoning: REASONING }, kind, setting, model);
}
