/**
 * The fleet's compile and model cache (issue 32) with the real engine: the single-node stack on the
 * SLURM test cluster with the real `vllm serve` (vLLM's CPU build from the pinned venv of
 * test/e2e/python-env.sh, the tiny model built there) behind the real vllm-router, deployed twice
 * with one slurm.cache_dir that starts empty: the first deployment fills it, the second starts
 * from it.
 *
 *   create -> ready   the create command's own time (it returns once every endpoint serves)
 *   ratio             second / first (goal <= 0.5)
 *   compile share     the engine's compilation (vLLM's "Warming up model for the compilation..." to
 *                     "Warming up done." on the CPU build, "torch.compile took X s in total" on GPUs)
 *                     over create -> ready
 *
 * Each run's job output must say `[fleet] compile cache: <dir> (empty)` then `(warm: N entries)`;
 * the engine log says whether vLLM loaded its AOT artifact ("Directly load AOT compilation from
 * path") or compiled again ("Compiling model again due to a load failure ..., reason: ...").
 * Needs root, the test cluster and the venv, like readiness-real; without them the section is skipped.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import { parseIslandResult } from "../components/slurm";
import {
  captureCommands,
  loginOf,
  readClusterEnv,
  requireProgramFresh,
  standinOverrides,
} from "../test/e2e/program-capture";
import { launcherDir, pythonEnv } from "../test/e2e/real-parts";
import { runRemote, type RemoteRun } from "../test/e2e/ssh";
import { expectRan, realClusterUnavailable, tinyModelOverrides } from "./real-cluster";
import { round, type Figure, type Section } from "./report";

const ID = "compile-cache";
const TITLE = "SLURM test cluster, real vLLM (CPU build): first vs second deployment over one compile cache";
const RATIO_TARGET = 0.5;
const log = (msg: string) => process.stderr.write(`bench ${ID}: ${msg}\n`);

/** vLLM's log time stamp (MM-DD HH:MM:SS, whole seconds) of the first line matching `re`, as seconds of the day. */
function stampOf(logText: string, re: RegExp): number | undefined {
  const line = logText.split("\n").find((l) => re.test(l));
  const m = line && / (\d\d):(\d\d):(\d\d) /.exec(line);
  return m ? Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]) : undefined;
}

/** What one engine log says of compilation. */
export interface CompileReport {
  /** Seconds compiling: torch.compile's own total (GPU), else the CPU runner's compile warm-up (whole seconds). */
  compileS?: number;
  /**
   * Seconds resolving the model's architecture ("non-default args" to "Resolved architecture", whole
   * seconds): vLLM inspects the model class in a subprocess (an import of torch and vLLM) unless
   * VLLM_CACHE_ROOT/modelinfos holds the answer.
   */
  inspectS?: number;
  /** "init engine (profile, create kv cache, warmup model) took X s". */
  initEngineS?: number;
  /** vLLM loaded its AOT artifact from the cache. */
  aotLoaded: boolean;
  /** vLLM found an artifact but compiled again; its reason. */
  loadFailure?: string;
  /** vLLM saved an AOT artifact. */
  aotSaved: boolean;
  /** The cache folder the artifact was read or written in. */
  artifact?: string;
}

export function compileReport(logText: string): CompileReport {
  const num = (re: RegExp) => {
    const m = re.exec(logText);
    return m ? Number(m[1]) : undefined;
  };
  const torchCompile = [...logText.matchAll(/torch\.compile took ([\d.]+) s in total/g)].reduce(
    (s, m) => s + Number(m[1]),
    0,
  );
  const warmStart = stampOf(logText, /Warming up model for the compilation/);
  const warmDone = stampOf(logText, /Warming up done\./);
  const argsAt = stampOf(logText, /non-default args/);
  const archAt = stampOf(logText, /Resolved architecture/);
  const loaded = /Directly load AOT compilation from path (\S+)/.exec(logText);
  const saved = /saved AOT compiled function to (\S+)/.exec(logText);
  return {
    compileS:
      torchCompile > 0
        ? torchCompile
        : warmStart !== undefined && warmDone !== undefined
          ? warmDone - warmStart
          : undefined,
    inspectS: argsAt !== undefined && archAt !== undefined ? archAt - argsAt : undefined,
    initEngineS: num(/init engine \(profile, create kv cache, warmup model\) took ([\d.]+) s/),
    aotLoaded: loaded !== null,
    loadFailure: /Compiling model again due to a load failure from \S+, reason: (.*)/.exec(logText)?.[1]?.trim(),
    aotSaved: saved !== null,
    artifact: (loaded ?? saved)?.[1],
  };
}

async function measure(): Promise<Figure[]> {
  const env = readClusterEnv();
  const py = pythonEnv();
  const privateKey = fs.readFileSync(env.FLEET_E2E_SSH_KEY, "utf8");
  const { dir } = launcherDir(py, "bench-cache", ["vllm", "vllm-router"]);
  const pulumiStack = "bench-compile-cache";
  // An empty cache folder of this bench's own, on storage every node of the test cluster sees.
  const cacheDir = `/tmp/fleet-bench-cache/${process.pid}-${Date.now()}`;
  const overrides = standinOverrides(
    env.FLEET_E2E_PARTITION,
    pulumiStack,
    tinyModelOverrides(py, { "slurm.cache_dir": cacheDir }),
    false,
    dir,
  );
  const outDir = String(overrides.output_dir);
  const { commands } = await captureCommands({
    stackFile: "single-node",
    pulumiStack,
    overrides,
    login: loginOf(env),
    privateKey,
    loadProgram: requireProgramFresh,
  });
  const c = commands[0];
  const conn = { ...loginOf(env), privateKey };
  expectRan(await runRemote(c.connection, c.delete, undefined, 180_000), "delete before the bench");
  const runs: { createS: number; cacheLine: string; report: CompileReport; load: string }[] = [];
  try {
    for (const which of ["first", "second"]) {
      const load = os.loadavg()[0].toFixed(2);
      let run: RemoteRun;
      let logs: { out: string; engine: string };
      try {
        run = await runRemote(c.connection, c.create, c.stdin, 20 * 60_000);
        expectRan(run, `${which} create`);
        const result = parseIslandResult(run.stdout);
        if (result.dryRun || result.adopted) throw new Error("expected a freshly submitted job");
        const island = `${outDir}/island-0`;
        const read = await runRemote(
          conn,
          `cat ${island}/slurm-${result.jobId}.out; echo; echo '=== engine'; cat ${island}/logs/job_${result.jobId}_*/node_0/i0-*.log`,
        );
        const [out, engine = ""] = read.stdout.split("\n=== engine\n");
        logs = { out, engine };
      } finally {
        expectRan(await runRemote(c.connection, c.delete, undefined, 180_000), `${which} delete`);
      }
      const cacheLine =
        /\[fleet\] compile cache: .*/.exec(logs.out)?.[0] ?? "(no compile cache line in the job output)";
      const report = compileReport(logs.engine);
      runs.push({ createS: run.ms / 1000, cacheLine, report, load });
      log(
        `${which}: create -> ready ${(run.ms / 1000).toFixed(1)} s (load ${load}); ${cacheLine}; compile ${report.compileS ?? "?"} s, model inspection ${report.inspectS ?? "?"} s, init engine ${report.initEngineS ?? "?"} s; AOT ${report.aotLoaded ? "loaded" : report.loadFailure ? `load failed (${report.loadFailure})` : "not loaded"}${report.aotSaved ? ", saved" : ""}`,
      );
    }
  } finally {
    await runRemote(conn, `rm -rf ${cacheDir}`);
  }
  const [first, second] = runs;
  if (!/\(empty\)$/.test(first.cacheLine))
    throw new Error(`the first deployment's cache was not empty: ${first.cacheLine}`);
  if (!/\(warm: \d+ entries\)$/.test(second.cacheLine))
    throw new Error(`the second deployment did not start from the cache: ${second.cacheLine}`);
  const share = (r: (typeof runs)[number]) => (r.report.compileS ?? NaN) / r.createS;
  const aot = (r: (typeof runs)[number]) =>
    r.report.aotLoaded
      ? "vLLM: Directly load AOT compilation"
      : r.report.loadFailure
        ? `vLLM: Compiling model again due to a load failure (${r.report.loadFailure})`
        : r.report.aotSaved
          ? "vLLM: saved AOT compiled function"
          : "vLLM: no AOT line";
  return [
    {
      name: "create -> ready, first deployment (empty cache)",
      value: round(first.createS, 1),
      unit: "s",
      note: `${first.cacheLine.replace(cacheDir, "<cache_dir>")}; ${aot(first)}; load ${first.load}; vLLM ${py.FLEET_PYENV_VLLM} CPU build, tiny model`,
    },
    {
      name: "create -> ready, second deployment (warm cache)",
      value: round(second.createS, 1),
      unit: "s",
      note: `${second.cacheLine.replace(cacheDir, "<cache_dir>")}; ${aot(second)}; load ${second.load}`,
    },
    {
      name: "second / first create -> ready",
      value: round(second.createS / first.createS, 2),
      unit: "x",
      target: { op: "<=", value: RATIO_TARGET },
      note: "on the CPU build most of a start is Python imports and process spawns, which no cache removes",
    },
    {
      // The ratio with everything but what the cache holds as in the first run: what the cache
      // itself saves, apart from the machine's load, which moves imports and spawns by tens of seconds.
      name: "second / first from the cache alone ((first - compile and model inspection saved) / first)",
      value: round(
        (first.createS -
          ((first.report.compileS ?? 0) - (second.report.compileS ?? 0)) -
          ((first.report.inspectS ?? 0) - (second.report.inspectS ?? 0))) /
          first.createS,
        2,
      ),
      unit: "x",
      note: `compilation ${first.report.compileS ?? "?"} s -> ${second.report.compileS ?? "?"} s; model inspection (VLLM_CACHE_ROOT/modelinfos) ${first.report.inspectS ?? "?"} s -> ${second.report.inspectS ?? "?"} s`,
    },
    {
      name: "compile share of a start, first deployment",
      value: round(share(first), 2),
      unit: "",
      note: `${first.report.compileS ?? "?"} s compiling (the CPU runner's compile warm-up, whole seconds) of ${first.createS.toFixed(1)} s; init engine ${first.report.initEngineS ?? "?"} s`,
    },
    {
      name: "compile share of a start, second deployment",
      value: round(share(second), 2),
      unit: "",
      note: `${second.report.compileS ?? "?"} s compiling of ${second.createS.toFixed(1)} s; init engine ${second.report.initEngineS ?? "?"} s`,
    },
  ];
}

export async function run(): Promise<Section> {
  const why = realClusterUnavailable();
  if (why) return { id: ID, title: TITLE, figures: [], skipped: why };
  return { id: ID, title: TITLE, figures: await measure() };
}
