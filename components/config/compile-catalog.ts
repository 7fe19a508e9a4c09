/**
 * Run by `npm run build` after tsc (`node dist/components/config/compile-catalog.js`): writes the
 * built-in model catalog as JSON into dist/, which `plan` reads instead of the YAML (catalog.ts).
 */
import { compileBuiltinCatalog } from "./catalog";

if (require.main === module) compileBuiltinCatalog();
