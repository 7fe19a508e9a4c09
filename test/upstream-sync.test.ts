import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { derive, upstreamDir, vendoredDir } from "../bin/sync-upstream";

const shared = fs.existsSync(path.join(upstreamDir, "vllm-serve.json"));

describe("vendored upstream flag subsets", () => {
  it("../shared/upstream is present (CI puts shared/ beside the clone)", () => {
    expect(shared, `expected the upstream manifests at ${upstreamDir}`).toBe(true);
  });

  it.runIf(shared)("components/upstream/*.json match what `npm run sync-upstream` derives", () => {
    for (const [file, data] of Object.entries(derive())) {
      const vendored = JSON.parse(fs.readFileSync(path.join(vendoredDir, file), "utf8"));
      expect(vendored, `${file} is stale: run npm run sync-upstream`).toEqual(data);
    }
  });
});
