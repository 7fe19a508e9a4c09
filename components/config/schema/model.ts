import { z } from "zod";
import { argText, longText, modelId, NOT_AN_OPTION, notAnOption, table } from "./primitives";

/** The dtypes `vllm serve --dtype` accepts (shared with the model catalog's launch defaults). */
export const dtype = z.enum(["auto", "float16", "bfloat16", "float32", "half", "float"]);

/**
 * `[model]`: which checkpoint to serve and how vLLM loads it (prime-rl's pre-#3202 ModelConfig).
 * Derived defaults: max_model_len, dtype, trust_remote_code, tool_call_parser and reasoning_parser
 * take the model catalog's `launch` value when the file leaves them unset (normalise.ts
 * catalogDefaults); without one, unset means vLLM's own default.
 */
export const modelTable = table({
  name: modelId.describe("Hugging Face model id or path, e.g. Qwen/Qwen3-8B"),
  max_model_len: z
    .number()
    .int()
    .min(1)
    .max(16_777_216)
    .optional()
    .describe("Maximum context length (prompt + output tokens)"),
  enforce_eager: z.boolean().default(false).describe("Disable CUDA graphs (faster start, slower decode)"),
  dtype: dtype.optional().describe("Weight and activation dtype"),
  trust_remote_code: z
    .boolean()
    .default(false)
    .describe("Run the model repository's own Python code (default false, or the model catalog's)"),
  chat_template: longText
    .refine(notAnOption, NOT_AN_OPTION)
    .optional()
    .describe("Chat template: a file path on the cluster or the template text itself"),
  tool_call_parser: argText.optional().describe('vLLM tool-call parser; "auto" picks one from the model name'),
  reasoning_parser: argText.optional().describe('vLLM reasoning parser; "auto" picks one from the model name'),
});

/**
 * `model = "Qwen/Qwen3-8B"` is shorthand for `[model] name = "Qwen/Qwen3-8B"` (the RL-embedded
 * stacks in stacks/ write it so, under `[inference]`). The loader expands it before validation, so
 * errors inside the table keep their own paths; the editor schema (bin/schema.ts) offers both forms.
 */
export const modelField = modelTable;

/** `[parallel]`; the model catalog's `launch` tp and dp replace these defaults when the file leaves them unset. */
export const parallelTable = table({
  tp: z.number().int().min(1).max(1024).default(1).describe("Tensor-parallel size (GPUs per model shard)"),
  dp: z.number().int().min(1).max(65536).default(1).describe("Data-parallel size"),
});
