import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import { requiresAsImports } from "./test/setup/requires-as-imports";

export default defineConfig({
  plugins: [requiresAsImports()],
  test: {
    include: ["test/**/*.test.ts"],
    // The real-SLURM end-to-end suite needs root and a running cluster; it has its own command.
    exclude: ["test/e2e/**", "node_modules/**"],
    // Installs shellcheck when it is missing and the machine can (test/setup/shellcheck.ts).
    globalSetup: ["test/setup/shellcheck.ts"],
    // vitest's default (cpus - 1) is one worker on a 2-core machine; many tests wait on child
    // processes (bash, shellcheck, stand-ins), so at least two workers keep both cores busy.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
