/**
 * The invalid-input corpus through the Pulumi program itself: index.ts under mocks, with the
 * fixture as its stack file (the `stackFile` config key). Each must fail before a single resource
 * is registered, with an error that names every expected key path and message fragment, so
 * `pulumi preview` stops where `npm run plan` does and nothing half-deploys.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { ConfigError } from "../../components/config";
import { FIXTURE_LIST } from "./invalid-corpus";
import { drainRpcs, installMocks, setConfig, slurmConfig } from "../program-harness";

// A finished test's outstanding Pulumi RPCs must not reach the next test's mocks.
afterEach(drainRpcs);

describe("invalid stack corpus: the Pulumi program refuses each before registering anything", () => {
  it("covers the whole corpus", () => {
    expect(FIXTURE_LIST.length).toBeGreaterThanOrEqual(150);
  });

  it.each(FIXTURE_LIST.map((f) => [f.name, f] as const))("%s", async (_, f) => {
    const registered = installMocks("corpus");
    setConfig(slurmConfig({ stackFile: f.file }));
    vi.resetModules();
    let error: unknown;
    try {
      await import("../../index");
    } catch (e) {
      error = e;
    }
    expect(error, `${f.name} was deployed`).toBeDefined();
    expect((error as Error).name, String(error)).toBe(ConfigError.name);
    const message = (error as Error).message;
    for (const p of f.paths)
      expect(message, `no issue at ${JSON.stringify(p)}`).toMatch(
        new RegExp(
          `^  - ${(p || "<file>").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}( \\(line \\d+, column \\d+\\))?: `,
          "mu",
        ),
      );
    for (const m of f.messages) expect(message.toLowerCase()).toContain(m.toLowerCase());
    expect(registered).toEqual([]);
  });
});
