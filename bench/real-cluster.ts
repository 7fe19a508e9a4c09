/**
 * What the benches that run the real vLLM on the SLURM test cluster (readiness-real, compile-cache)
 * share: whether they can run, the overrides that put single-node on the tiny model, and their
 * check of a remote command.
 */
import * as fs from "node:fs";
import { CLUSTER_ENV_FILE } from "../test/e2e/program-capture";
import type { PythonEnv } from "../test/e2e/real-parts";
import type { RemoteRun } from "../test/e2e/ssh";

/** They need the cluster up already, and root for it and the pinned venv: why a section is skipped, or undefined. */
export function realClusterUnavailable(): string | undefined {
  if (process.platform !== "linux") return "the SLURM test cluster runs on Linux only";
  if (process.getuid?.() !== 0) return "the SLURM test cluster and the venv need root; run npm run bench as root";
  if (!fs.existsSync(CLUSTER_ENV_FILE)) return "the SLURM test cluster is not up (bash test/e2e/cluster/up.sh)";
  return undefined;
}

/** The real engine on the tiny model, one CPU "GPU", a small fixed KV cache, and time to start on 2 cores. */
export const tinyModelOverrides = (py: PythonEnv, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  "model.name": py.FLEET_TINY_MODEL,
  "parallel.tp": 1,
  "vllm_extra.kv_cache_memory_bytes": 256 * 1024 * 1024,
  "slurm.ready_timeout": 900,
  ...extra,
});

/** Fails the bench with the last 20 lines of stderr of a remote command that did not exit 0. */
export function expectRan(run: RemoteRun, what: string): void {
  if (run.code !== 0)
    throw new Error(`${what} failed (exit ${run.code}): ${run.stderr.trim().split("\n").slice(-20).join("\n")}`);
}
