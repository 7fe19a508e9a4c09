/**
 * LMCache's optional layer over the pinned environment (test/e2e/lmcache-env.sh): found, never built,
 * here. .ci/run builds it beside the pinned venv; a machine without it runs the LMCache stand-in,
 * and the suites that need the real server skip, saying why.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

export interface LmcacheLayer {
  /** The layer's venv: bin/lmcache (the server), bin/python (imports lmcache and the pinned vLLM). */
  venv: string;
}

/** The layer's env file: FLEET_LMCACHE_ENV_FILE (built elsewhere), else the cached one, else none. */
function layerEnvFile(): string | undefined {
  if (process.env.FLEET_LMCACHE_ENV_FILE) return process.env.FLEET_LMCACHE_ENV_FILE;
  try {
    return execFileSync("bash", [path.join(__dirname, "lmcache-env.sh"), "--cached"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    return undefined;
  }
}

/** The layer where it is built; undefined (with the reason in `lmcacheMissing`) where not. */
export function lmcacheLayer(): LmcacheLayer | undefined {
  const file = layerEnvFile();
  if (!file || !fs.existsSync(file)) return undefined;
  const venv = /^FLEET_LMCACHE_VENV=(.*)$/m.exec(fs.readFileSync(file, "utf8"))?.[1];
  return venv && fs.existsSync(path.join(venv, "bin", "lmcache")) ? { venv } : undefined;
}

/** Why a suite that needs the real LMCache server skips, or undefined when the layer is there. */
export function lmcacheMissing(): string | undefined {
  return lmcacheLayer()
    ? undefined
    : "LMCache's layer is not built (bash test/e2e/lmcache-env.sh builds it; .ci/run does): the real LMCache server cannot run";
}
