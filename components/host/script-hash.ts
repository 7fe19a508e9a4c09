import { createHash } from "node:crypto";

/**
 * The replacement key of an island's job or run: a hash of its unique name and the script it runs.
 * A new hash (any change to what runs) replaces the job or run; the create command also compares it
 * to adopt only what this same script started.
 */
export function scriptHash(name: string, script: string): string {
  return createHash("sha256").update(name).update("\0").update(script).digest("hex").slice(0, 16);
}
