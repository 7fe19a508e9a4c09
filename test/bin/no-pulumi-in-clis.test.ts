import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers";

// The CLIs are pure (config → plan → render): loading the Pulumi SDK costs them about a second of
// start-up, so each backend keeps its Pulumi side in deploy.ts, out of what the CLIs import.
describe("the CLIs load no Pulumi SDK", () => {
  it.each(["bin/plan.ts", "bin/fleet.ts"])("%s", (file) => {
    const probe = `require(${JSON.stringify(`./${file}`)}); console.log(JSON.stringify(Object.keys(require.cache).filter((k) => k.includes("/@pulumi/")).slice(0, 3)));`;
    const r = spawnSync(process.execPath, ["--require", "tsx/cjs", "-e", probe], {
      cwd: ROOT,
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout.trim().split("\n").pop()!)).toEqual([]);
  });
});
