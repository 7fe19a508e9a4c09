import { availableParallelism } from "node:os";
import * as path from "node:path";
import { defineConfig, type Plugin } from "vitest/config";

/**
 * The program loads some of its own modules on first use with `require` (components/targets.ts: a
 * backend on lookup, so `plan` starts with its stack's target only). Vite runs the tests' TypeScript
 * in its own module graph, which such a `require` of a .ts file bypasses (Node cannot resolve it;
 * vitest-dev/vitest#846). Here each becomes a static import, so tests load those modules up front,
 * once, as one instance. Prepended on the first line: the source's line numbers stay.
 */
function requiresAsImports(): Plugin {
  const program = [path.join(__dirname, "components") + path.sep, path.join(__dirname, "bin") + path.sep];
  return {
    name: "program-requires-as-imports",
    enforce: "pre",
    transform(code: string, id: string) {
      if (!id.endsWith(".ts") || !program.some((dir) => id.startsWith(dir))) return undefined;
      const imports: string[] = [];
      const out = code.replace(/\brequire\(("\.{1,2}\/[^"]+")\)/g, (call: string, spec: string) => {
        if (spec.endsWith('.json"')) return call; // Node reads JSON itself
        imports.push(`import * as __required${imports.length} from ${spec};`);
        return `__required${imports.length - 1}`;
      });
      return imports.length ? { code: imports.join(" ") + out, map: null } : undefined;
    },
  };
}

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
