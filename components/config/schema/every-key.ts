import { z } from "zod";

/**
 * `value` with every key of its table present, in the schema's order (undefined when unset and
 * without a default), as the canonical config lists them; for a tagged union, of the option it is.
 */
export function everyKey<T extends object>(schema: z.ZodObject | z.ZodDiscriminatedUnion<z.ZodObject[]>, value: T): T {
  const table = schema instanceof z.ZodObject ? schema : schema.options.find((o) => o.safeParse(value).success)!;
  return Object.fromEntries(Object.keys(table.shape).map((k) => [k, value[k as keyof T]])) as T;
}
