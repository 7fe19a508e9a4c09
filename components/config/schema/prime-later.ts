import { z } from "zod";
import { argText } from "./primitives";

/*
 * prime-rl 8324600's InferenceConfig keys with a shape of their own: the chat renderer and the vLLM
 * plugins its server runs (config/prime-commit.ts LATER_INFERENCE_KEYS lists every later key).
 */

/**
 * A renderer template field's value: a string a command line can carry, a number, a boolean, or a
 * list of strings and numbers (passed as JSON). Checked by hand rather than as a zod union, whose
 * only message for a bad string inside a list is "Invalid input".
 */
const rendererValue = z.unknown().superRefine((v, ctx) => {
  const scalar = (x: unknown, where: string, allowBoolean: boolean) => {
    if (typeof x === "number" || (allowBoolean && typeof x === "boolean")) return;
    if (typeof x !== "string") {
      ctx.addIssue({
        code: "custom",
        message: `${where}expects a string, a number${allowBoolean ? ", true or false, or a list of strings and numbers" : " (a list holds strings and numbers)"}`,
      });
      return;
    }
    const checked = argText.safeParse(x);
    if (!checked.success)
      for (const issue of checked.error.issues) ctx.addIssue({ code: "custom", message: `${where}${issue.message}` });
  };
  if (Array.isArray(v)) v.forEach((x, i) => scalar(x, `item ${i + 1}: `, false));
  else scalar(v, "", true);
});

/**
 * prime-rl 8324600's [inference] renderer (a `renderers` RendererConfig, discriminated on name; its
 * other keys are the renderer's template fields, e.g. enable_thinking): passed to prime-rl's server as is.
 */
export const primeRendererTable = z
  .object({
    name: argText.describe(
      "The renderer prime-rl's server renders chat prompts with (RendererConfig's discriminator; no default: the table names one), passed as --renderer.name",
    ),
  })
  // Its other keys become `--renderer.<key>` flags: Python field names, with values a command line can carry.
  .catchall(rendererValue)
  .superRefine((t, ctx) => {
    for (const key of Object.keys(t))
      if (!/^[a-z_][a-z0-9_]*$/.test(key))
        ctx.addIssue({ code: "custom", path: [key], message: "a renderer key is a field name: a-z, 0-9 and _" });
  });

/**
 * prime-rl 8324600's vllm_plugins entry: `package.module:function` or `/abs/path/file.py:function`.
 * prime-rl resolves a relative file path against the directory it is launched from; the engines here
 * start on other machines, in their own directories, so a file path must be absolute.
 */
export const vllmPlugin = z
  .string()
  .regex(/^[^:]+:[A-Za-z_][A-Za-z0-9_]*$/, "expects package.module:function or /absolute/path/file.py:function")
  .refine((t) => {
    const ref = t.slice(0, t.lastIndexOf(":"));
    return !(ref.endsWith(".py") || ref.includes("/")) || ref.startsWith("/");
  }, "a file path must be absolute: the engines start on other machines, not where the plan is made");
