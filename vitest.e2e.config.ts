import { defineConfig } from "vitest/config";

// The real-SLURM end-to-end suite: needs root and the test cluster (test/e2e/cluster/up.sh).
export default defineConfig({
  test: {
    include: ["test/e2e/**/*.e2e.test.ts"],
    fileParallelism: false,
    testTimeout: 300_000,
    hookTimeout: 300_000,
  },
});
