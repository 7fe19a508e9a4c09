// ESLint flat config: `npm run lint`. typescript-eslint's recommended set without type information
// (no parserOptions.project), so a run does not build a TypeScript program on 2 cores; `npm run
// typecheck` does that. eslint-config-prettier comes last and turns off the style rules Prettier owns.
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import prettier from "eslint-config-prettier";
import globals from "globals";

export default tseslint.config(
  {
    ignores: [
      "node_modules/",
      "dist/",
      "bin-out/",
      "out/",
      ".plan-out/",
      "bench/out/",
      "scratch/",
      "schema/",
      "components/upstream/*.json",
      // A shell script among the Node stand-ins (the python3 shim).
      "test/fixtures/standins/bin/python3",
      "package-lock.json",
    ],
  },
  {
    files: ["**/*.ts"],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    languageOptions: { globals: globals.node },
    rules: {
      // `const { layout: _a, ...rest } = x` is how the code drops a key from a copy.
      "@typescript-eslint/no-unused-vars": ["error", { ignoreRestSiblings: true }],
      // `let timer` is declared before the closures that clear it and set after them, so a callback that
      // runs early sees undefined instead of hitting the temporal dead zone.
      "prefer-const": ["error", { ignoreReadBeforeAssign: true }],
      // A `[` inside a class stays escaped: zod copies these patterns into schema/stack.schema.json, and
      // engines with nested classes (Rust's regex, used by the TOML editor tooling) read a bare `[` as one.
      "no-useless-escape": ["error", { allowRegexCharacters: ["["] }],
    },
  },
  {
    // Tests poke at rendered objects, mocks and parsed outputs of every shape.
    files: ["test/**/*.ts"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
  {
    // JSON plumbing: parsed TOML/YAML/JSON walked by key before zod (or nothing) checks its shape, and
    // caught errors read for .code/.line; everywhere else in components/ `any` stays an error.
    files: [
      "bin/schema.ts",
      "bin/sync-upstream.ts",
      "bin/vllm-releases.ts",
      "components/config/catalog.ts",
      "components/config/key-reference.ts",
      "components/config/key-reference-tables.ts",
      "components/config/load.ts",
      "components/config/normalise.ts",
      "components/config/normalise-prime.ts",
      "components/config/prime-deployment.ts",
      "components/config/overrides.ts",
      "components/config/toml.ts",
      "components/ops/fleet-view.ts",
      "components/ops/source.ts",
    ],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
  {
    // The test stand-ins: plain CommonJS run by bare Node.js 20 on SLURM nodes (no TypeScript, no npm).
    files: ["test/fixtures/standins/lib/*.js", "test/fixtures/standins/bin/[a-z]*"],
    extends: [js.configs.recommended],
    languageOptions: { sourceType: "commonjs", ecmaVersion: 2022, globals: globals.node },
    rules: { "no-unused-vars": ["error", { ignoreRestSiblings: true }] },
  },
  prettier,
);
