/**
 * The benches that run the real vLLM on the SLURM test cluster (readiness-real, compile-cache) need
 * it up already, and root for it and the pinned venv: why a section is skipped, or undefined.
 */
import * as fs from "node:fs";
import { CLUSTER_ENV_FILE } from "../test/e2e/program-capture";

export function realClusterUnavailable(): string | undefined {
  if (process.platform !== "linux") return "the SLURM test cluster runs on Linux only";
  if (process.getuid?.() !== 0) return "the SLURM test cluster and the venv need root; run npm run bench as root";
  if (!fs.existsSync(CLUSTER_ENV_FILE)) return "the SLURM test cluster is not up (bash test/e2e/cluster/up.sh)";
  return undefined;
}
