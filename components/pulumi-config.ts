import * as pulumi from "@pulumi/pulumi";
import { NS } from "./namespace";

export { NS };

/**
 * A credential from Pulumi config. It must be a config secret: a value stored in plain text in
 * Pulumi.<stack>.yaml is refused rather than used. Undefined when the key is not set.
 */
export function secretConfig(config: pulumi.Config, key: string, hint = "< <file>"): pulumi.Output<string> | undefined {
  if (pulumi.runtime.getConfig(`${NS}:${key}`) === undefined) return undefined;
  if (!isConfigSecret(`${NS}:${key}`)) {
    throw new Error(
      `${NS}:${key} is stored in plain text; store it as a secret: pulumi config set --secret ${NS}:${key} ${hint}`,
    );
  }
  return config.requireSecret(key);
}

/** The SDK's own check (runtime/config.js), not in its typings; absent in an SDK that lacks it. */
function isConfigSecret(fullKey: string): boolean {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const runtime = require("@pulumi/pulumi/runtime/config") as { isConfigSecret?: (k: string) => boolean };
  return runtime.isConfigSecret ? runtime.isConfigSecret(fullKey) : true;
}

/**
 * Runs a step of the program whose errors are the user's to fix (the stack file, Pulumi config):
 * they reach `pulumi up` as a RunError, which the SDK prints as its message alone, without a
 * stack trace of our code (@pulumi/pulumi errors.ts, RunError; cmd/run/run.ts prints its message).
 */
export function userStep<T>(step: () => T): T {
  try {
    return step();
  } catch (e) {
    if (!(e instanceof Error) || e instanceof pulumi.RunError) throw e;
    // The SDK recognises a RunError by a marker, not by name: the original name (ConfigError) stays.
    const user = new pulumi.RunError(e.message);
    user.name = e.name;
    throw user;
  }
}
