/**
 * vllm_version (prime-rl's layout: [vllm_fleet] vllm_version): the vLLM release a stack names picks
 * the `vllm serve` manifest that vllm_extra, the generated command lines and the planner's own flags
 * are checked against, how a switch turned off is spelled, and the Kubernetes image. The stand-in
 * `vllm` plays the release STANDIN_VLLM_VERSION names.
 */
import { afterAll, describe, expect, it } from "vitest";
import { buildPlan } from "../../components/planner";
import { checkArgv } from "../../components/upstream/check";
import { vllmArgvOf } from "../../components/plan/engines/vllm/argv";
import { NEWEST_VLLM_VERSION, VLLM_VERSIONS } from "../../components/plan/engines/vllm/config/version";
import { loadConfigText } from "../../components/config";
import { issuesOf, load, SLURM } from "../helpers";
import { runToExit, stopAll } from "../standins-harness";

const MODEL = `[model]\nname = "Qwen/Qwen3-0.6B"\n`;
const argvOf = (text: string) => buildPlan(load(text), "t").islands[0].engines[0].argv.map(String);
const prime = (fleet: string) =>
  loadConfigText(`[vllm]\nmodel = "Qwen/Qwen3-0.6B"\n${fleet}\n[slurm]\njob_name = "t"\n`, "t.toml");

afterAll(() => stopAll());

describe("vllm_version", () => {
  it("defaults to the newest release with a manifest (0.33), and takes each of them", () => {
    expect(VLLM_VERSIONS).toEqual(["0.32", "0.33"]);
    expect(NEWEST_VLLM_VERSION).toBe("0.33");
    expect(load(MODEL + SLURM).vllm_version).toBe("0.33");
    expect(load(`vllm_version = "0.32"\n` + MODEL + SLURM).vllm_version).toBe("0.32");
  });

  it("refuses a release without a manifest, naming the key", () => {
    const issues = issuesOf(`vllm_version = "0.31"\n` + MODEL + SLURM);
    expect(issues.map((i) => i.path)).toContain("vllm_version");
  });

  it("the planner spells a switch turned off as the release does (enable_prefix_caching, vllm_extra)", () => {
    const text = (v: string) =>
      `vllm_version = "${v}"\nenable_prefix_caching = false\n${MODEL}[vllm_extra]\nenable_chunked_prefill = false\n${SLURM}`;
    const old = argvOf(text("0.32"));
    expect(old).toEqual(expect.arrayContaining(["--no-enable-prefix-caching", "--no-enable-chunked-prefill"]));
    expect(old).not.toContain("--disable-prefix-caching");
    const next = argvOf(text("0.33"));
    expect(next).toEqual(expect.arrayContaining(["--disable-prefix-caching", "--disable-chunked-prefill"]));
    expect(next).not.toContain("--no-enable-prefix-caching");
  });

  it("vllm_extra is checked against the named release: a 0.33 flag is refused at 0.32, pointing at vllm_version", () => {
    const text = (v: string) => `vllm_version = "${v}"\n${MODEL}[vllm_extra]\nsleep_mode_backend = "cumem"\n${SLURM}`;
    expect(argvOf(text("0.33"))).toEqual(expect.arrayContaining(["--sleep-mode-backend", "cumem"]));
    const [issue] = issuesOf(text("0.32"));
    expect(issue.path).toBe("vllm_extra.sleep_mode_backend");
    expect(issue.message).toMatch(/not a `vllm serve` flag of vLLM 0\.32 \(vLLM 0\.33 has it: set vllm_version\)/);
  });

  it("checkArgv checks a command line against the named release's flags", () => {
    expect(checkArgv("vllm", ["m", "--disable-prefix-caching"], "0.33")).toEqual([]);
    expect(checkArgv("vllm", ["m", "--disable-prefix-caching"], "0.32")).toEqual([
      "vllm: unknown flag --disable-prefix-caching",
    ]);
    expect(checkArgv("vllm", ["m", "--no-enable-prefix-caching"], "0.32")).toEqual([]);
    expect(() => checkArgv("vllm", ["m"], "0.1")).toThrow(/no vllm serve manifest for vLLM 0\.1/);
  });

  it("prime-rl's layout: [vllm_fleet] vllm_version, and `--vllm.<flag> false` read back in the release's spelling", () => {
    expect(prime("").vllm_version).toBe("0.33");
    const cfg = prime(`[vllm_fleet]\nvllm_version = "0.32"\nengine = "vllm"`);
    expect(cfg.vllm_version).toBe("0.32");
    const line = ["inference", "--vllm.model", "m", "--vllm.enable-prefix-caching", "false"];
    expect(vllmArgvOf(line, "0.32").map(String)).toEqual(["vllm", "serve", "m", "--no-enable-prefix-caching"]);
    expect(vllmArgvOf(line, "0.33").map(String)).toEqual(["vllm", "serve", "m", "--disable-prefix-caching"]);
  });

  it("on Kubernetes the engine image is the named release's, unless kubernetes.image is set", () => {
    const k8s = (v: string, image = "") =>
      load(`vllm_version = "${v}"\n${MODEL}[kubernetes]\nrouter_image = "r.example/vllm-router:1"\n${image}`);
    const image = (cfg: ReturnType<typeof load>) => (cfg.target as unknown as { image: string }).image;
    expect(image(k8s("0.32"))).toBe("vllm/vllm-openai:v0.32.0");
    expect(image(k8s("0.33"))).toBe("vllm/vllm-openai:v0.33.0");
    expect(image(k8s("0.32", `image = "r.example/vllm:mine"`))).toBe("r.example/vllm:mine");
  });
});

describe("the stand-in vllm plays the release STANDIN_VLLM_VERSION names (default the newest)", () => {
  const CHECK = { STANDIN_CHECK_ONLY: "1" };
  const serve = (flag: string, v?: string) =>
    runToExit("vllm", ["serve", "m", flag], v ? { ...CHECK, STANDIN_VLLM_VERSION: v } : CHECK);

  it("0.33 (default) takes --disable-prefix-caching and the hidden --no-enable-prefix-caching; 0.32 only the latter", async () => {
    const [fresh, hidden, old, oldNew, oldAdded] = await Promise.all([
      serve("--disable-prefix-caching"),
      serve("--no-enable-prefix-caching"),
      serve("--no-enable-prefix-caching", "0.32"),
      serve("--disable-prefix-caching", "0.32"),
      serve("--monokernel", "0.32"),
    ]);
    expect([fresh.code, hidden.code, old.code], fresh.stderr + hidden.stderr + old.stderr).toEqual([0, 0, 0]);
    expect(oldNew.code).toBe(2);
    expect(oldNew.stderr).toContain("--disable-prefix-caching");
    expect(oldAdded.code).toBe(2);
    expect(oldAdded.stderr).toContain("--monokernel");
  });
});
