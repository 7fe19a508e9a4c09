/** Checks through the `openai` client that several end-to-end files share. */
import type OpenAI from "openai";
import { expect } from "vitest";

/**
 * A completion of `n` tokens with logprobs and token ids (vLLM's and SGLang's `return_token_ids`,
 * which RL trainers read): both come back for every token. Returns the completion.
 */
export async function completionWithTokenIds(client: OpenAI, model: string, n = 5) {
  const completion = await client.completions.create({
    model,
    prompt: "the fleet serves",
    max_tokens: n,
    logprobs: 1,
    ...({ return_token_ids: true } as object),
  });
  expect((completion.choices[0] as unknown as { token_ids?: number[] }).token_ids).toHaveLength(n);
  expect(completion.choices[0].logprobs?.token_logprobs?.length).toBe(n);
  return completion;
}
