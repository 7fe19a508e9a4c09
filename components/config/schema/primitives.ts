import { z } from "zod";
import { lookalikeNote } from "../lookalike";
import { didYouMean } from "../suggest";

/**
 * A strict table: unknown keys are errors that name the closest valid key. Every table in the
 * stack-file schema is built with this, so a typo anywhere is caught with a hint.
 */
/**
 * The `error` option of a table union keyed on `type`: when no table's `type` matches, say which
 * values there are (`type must be "a", "b" or "c"`), not zod's generic "invalid input".
 */
export function typeChoices(...types: string[]) {
  const quoted = types.map((t) => `"${t}"`);
  const list = quoted.length > 1 ? `${quoted.slice(0, -1).join(", ")} or ${quoted.at(-1)}` : quoted[0];
  return { error: (iss: { code?: string }) => (iss.code === "invalid_union" ? `type must be ${list}` : undefined) };
}

/** `absent`: why a key a sibling table has is not in this one, said when a file sets it here. */
export function table<S extends z.ZodRawShape>(shape: S, absent: Record<string, string> = {}) {
  const known = Object.keys(shape);
  return z.strictObject(shape, {
    error: (iss) => {
      if (iss.code !== "unrecognized_keys") return undefined;
      const keys = (iss as { keys: string[] }).keys;
      // One line per key: the loader splits them into one issue each.
      return keys
        .map((k) =>
          absent[k] !== undefined
            ? `${k} is not a key of this table: ${absent[k]}`
            : `unknown key "${k}"${didYouMean(k, known)}${lookalikeNote(k)}; valid keys here: ${known.join(", ")}`,
        )
        .join("\n");
    },
  });
}

/** The first control character (C0 or DEL) in `s`, as U+XXXX; NUL is reported on its own. */
const controlChar = (s: string): string | undefined => {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  const m = /[\x01-\x1f\x7f]/.exec(s);
  return m ? `U+${m[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}` : undefined;
};

/**
 * Text that will reach a shell script or a manifest: non-empty, no NUL byte (bash cannot carry
 * one), and no control character: a line break or terminal escape in a name or path is never
 * meant, and would reach logs and terminals as is.
 */
export const text = z
  .string()
  .min(1, "must not be empty")
  .max(4096, "is longer than 4096 characters")
  .refine((s) => !s.includes("\0"), "must not contain a NUL byte")
  .superRefine((s, ctx) => {
    const c = controlChar(s);
    if (c)
      ctx.addIssue({
        code: "custom",
        message: `must not contain control characters such as line breaks, tabs or escapes (found ${c})`,
      });
  });

/** A value a program gets as an argv word of its own: a leading "-" would make it an option. */
export const notAnOption = (s: string) => !s.startsWith("-");
export const NOT_AN_OPTION = "must not start with '-' (the program would read it as an option, not as this value)";
export const argText = text.refine(notAnOption, NOT_AN_OPTION);

/**
 * Unicode space characters (besides the ASCII space): the readiness check finds the model in
 * /v1/models with whitespace stripped, and these would never match.
 */
const UNICODE_SPACE = /[\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]/;

/** A path to a model directory: absolute, relative to the working directory or home, or with more than one "/". */
const isModelPath = (s: string) => /^(\/|\.\.?\/|~\/)/.test(s) || s.split("/").length > 2;

/**
 * A Hugging Face repo id as huggingface_hub's validate_repo_id accepts it: an optional namespace
 * and "/", then a name of at most 96 characters; letters, digits, "-", "_" and "." with a letter,
 * digit or "_" at both ends of each part; no "--" or "..", no ".git" at the end.
 */
const HF_ID = /^([A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?\/)?[A-Za-z0-9_]([A-Za-z0-9_.-]{0,94}[A-Za-z0-9_])?$/;
const isHfId = (s: string) => HF_ID.test(s) && !s.includes("--") && !s.includes("..") && !s.endsWith(".git");

/**
 * A model id or path, as `vllm serve` gets it and /v1/models lists it: a Hugging Face id, a catalog
 * alias (the same form) or a path. Anything else would reach vLLM as a name no hub or disk has, and
 * would miss the model catalog's defaults.
 */
export const modelId = argText
  .refine(
    (s) => !UNICODE_SPACE.test(s),
    "must not contain Unicode space characters such as U+00A0 (only the ASCII space)",
  )
  .superRefine((s, ctx) => {
    const edge = /^\s|\s$/.test(s);
    if (edge)
      ctx.addIssue({
        code: "custom",
        message: `must not start or end with a space (${JSON.stringify(s)}): no Hugging Face id or catalog name does, so the model catalog's defaults would be lost`,
      });
    // Other refinements already report these.
    if (edge || !s || s.startsWith("-") || UNICODE_SPACE.test(s) || s.includes("\0") || controlChar(s) !== undefined)
      return;
    if (!isModelPath(s) && !isHfId(s))
      ctx.addIssue({
        code: "custom",
        message:
          'is neither a Hugging Face model id (organisation/name: letters, digits, "-", "_" and ".") nor a path (starting with /, ./ or ~/)',
      });
  });

/** A long free text (chat template); still no NUL. */
export const longText = z
  .string()
  .min(1, "must not be empty")
  .max(1_000_000, "is longer than 1,000,000 characters")
  .refine((s) => !s.includes("\0"), "must not contain a NUL byte");

export const port = z
  .number()
  .int("must be a whole number")
  .min(1, "must be a TCP port (1-65535)")
  .max(65535, "must be a TCP port (1-65535)");

export const count = z
  .number()
  .int("must be a whole number")
  .min(1, "must be at least 1")
  .max(100_000, "is unreasonably large (max 100000)");

export const absolutePath = text.refine((s) => s.startsWith("/"), "must be an absolute path (starting with /)");

/** A path that may be relative (to the login user's home on SLURM) or absolute. */
export const filePath = text.refine((s) => !/[\n\r]/.test(s), "must not contain a line break");

/**
 * Where a SLURM job keeps its logs: sbatch reads `#SBATCH --output=<dir>/...` itself, unquoted
 * (spaces split it, quotes and backslashes vanish, # ends it, % patterns expand, and a line naming
 * hetjob or packjob starts a heterogeneous job), so only plain path characters are accepted.
 */
export const outputDir = filePath
  .refine(
    (s) => /^[A-Za-z0-9._/+,:@=-]+$/.test(s),
    "may only contain letters, digits and . _ - / + , : @ = (sbatch reads it unquoted in #SBATCH --output)",
  )
  .refine(
    (s) => !/hetjob|packjob/i.test(s),
    'must not contain "hetjob" or "packjob" (sbatch reads either word as a heterogeneous job separator)',
  );

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** An environment table: names are shell identifiers; values are text (numbers and booleans are stringified). */
export const envVars = z
  .record(
    z.string().regex(ENV_NAME, "environment variable names must match [A-Za-z_][A-Za-z0-9_]*"),
    z.union(
      [
        z
          .string()
          .refine((s) => !s.includes("\0"), "must not contain a NUL byte")
          .max(65536),
        z.number(),
        z.boolean(),
      ],
      {
        error: "environment values must be strings, numbers or booleans",
      },
    ),
  )
  .transform((env): Record<string, string> => Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)])));

/** SLURM names (job, partition, account, qos): what sbatch accepts without quoting surprises. */
export const slurmName = z
  .string()
  .min(1, "must not be empty")
  .max(200)
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._,+-]*$/,
    "may only contain letters, digits and . _ , + - (and must start with a letter or digit)",
  );

/** A SLURM hostlist expression such as `gpu[001-004],gpu010`. */
export const hostlist = z
  .string()
  .min(1, "must not be empty")
  .max(4096)
  .regex(/^[A-Za-z0-9._\-\[\],]+$/, "must be a SLURM hostlist such as gpu[001-004],gpu010");

/** SLURM time limit formats: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS, or UNLIMITED. */
export const slurmTime = z
  .string()
  .regex(
    /^(UNLIMITED|infinite|\d+|\d+:\d{1,2}|\d+:\d{1,2}:\d{1,2}|\d+-\d{1,2}|\d+-\d{1,2}:\d{1,2}|\d+-\d{1,2}:\d{1,2}:\d{1,2})$/,
    "must be a SLURM time such as 60, 04:00:00 or 2-00:00:00",
  );

/** sbatch --mem: a whole number with an optional unit K, M, G or T (M when none), as sbatch reads it. */
export const slurmMemory = z
  .string()
  .regex(/^\d+[KMGT]?$/, "must be a SLURM memory size such as 64G, 500000M or 0 (all of the node's memory)");

/** A service name (`[services.<name>]`): a DNS label short enough for every name built from it (jobs, folders, Kubernetes objects). */
export const SERVICE_NAME = /^[a-z]([-a-z0-9]{0,18}[a-z0-9])?$/;

/** Kubernetes DNS-1123 label (names, namespaces). */
export const k8sName = z
  .string()
  .max(63, "must be at most 63 characters")
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, "must be a DNS-1123 label: lower-case letters, digits and '-'");

/** `x.default(v)` -> `x.optional()`: what the file says stays distinguishable from prime-rl's default. */
export const bare = <T extends z.ZodType>(s: T): z.ZodType =>
  (s instanceof z.ZodDefault ? (s.unwrap() as z.ZodType) : s).optional();
