import * as path from "node:path";
import type { Plugin } from "vitest/config";

const ROOT = path.resolve(__dirname, "..", "..");

/**
 * The program loads some of its own modules on first use with `require` (components/targets.ts: a
 * backend on lookup, so `plan` starts with its stack's target only). Vite runs the tests' TypeScript
 * in its own module graph, which such a `require` of a .ts file bypasses (Node cannot resolve it;
 * vitest-dev/vitest#846). Here each becomes a static import, so tests load those modules up front,
 * once, as one instance. Prepended on the first line: the source's line numbers stay.
 */
export function requiresAsImports(): Plugin {
  const program = [path.join(ROOT, "components") + path.sep, path.join(ROOT, "bin") + path.sep];
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
