/**
 * The tiny model of the real-vLLM tests (test/e2e/real/tiny-model.py) is made here, from a seed,
 * with no download: the same seed must give byte-identical files, another seed other weights.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./program-capture";
import { pythonEnv } from "./real-parts";

function build(seed: number): Record<string, string> {
  const env = pythonEnv();
  const out = fs.mkdtempSync(path.join(os.tmpdir(), `tiny-model-${seed}-`));
  try {
    execFileSync(
      path.join(env.FLEET_PYENV, "bin", "python"),
      [path.join(ROOT, "test", "e2e", "real", "tiny-model.py"), out, "--seed", String(seed)],
      { stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, HF_HUB_OFFLINE: "1" }, timeout: 300_000 },
    );
    return Object.fromEntries(
      fs
        .readdirSync(out)
        .sort()
        .map((f) => [
          f,
          createHash("sha256")
            .update(fs.readFileSync(path.join(out, f)))
            .digest("hex"),
        ]),
    );
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
}

describe("the tiny model (real vLLM's weights, made here)", () => {
  it("is deterministic from its seed, offline: same seed, same bytes; another seed, other weights", () => {
    const a = build(0);
    const b = build(0);
    const c = build(1);
    expect(Object.keys(a)).toEqual(
      expect.arrayContaining(["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"]),
    );
    expect(b).toEqual(a);
    expect(c["model.safetensors"]).not.toBe(a["model.safetensors"]);
  });
});
