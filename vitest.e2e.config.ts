import { defineConfig } from "vitest/config";
import { requiresAsImports } from "./test/setup/requires-as-imports";

// The real-SLURM end-to-end suite: needs root and the test cluster (test/e2e/cluster/up.sh).
export default defineConfig({
  // The program's lazy requires of its own modules, as imports (test/setup/requires-as-imports.ts).
  plugins: [requiresAsImports()],
  test: {
    include: ["test/e2e/**/*.e2e.test.ts"],
    // The pinned venv of the real parts (vLLM CPU build, vllm-router, Mooncake): test/e2e/python-env.sh.
    globalSetup: ["test/e2e/setup-python.ts"],
    fileParallelism: false,
    testTimeout: 300_000,
    hookTimeout: 300_000,
  },
});
