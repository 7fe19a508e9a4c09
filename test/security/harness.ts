/**
 * Machinery for test/security/injection-corpus.ts: local stand-ins for the scheduler and the fleet's
 * programs, a small process pool, sbatch's #SBATCH parser, kubelet's $(VAR) expansion and batched
 * shellcheck. Nothing here talks to a cluster.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { shellcheckAvailable } from "../shellcheck";

/** Job id the fake sbatch hands out. */
export const FAKE_JOB_ID = "4242";
/**
 * Every fake node resolves here, so the launch body's TCP waits reach this process's listeners: a
 * loopback address of this test process's own, so two test runs at once never share a listener.
 */
export const FAKE_NODE_ADDR = `127.${(process.pid >> 8) & 255}.${process.pid & 255}.${2 + Math.floor(Math.random() * 250)}`;

/**
 * Records argv (NUL-separated) and the exported environment under $FAKE_REC/<dir> (created by the
 * test), one file pair per process, with builtins only: these run many thousand times.
 */
const RECORD = `rec() {
  local f="$FAKE_REC/$1/\${0##*/}.$$" v
  shift
  for v in $(compgen -e); do printf '%s=%s\\0' "$v" "\${!v}"; done > "$f.env"
  printf '%s\\0' "$@" > "$f.argv"
}`;

const node = `node\${SLURM_PROCID:-x}`;

/**
 * An engine: `vllm serve <model> ...`, prime-rl's `inference --vllm.model <model> ...`, or SGLang's
 * `python3 -m sglang.launch_server --model-path <model> ...` (the python3 stand-in runs this as
 * `sglang.launch_server`). On Kubernetes (FAKE_MODE=k8s) it writes its name and argv to $FAKE_OUT and exits.
 */
const ENGINE = `${RECORD}
if [ "\${FAKE_MODE:-}" = k8s ]; then printf '%s\\0' "\${0##*/}" "$@" > "$FAKE_OUT"; exit 0; fi
rec ${node} "$@"
model=
if [ "$1" = serve ]; then
  model=$2 served=1
else
  prev=
  for a; do [ "$prev" = --vllm.model ] || [ "$prev" = --model-path ] && model=$a served=1; prev=$a; done
fi
if [ -n "\${served:-}" ]; then
  printf '%s' "$model" | jq -cRs '{object: "list", data: [{id: ., object: "model"}]}' > "$FAKE_STATE/models.json.$$" && mv -f "$FAKE_STATE/models.json.$$" "$FAKE_STATE/models.json"
fi
read -ra want <<< "$FAKE_EXPECT"
n=\${SLURM_PROCID:-0}
for ((i = 0; i < 500; i++)); do
  have=("$FAKE_REC/node$n"/*.argv)
  [ "\${#have[@]}" -ge "\${want[$n]}" ] && exit 3
  /bin/sleep 0.02
done
exit 3`;

/**
 * The stand-ins. The fleet's programs record what they were started with; an engine (`vllm`,
 * prime-rl's `inference`) also writes the /v1/models body a real engine would serve for its model,
 * then exits once every process planned on its node has recorded (so the node's `wait -n` returns
 * and the job ends); the others stay up until the node kills them. Scheduler commands keep their
 * state in $FAKE_STATE; sbatch runs the batch script at once (synchronously, like a job that starts
 * immediately), and srun runs its stdin with bash once per node with SLURM_PROCID set.
 */
export const FAKES: Record<string, string> = {
  vllm: ENGINE,
  inference: ENGINE,
  // SGLang's programs are Python modules: \`python3 -m <module>\` runs the stand-in named after the
  // module (so records name it), anything else the system's python3.
  python3: `if [ "$1" = -m ]; then
  if [ "\${FAKE_MODE:-}" = k8s ]; then printf '%s\\0' python3 "$@" > "$FAKE_OUT"; exit 0; fi
  mod=$2
  shift 2
  exec "\${0%/*}/$mod" "$@"
fi
exec /usr/bin/python3 "$@"`,
  "sglang.launch_server": ENGINE,
  apptainer: `${RECORD}
rec wrap-${node} "$@"
args=("$@")
i=0
[ "\${args[i]}" = exec ] && i=$((i + 1))
[ "\${args[i]}" = --nv ] && i=$((i + 1))
[ "\${args[i]}" = --bind ] && i=$((i + 2))
i=$((i + 1))
exec "\${args[@]:i}"`,
  srun: `printf '%s\\0' "$@" > "$FAKE_REC/srun.$$.argv"
n=1
for a; do case $a in --nodes=*) n=\${a#--nodes=} ;; esac; done
body=$(cat)
pids=()
for ((k = 0; k < n; k++)); do SLURM_PROCID=$k bash -s <<< "$body" & pids+=("$!"); done
rc=0
for p in "\${pids[@]}"; do wait "$p" || rc=$?; done
exit "$rc"`,
  sbatch: `printf '%s\\0' "$@" > "$FAKE_REC/sbatch.$$.argv"
script=\${!#}
for a; do
  case $a in
    --test-only) echo "sbatch: Job ${FAKE_JOB_ID} to start at 2030-01-01T00:00:00 using 8 processors on nodes node0 in partition p" >&2; exit 0 ;;
    --comment=*) printf '%s' "\${a#--comment=}" > "$FAKE_STATE/comment" ;;
  esac
done
echo ${FAKE_JOB_ID} > "$FAKE_STATE/job"
SLURM_JOB_ID=${FAKE_JOB_ID} SLURM_JOB_NODELIST="node[0-$((FAKE_NODES - 1))]" SLURM_JOB_NUM_NODES=$FAKE_NODES bash "$script" > "$FAKE_STATE/batch.out" 2>&1 < /dev/null
echo "$?" > "$FAKE_STATE/batch.rc"
echo ${FAKE_JOB_ID}`,
  squeue: `printf '%s\\0' "$@" > "$FAKE_REC/squeue.$$.argv"
fmt=
while [ $# -gt 0 ]; do case $1 in -o) fmt=$2; shift ;; esac; shift; done
[ -f "$FAKE_STATE/job" ] || exit 0
job=$(<"$FAKE_STATE/job")
case $fmt in
  '%i|%T|%k') printf '%s|RUNNING|%s\\n' "$job" "$(<"$FAKE_STATE/comment")" ;;
  %i) echo "$job" ;;
  %T) echo RUNNING ;;
  '%T|%r') echo 'RUNNING|None' ;;
  %N) echo "node[0-$((FAKE_NODES - 1))]" ;;
esac`,
  scancel: `printf '%s\\0' "$@" > "$FAKE_REC/scancel.$$.argv"
rm -f "$FAKE_STATE/job"`,
  scontrol: `case "$1 $2" in
  "show hostnames") for ((k = 0; k < FAKE_NODES; k++)); do echo "node$k"; done ;;
  "show job") echo "JobId=$3 JobState=CANCELLED Reason=None ExitCode=0:0" ;;
  *) exit 1 ;;
esac`,
  getent: `[ "$1" = ahostsv4 ] && echo "${FAKE_NODE_ADDR}       STREAM $2"`,
  curl: `url=\${!#}
case $url in
  */health) echo ok ;;
  */readiness) printf '{"status":"ready","healthy_workers":%s,"total_workers":%s}\n' "\${FAKE_ROUTER_WORKERS:-0}" "\${FAKE_ROUTER_WORKERS:-0}" ;;
  */v1/models) cat "$FAKE_STATE/models.json" 2>/dev/null || exit 7 ;;
  *) exit 22 ;;
esac`,

  // Never longer than 0.05 s: nothing here needs the cleanup step's settle time or real polling.
  sleep: "exec /bin/sleep 0.05",
  ...Object.fromEntries(
    [
      "vllm-router",
      "sglang_router.launch_router",
      "epp",
      "envoy",
      "pd-sidecar",
      "mooncake_master",
      "mooncake_client",
    ].map((p) => [p, `${RECORD}\nrec ${node} "$@"\nexec /bin/sleep 30`]),
  ),
};

export function writeFakes(bin: string): void {
  fs.mkdirSync(bin, { recursive: true });
  for (const [name, body] of Object.entries(FAKES))
    fs.writeFileSync(path.join(bin, name), `#!/bin/bash\n${body}\n`, { mode: 0o755 });
  // The cleanup step would kill this user's processes and delete its /tmp and /dev/shm files (and
  // engine pods clear /dev/shm): here they do nothing, and nothing is left to wait for.
  for (const name of ["pkill", "find"]) fs.symlinkSync("/bin/true", path.join(bin, name));
  fs.symlinkSync("/bin/false", path.join(bin, "pgrep"));
}

/** One recorded process: the program, its argv (without argv0) and its environment. */
export interface Recorded {
  prog: string;
  argv: string[];
  env: Record<string, string>;
}

const splitNul = (s: string) => s.split("\0").slice(0, -1);

/** Every process recorded in one directory (a node's, or its wrapper's). */
export function readRecords(dir: string): Recorded[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".argv"))
    .map((f) => {
      const envFile = path.join(dir, f.replace(/\.argv$/, ".env"));
      const env = fs.existsSync(envFile)
        ? Object.fromEntries(
            splitNul(fs.readFileSync(envFile, "utf8")).map((kv) => [
              kv.slice(0, kv.indexOf("=")),
              kv.slice(kv.indexOf("=") + 1),
            ]),
          )
        : {};
      return { prog: f.replace(/\.\d+\.argv$/, ""), argv: splitNul(fs.readFileSync(path.join(dir, f), "utf8")), env };
    });
}

/** argv lists of one scheduler command (sbatch, srun, squeue, scancel), oldest first. */
export function readCalls(rec: string, prog: string): string[][] {
  if (!fs.existsSync(rec)) return [];
  return fs
    .readdirSync(rec)
    .filter((f) => f.startsWith(`${prog}.`) && f.endsWith(".argv"))
    .map((f) => ({ f, t: fs.statSync(path.join(rec, f)).mtimeMs }))
    .sort((a, b) => a.t - b.t)
    .map(({ f }) => splitNul(fs.readFileSync(path.join(rec, f), "utf8")));
}

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/**
 * Runs a command in its own process group and, when it is done, ends whatever it left behind in
 * that group (stand-ins that were still sleeping), by the group's id.
 */
export function run(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env: NodeJS.ProcessEnv; input?: string; timeoutMs: number },
): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, detached: true, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    const killGroup = () => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // the group is gone already
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, opts.timeoutMs);
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.stdin.on("error", () => undefined);
    child.stdin.end(opts.input ?? "");
    // A program that cannot start (ENOENT) emits no "close": settle here, or the caller waits forever.
    child.on("error", (err) => {
      clearTimeout(timer);
      resolve({ code: null, stdout, stderr: `${stderr}${cmd}: ${err.message}`, timedOut });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      killGroup();
      resolve({ code, stdout, stderr, timedOut });
    });
  });
}

/** Runs `jobs` with at most `width` at a time. */
export async function pool<T>(jobs: (() => Promise<T>)[], width: number): Promise<T[]> {
  const out: T[] = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      out[i] = await jobs[i]();
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, jobs.length) }, worker));
  return out;
}

/**
 * The arguments sbatch reads from one `#SBATCH` line, by its own rules (src/sbatch/opt.c,
 * _get_argument): whitespace separates arguments, single and double quotes group and are removed,
 * a backslash escapes the next character and is removed, an unquoted # ends the line, an
 * unmatched quote or an argument starting with ":" is fatal; a line naming "hetjob" or "packjob"
 * anywhere starts a new heterogeneous job component.
 */
export function sbatchLineArgs(rest: string): { args: string[]; problems: string[] } {
  const problems: string[] = [];
  if (/hetjob|packjob/i.test(rest))
    problems.push("sbatch reads the word hetjob/packjob as a heterogeneous job separator");
  const args: string[] = [];
  let i = 0;
  while (i < rest.length) {
    while (i < rest.length && /\s/.test(rest[i])) i++;
    if (i >= rest.length) break;
    if (rest[i] === ":") problems.push("sbatch refuses an argument starting with ':'");
    let arg = "";
    let quote = "";
    let escape = false;
    let comment = false;
    for (; i < rest.length && (quote || !/\s/.test(rest[i])) && rest[i] !== "\n"; i++) {
      const c = rest[i];
      if (escape) escape = false;
      else if (c === "\\") {
        escape = true;
        continue;
      } else if (quote) {
        if (c === quote) {
          quote = "";
          continue;
        }
      } else if (c === '"' || c === "'") {
        quote = c;
        continue;
      } else if (c === "#") {
        comment = true;
        break;
      }
      arg += c;
    }
    if (quote) problems.push(`sbatch stops at an unmatched ${quote}`);
    if (arg) args.push(arg);
    if (comment) break;
  }
  return { args, problems };
}

/**
 * kubelet's expansion of command, args and env values (k8s.io/kubernetes
 * third_party/forked/golang/expansion): `$$` is a literal `$`, `$(NAME)` is NAME's value when NAME
 * is defined and stays as written otherwise, any other `$` is kept with the byte after it.
 */
export function kubeletExpand(input: string, vars: Record<string, string>): string {
  let out = "";
  let i = 0;
  while (i < input.length) {
    const c = input[i];
    if (c !== "$" || i + 1 >= input.length) {
      out += c;
      i++;
      continue;
    }
    const next = input[i + 1];
    if (next === "$") {
      out += "$";
      i += 2;
    } else if (next === "(") {
      const close = input.indexOf(")", i + 2);
      if (close < 0) {
        out += "$(";
        i += 2;
      } else {
        const name = input.slice(i + 2, close);
        out += Object.hasOwn(vars, name) ? vars[name] : `$(${name})`;
        i = close + 1;
      }
    } else {
      out += c + next;
      i += 2;
    }
  }
  return out;
}

export interface Finding {
  code: number;
  level: string;
  line: number;
  message: string;
}

/**
 * shellcheck (`-s bash`, as the other script tests run it) over many scripts: a few invocations of
 * many files each, two at a time. Returns the findings per script key.
 */
export async function shellcheckAll(scripts: Map<string, string>, dir: string): Promise<Map<string, Finding[]>> {
  // Missing shellcheck: no findings (the global setup has said loudly that these checks are skipped).
  if (!shellcheckAvailable()) return new Map([...scripts.keys()].map((k) => [k, []]));
  fs.mkdirSync(dir, { recursive: true });
  const keys = [...scripts.keys()];
  const files = keys.map((k, i) => {
    const file = path.join(dir, `s${i}.sh`);
    fs.writeFileSync(file, scripts.get(k)!);
    return file;
  });
  const byFile = new Map<string, Finding[]>(files.map((f) => [f, []]));
  const chunks: string[][] = [];
  for (let i = 0; i < files.length; i += 40) chunks.push(files.slice(i, i + 40));
  await pool(
    chunks.map((chunk) => async () => {
      const r = await run("shellcheck", ["-s", "bash", "-f", "json1", ...chunk], {
        env: process.env,
        timeoutMs: 300_000,
      });
      if (r.code !== 0 && r.code !== 1) throw new Error(`shellcheck failed (${r.code}): ${r.stderr}`);
      for (const c of JSON.parse(r.stdout).comments as any[])
        byFile.get(c.file)!.push({ code: c.code, level: c.level, line: c.line, message: c.message });
    }),
    2,
  );
  return new Map(keys.map((k, i) => [k, byFile.get(files[i])!]));
}
