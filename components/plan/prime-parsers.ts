/**
 * prime-rl's parser table: with prime-rl's layout, `tool_call_parser = "auto"` and
 * `reasoning_parser = "auto"` (VllmConfig's defaults) are resolved from the model id by an ordered
 * list of patterns, first match wins, no match means no parser. The table follows prime-rl's
 * packages/prime-rl-configs/src/prime_rl/utils/parsers.py (TOOL_CALL_PARSER_PATTERNS,
 * REASONING_PARSER_PATTERNS) at PrimeIntellect-ai/prime-rl@559b447; its patterns are
 * case-sensitive and anchored at the start of the id, as Python's re.search with `^` is.
 *
 * The older layout keeps its own table (parser-detection.ts).
 */
import { resolveParserWith, type ParserTable } from "./parser-detection";

export const PRIME_TOOL_CALL_PARSERS: ParserTable = [
  [/^arcee-ai\/Trinity-Large-Thinking/, "qwen3_coder"],
  [/^arcee-ai\/Trinity-/, "hermes"],
  [/^deepseek-ai\/DeepSeek-V3\.2/, "deepseek_v32"],
  [/^deepseek-ai\/DeepSeek-V3\.1/, "deepseek_v31"],
  [/^zai-org\/GLM-4\.5/, "glm45"],
  [/^zai-org\/GLM-4\.7/, "glm47"],
  [/^zai-org\/GLM-5/, "glm47"],
  [/^MiniMaxAI\/MiniMax-M2/, "minimax_m2"],
  [/^openai\/gpt-oss/, "openai"],
  [/^poolside\/Laguna/, "poolside_v1"],
  [/^PrimeIntellect\/INTELLECT-3/, "qwen3_coder"],
  [/^nvidia\/NVIDIA-Nemotron-3/, "qwen3_coder"],
  [/^stepfun-ai\/Step-3\.5/, "step3p5"],
  // Qwen3.5 / 3.6 / 3.8 and Qwen3-Coder before the Qwen3 catch-all.
  [/^Qwen\/Qwen3\.(5|6|8)-/, "qwen3_coder"],
  [/^Qwen\/Qwen3-Coder/, "qwen3_coder"],
  [/^Qwen\/Qwen3-/, "hermes"],
];

export const PRIME_REASONING_PARSERS: ParserTable = [
  [/^arcee-ai\/Trinity-(Large-Thinking|Mini|Nano)/, "deepseek_r1"],
  [/^deepseek-ai\/DeepSeek-V3\.[12]/, "deepseek_r1"],
  [/^zai-org\/GLM-/, "glm45"],
  [/^MiniMaxAI\/MiniMax-M2/, "minimax_m2_append_think"],
  // gpt-oss has no reasoning parser: vLLM's harmony path splits reasoning itself.
  [/^poolside\/Laguna/, "poolside_v1"],
  [/^PrimeIntellect\/INTELLECT-3/, "deepseek_r1"],
  [/^nvidia\/NVIDIA-Nemotron-3-Super/, "nemotron_v3"],
  [/^nvidia\/NVIDIA-Nemotron-3-Nano/, "nano_v3"],
  [/^nvidia\/NVIDIA-Nemotron-3\.5/, "nano_v3"],
  [/^stepfun-ai\/Step-3\.5/, "step3p5"],
  // Only Qwen3 Thinking models reason; Instruct and base models do not.
  [/^Qwen\/Qwen3-.*Thinking/, "deepseek_r1"],
  [/^Qwen\/Qwen3\.(5|6|8)-/, "qwen3"],
];

/** The parser prime-rl runs for a setting: "auto" is looked up, anything else is taken as written. */
export function resolvePrimeParser(
  kind: "tool" | "reasoning",
  setting: string | undefined,
  model: string,
): string | undefined {
  return resolveParserWith({ tool: PRIME_TOOL_CALL_PARSERS, reasoning: PRIME_REASONING_PARSERS }, kind, setting, model);
}
