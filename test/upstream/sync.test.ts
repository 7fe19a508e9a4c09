import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import {
  derive,
  fixturesDir,
  fixturesFromSource,
  sourceAvailable,
  sourceDir,
  vendoredDir,
} from "../../bin/sync-upstream";

describe("vendored upstream manifests", () => {
  it("components/upstream/*.json match what `npm run sync-upstream` derives from test/fixtures/upstream", () => {
    for (const [file, data] of Object.entries(derive())) {
      const vendored = JSON.parse(fs.readFileSync(path.join(vendoredDir, file), "utf8"));
      expect(vendored, `${file} is stale: run npm run sync-upstream`).toEqual(data);
    }
  });

  // The drift check against the upstream source folder, which only the project's own machines have
  // beside the clone; a user's clone skips it, and says so in the test name.
  const name = sourceAvailable()
    ? `test/fixtures/upstream matches the upstream manifests in ${sourceDir}`
    : `SKIPPED: no upstream manifests at ${sourceDir} (set FLEET_UPSTREAM_DIR) to compare test/fixtures/upstream with`;
  it.runIf(sourceAvailable())(name, () => {
    for (const [file, text] of Object.entries(fixturesFromSource())) {
      expect(fs.readFileSync(path.join(fixturesDir, file), "utf8"), `${file} is stale: run npm run sync-upstream`).toBe(
        text,
      );
    }
  });
});
