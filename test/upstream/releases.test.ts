/**
 * docs/vllm-releases.md lists what changed in `vllm serve` between the vendored releases: generated
 * by `npm run sync-upstream` (bin/vllm-releases.ts) from test/fixtures/upstream/vllm-serve-<release>.json,
 * so it cannot go stale without failing here.
 */
import * as fs from "node:fs";
import { describe, expect, it } from "vitest";
import { fixturesDir, vllmServeFile, vllmServeVersions } from "../../bin/sync-upstream";
import { releaseChanges, releasesMarkdown, releasesPage, releasesPageText } from "../../bin/vllm-releases";

/** A manifest in introspect.py's shape with only what releaseChanges reads. */
function manifest(version: string, flags: Record<string, object>, extra: Record<string, unknown> = {}) {
  return {
    version,
    source: `vllm ${version} (PyPI), argparse of vllm serve`,
    flag_count: Object.keys(flags).length,
    flags,
    kv_connectors: {},
    kv_transfer_config_fields: {},
    post_parse_validated_values: { "--tool-call-parser": ["hermes"], "--reasoning-parser": ["qwen3"] },
    env: [],
    ...extra,
  };
}

describe("docs/vllm-releases.md", () => {
  it("is what sync-upstream makes of the vendored manifests (run npm run sync-upstream)", () => {
    expect(fs.readFileSync(releasesPage, "utf8")).toBe(
      releasesPageText(fixturesDir, vllmServeVersions(), vllmServeFile),
    );
  });

  it("finds each kind of change (synthetic manifests)", () => {
    const older = manifest("1.0.0", {
      "--gone": { type: "int" },
      "--enable-x": { type: "bool", negative_form: "--no-enable-x" },
      "--mode": { type: "str", choices: ["a", "b"], default: "a" },
      "--dtype": { type: "str", choices: ["fp8"] },
    });
    const newer = manifest("1.1.0", {
      "--new": { type: "int" },
      "--enable-x": { type: "bool", negative_form: "--disable-x", hidden_option_strings: ["--no-enable-x"] },
      "--mode": { type: "str", choices: ["a", "c"], default: "c" },
      "--dtype": { type: "str" },
    });
    const c = releaseChanges(older, newer);
    expect(c.added).toEqual(["--new"]);
    expect(c.removed).toEqual(["--gone"]);
    expect(c.offForm).toEqual([["--enable-x", "--no-enable-x", "--disable-x", true]]);
    expect(c.choices).toEqual([
      ["--dtype", [], ["fp8"], true],
      ["--mode", ["c"], ["b"], false],
    ]);
    expect(c.defaults).toEqual([["--mode", "a", "c"]]);
    const page = releasesMarkdown(["1.0", "1.1"], (v) => (v === "1.0" ? older : newer));
    expect(page).toContain("## 1.0 → 1.1");
    expect(page).toContain(
      "1 added, 1 removed, 1 switches turned off by another spelling, 2 with other choices, 1 with another default",
    );
    expect(page).toContain("| `--enable-x` | `--no-enable-x` | `--disable-x` |");
    expect(page).toContain("| `--dtype` | none | any value now (no choice list) |");
  });

  it("0.32 → 0.33: the --no- forms became --enable-x / --disable-x pairs, which 0.33 still parses hidden", () => {
    const read = (v: string) => JSON.parse(fs.readFileSync(`${fixturesDir}/${vllmServeFile(v)}`, "utf8"));
    const c = releaseChanges(read("0.32"), read("0.33"));
    expect(c.offForm).toContainEqual([
      "--enable-prefix-caching",
      "--no-enable-prefix-caching",
      "--disable-prefix-caching",
      true,
    ]);
    expect(c.offForm.every(([, , , hidden]) => hidden)).toBe(true);
    expect(c.removed).toEqual([]);
  });
});
