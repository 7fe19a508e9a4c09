/**
 * The older layout's parser table (components/plan/parser-detection.ts): `"auto"` resolved from the
 * model id. Its parsers must be ones the vendored vLLM registers, it must not contradict prime-rl's
 * table (components/plan/prime-parsers.ts) where both have a row for a model, and the model
 * catalog's launch parsers must be what it gives.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { fixturesDir, vllmServeFile, vllmServeVersions } from "../../bin/sync-upstream";
import { loadCatalog } from "../../components/config";
import { REASONING_PARSERS, resolveParser, TOOL_CALL_PARSERS } from "../../components/plan/parser-detection";
import {
  PRIME_REASONING_PARSERS,
  PRIME_TOOL_CALL_PARSERS,
  resolvePrimeParser,
} from "../../components/plan/prime-parsers";

type Registered = Record<"--tool-call-parser" | "--reasoning-parser", string[]>;
/**
 * The names every supported vLLM release registers (ToolParserManager / ReasoningParserManager) in
 * the vendored manifests: a stack's vllm_version may name any of them.
 */
const registered = vllmServeVersions()
  .map(
    (v) =>
      JSON.parse(fs.readFileSync(path.join(fixturesDir, vllmServeFile(v)), "utf8"))
        .post_parse_validated_values as Registered,
  )
  .reduce((a, b): Registered => ({
    "--tool-call-parser": a["--tool-call-parser"].filter((n) => b["--tool-call-parser"].includes(n)),
    "--reasoning-parser": a["--reasoning-parser"].filter((n) => b["--reasoning-parser"].includes(n)),
  }));

// One model per row of the older layout's table, and the parsers the model's own card or vLLM's
// recipes name (the same as prime-rl's table where it has the model).
const rows: [string, string | undefined, string | undefined][] = [
  ["zai-org/GLM-5", "glm47", "glm45"],
  ["zai-org/GLM-4.7", "glm47", "glm45"],
  ["zai-org/GLM-4.6", "glm45", "glm45"],
  ["zai-org/GLM-4.5-Air", "glm45", "glm45"],
  ["Qwen/Qwen3.5-35B-A3B", "qwen3_coder", "qwen3"],
  ["Qwen/Qwen3-Coder-30B-A3B-Instruct", "qwen3_coder", undefined],
  ["Qwen/Qwen3-8B", "hermes", "qwen3"],
  ["Qwen/Qwen3-4B-Instruct-2507", "hermes", undefined],
  ["Qwen/Qwen3-30B-A3B-Thinking-2507", "hermes", "deepseek_r1"],
  ["PrimeIntellect/INTELLECT-3", "qwen3_coder", "deepseek_r1"],
  ["deepseek-ai/DeepSeek-V3.2", "deepseek_v32", undefined],
  ["deepseek-ai/DeepSeek-V3.1", "deepseek_v31", undefined],
  ["deepseek-ai/DeepSeek-V3", "deepseek_v3", undefined],
  ["deepseek-ai/DeepSeek-R1", undefined, "deepseek_r1"],
  ["moonshotai/Kimi-K2-Instruct", "kimi_k2", undefined],
  ["meta-llama/Llama-3.1-8B-Instruct", "llama3_json", undefined],
  ["mistralai/Mistral-Small-3.2-24B-Instruct-2506", "mistral", undefined],
  ["qwen/qwen3-8b", "hermes", "qwen3"], // the older layout's patterns ignore case
];

describe("the older layout's parser table", () => {
  it.each(rows)("%s: tool %s, reasoning %s", (model, tool, reasoning) => {
    expect(resolveParser("tool", "auto", model)).toBe(tool);
    expect(resolveParser("reasoning", "auto", model)).toBe(reasoning);
  });

  it("every pattern is exercised by a row", () => {
    for (const table of [TOOL_CALL_PARSERS, REASONING_PARSERS])
      for (const [re] of table)
        expect(
          rows.some(([m]) => re.test(m)),
          String(re),
        ).toBe(true);
  });

  it("names only parsers the vendored vLLM registers", () => {
    for (const [re, name] of TOOL_CALL_PARSERS) expect(registered["--tool-call-parser"], String(re)).toContain(name);
    for (const [re, name] of REASONING_PARSERS) expect(registered["--reasoning-parser"], String(re)).toContain(name);
  });

  it("prime-rl's table names one parser the vendored vLLM does not register (nano_v3), and only that one", () => {
    const missing = [
      ...PRIME_TOOL_CALL_PARSERS.filter(([, n]) => !registered["--tool-call-parser"].includes(n)),
      ...PRIME_REASONING_PARSERS.filter(([, n]) => !registered["--reasoning-parser"].includes(n)),
    ].map(([, n]) => n);
    expect([...new Set(missing)]).toEqual(["nano_v3"]);
  });

  it("does not contradict prime-rl's table for a model both have a row for", () => {
    const models = [
      ...rows.map(([m]) => m),
      ...[...PRIME_TOOL_CALL_PARSERS, ...PRIME_REASONING_PARSERS].map(([re]) =>
        // A model id each prime-rl pattern matches: the pattern's literal text.
        re.source
          .replace(/^\^/, "")
          .replace(/\\(.)/g, "$1")
          .replace(/\((\w+)\|[^)]*\)/g, "$1")
          .replace(/\.\*/g, "-A3B-"),
      ),
    ];
    const contradictions: string[] = [];
    for (const model of models)
      for (const kind of ["tool", "reasoning"] as const) {
        const older = resolveParser(kind, "auto", model);
        const prime = resolvePrimeParser(kind, "auto", model);
        if (older !== undefined && prime !== undefined && older !== prime)
          contradictions.push(`${model} ${kind}: ${older}, prime-rl ${prime}`);
      }
    expect(contradictions).toEqual([]);
  });

  it("the model catalog's launch parsers are what the table gives for its models", () => {
    const found: string[] = [];
    for (const [id, e] of Object.entries(loadCatalog().models)) {
      const tool = resolveParser("tool", "auto", id);
      const reasoning = resolveParser("reasoning", "auto", id);
      if (tool !== undefined && e.launch.tool_call_parser !== tool)
        found.push(`${id}: tool_call_parser ${e.launch.tool_call_parser}, table ${tool}`);
      if (reasoning !== undefined && e.launch.reasoning_parser !== reasoning)
        found.push(`${id}: reasoning_parser ${e.launch.reasoning_parser}, table ${reasoning}`);
    }
    expect(found).toEqual([]);
  });
});
