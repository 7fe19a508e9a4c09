/**
 * vec-inf side by side (issue 19): regenerates the comparison of docs/vec-inf.md with
 * test/compat/vec-inf-side-by-side.py, which runs vec-inf's own `vec-inf launch` (sbatch captured by a
 * shim) and our plan CLI for every model both catalogs know, and fails when the page's generated
 * section is stale, so a change in either tool shows. Needs no SLURM cluster, only the pinned Python
 * environment with vec-inf: FLEET_PYENV (the venv), else FLEET_PYENV_FILE (its env file), else what
 * `bash test/e2e/python-env.sh` builds.
 */
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { newerSource, PROGRAM_SOURCES } from "../../components/build-freshness";
import { pythonVenv } from "./python-env";

const ROOT = path.resolve(__dirname, "..", "..");
const SCRIPT = path.join(ROOT, "test", "compat", "vec-inf-side-by-side.py");
const PAGE = path.join(ROOT, "docs", "vec-inf.md");
const BEGIN = "<!-- BEGIN GENERATED: test/compat/vec-inf-side-by-side.py -->";
const END = "<!-- END GENERATED -->";

describe("vec-inf side by side (docs/vec-inf.md)", () => {
  let python: string;
  let keep: string;
  let run: ReturnType<typeof spawnSync>;

  beforeAll(() => {
    const venv = pythonVenv();
    python = path.join(venv, "bin", "python");
    for (const exe of [python, path.join(venv, "bin", "vec-inf")]) {
      if (!fs.existsSync(exe)) throw new Error(`${exe} is missing: FLEET_PYENV=${venv} is not a venv with vec-inf`);
    }
    // The script plans with dist/bin/plan.js: built from this checkout's sources, when it is older
    // than one. Not rebuilt otherwise: .ci/run runs the Kubernetes files beside this one, reading dist/.
    const plan = path.join(ROOT, "dist", "bin", "plan.js");
    if (!fs.existsSync(plan) || newerSource(ROOT, plan, [...PROGRAM_SOURCES, "bin"]))
      execFileSync("npm", ["run", "build"], { cwd: ROOT, stdio: ["ignore", "ignore", "inherit"] });
    keep = fs.mkdtempSync(path.join(os.tmpdir(), "vec-inf-e2e-"));
    run = spawnSync(python, [SCRIPT, "--check", PAGE, "--keep", keep], { cwd: ROOT, encoding: "utf8" });
  }, 35 * 60_000);

  it("vec-inf's own launch ran for every shared model, sbatch captured, nothing submitted", () => {
    expect(run.error).toBeUndefined();
    const captured = fs.readdirSync(keep).filter((f) => f.endsWith(".captured.sbatch"));
    const page = fs.readFileSync(PAGE, "utf8");
    const rows =
      page.slice(page.indexOf(BEGIN), page.indexOf(END)).match(/^\| `[^`]+` \| `[^`]+\/[^`]+` \| \d+ x \d+ \|/gm) ?? [];
    expect(captured.length).toBeGreaterThan(0);
    expect(captured.length).toBe(rows.length);
    for (const file of captured) {
      const name = file.replace(/\.captured\.sbatch$/, "");
      const script = fs.readFileSync(path.join(keep, file), "utf8");
      expect(script).toContain(`#SBATCH --job-name=${name}-vec-inf`);
      expect(script).toMatch(/^vllm serve /m);
      // ... and ours for the same model.
      expect(fs.readdirSync(path.join(keep, "plan-out", name, "island-0")).some((f) => f.endsWith(".sbatch"))).toBe(
        true,
      );
    }
  });

  it("the generated section of docs/vec-inf.md is current (regenerate with --write docs/vec-inf.md)", () => {
    expect(run.status, `${run.stderr}\n${run.stdout}`).toBe(0);
  });
});
