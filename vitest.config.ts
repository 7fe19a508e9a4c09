import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The real-SLURM end-to-end suite needs root and a running cluster; it has its own command.
    exclude: ["test/e2e/**", "node_modules/**"],
    // Installs shellcheck when it is missing and the machine can (test/setup/shellcheck.ts).
    globalSetup: ["test/setup/shellcheck.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
