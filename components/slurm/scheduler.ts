import { shq } from "../shell";

/**
 * What SLURM says about one island's job, gathered on the login node in one ssh round trip:
 * squeue while the job is queued or running; `scontrol show job` once it has left the queue (kept
 * for MinJobAge, 300 s by default); sacct after that, where accounting runs. Plus the node
 * addresses of a running job and the exit markers its node scripts leave (launch.sh.mustache).
 */
export interface JobReport {
  island: number;
  jobId: string | null;
  /** SLURM's JobState as reported (PENDING, RUNNING, FAILED, ...), null when no job is known. */
  state: string | null;
  reason: string | null;
  exitCode: string | null;
  source: "squeue" | "scontrol" | "sacct" | "job_id file" | "none";
  hosts: string[];
  addrs: string[];
  /** Processes that exited during this attempt: node index, process name, exit status. */
  exits: { node: number; name: string; code: number }[];
  /** Each of the job's nodes in node-index order with SLURM's state for it (sinfo: `down*`, `allocated`, ...). */
  nodeStates: { host: string; state: string }[];
}

/** What the query needs to find an island's job: its unique name, the island's directory, a job id if known. */
export interface IslandJobRef {
  island: number;
  jobName?: string;
  islandDir?: string;
  jobId?: string;
}

/** Bash for the login node: one tab-separated record per fact, parsed by parseSchedulerReport. */
export function schedulerQueryScript(islands: IslandJobRef[]): string {
  const calls = islands.filter((i) => i.jobName).map((i) => `fleet_island ${i.island} ${shq(i.jobName!)} ${shq(i.islandDir ?? "")} ${shq(i.jobId ?? "")}`);
  return `${QUERY_FUNCTIONS}\n${calls.join("\n")}\n`;
}

const QUERY_FUNCTIONS = String.raw`set -u
cd "$HOME" || exit 1
user=$(id -un)
# fleet_island INDEX JOB_NAME ISLAND_DIR [JOB_ID]
fleet_island() {
  local k=$1 name=$2 dir=$3 id=$4 line state="" reason nodes="" info host addr f latest
  line=$(squeue -h -u "$user" --name="$name" -o '%i|%T|%r|%N' 2>/dev/null | head -n 1)
  if [ -n "$line" ]; then
    printf 'squeue\t%s\t%s\n' "$k" "$line"
    IFS='|' read -r id state reason nodes <<< "$line"
  else
    [ -n "$id" ] || id=$(head -c 32 "$dir/job_id" 2>/dev/null)
    if ! [[ $id =~ ^[0-9]+$ ]]; then
      printf 'none\t%s\n' "$k"
      return 0
    fi
    if info=$(scontrol show job -o "$id" 2>/dev/null) && [ -n "$info" ]; then
      printf 'scontrol\t%s\t%s\n' "$k" "$info"
      nodes=$(grep -o ' NodeList=[^ ]*' <<< "$info" | head -n 1 | cut -d= -f2)
      [ "$nodes" = "(null)" ] && nodes=""
    elif info=$(sacct -n -P -X -j "$id" -o JobID,State,ExitCode,Reason 2>/dev/null | head -n 1) && [ -n "$info" ]; then
      printf 'sacct\t%s\t%s\n' "$k" "$info"
    else
      printf 'gone\t%s\t%s\n' "$k" "$id"
    fi
  fi
  if [ -n "$nodes" ]; then
    # A node whose slurmd stopped answering shows as down* or allocated* long before the job ends.
    info=$(sinfo -h -N -n "$nodes" -o '%N|%T' 2>/dev/null)
    while read -r host; do
      f=$(awk -F'|' -v h="$host" '$1 == h { print $2; exit }' <<< "$info")
      printf 'nodestate\t%s\t%s\t%s\n' "$k" "$host" "$f"
      [ "$state" = RUNNING ] || continue
      addr=$(getent ahostsv4 "$host" | awk 'NR == 1 { print $1 }')
      printf 'node\t%s\t%s\t%s\n' "$k" "$host" "$addr"
    done < <(scontrol show hostnames "$nodes" 2>/dev/null)
  fi
  # Exit markers of this job's latest attempt only: a requeued job starts with none.
  latest=$(readlink "$dir/logs/latest" 2>/dev/null)
  if [[ $latest == job_"$id"_* ]]; then
    for f in "$dir/logs/$latest"/node_*/*.exit; do
      [ -f "$f" ] || continue
      printf 'exit\t%s\t%s\t%s\n' "$k" "$f" "$(head -c 16 "$f" | tr -dc 0-9)"
    done
  fi
}`;

/** `Key=Value` tokens of `scontrol show job -o`; values never contain spaces there, except Command/Comment at the end. */
function scontrolFields(line: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of line.matchAll(/(?:^|\s)([A-Za-z]+)=(\S*)/g)) if (!(m[1] in out)) out[m[1]] = m[2];
  return out;
}

/** Parses the records schedulerQueryScript prints; islands it did not mention have no job. */
export function parseSchedulerReport(text: string, islands: number[]): Map<number, JobReport> {
  const reports = new Map<number, JobReport>(islands.map((k) => [k, { island: k, jobId: null, state: null, reason: null, exitCode: null, source: "none", hosts: [], addrs: [], exits: [], nodeStates: [] }]));
  for (const line of text.split("\n")) {
    const [kind, k, ...rest] = line.split("\t");
    const r = reports.get(Number(k));
    if (!r) continue;
    if (kind === "squeue") {
      const [id, state, reason] = rest.join("\t").split("|");
      Object.assign(r, { jobId: id, state, reason: reason && reason !== "None" ? reason : null, source: "squeue" });
    } else if (kind === "scontrol") {
      const f = scontrolFields(rest.join("\t"));
      Object.assign(r, { jobId: f.JobId ?? null, state: f.JobState ?? null, reason: f.Reason && f.Reason !== "None" ? f.Reason : null, exitCode: f.ExitCode ?? null, source: "scontrol" });
    } else if (kind === "sacct") {
      const [id, state, exitCode, reason] = rest.join("\t").split("|");
      // sacct writes "CANCELLED by 1000": the state is the first word.
      Object.assign(r, { jobId: id, state: state?.split(" ")[0] ?? null, exitCode: exitCode ?? null, reason: reason && reason !== "None" ? reason : null, source: "sacct" });
    } else if (kind === "gone") {
      Object.assign(r, { jobId: rest[0], source: "job_id file" });
    } else if (kind === "node") {
      r.hosts.push(rest[0]);
      r.addrs.push(rest[1] ?? "");
    } else if (kind === "nodestate") {
      r.nodeStates.push({ host: rest[0], state: rest[1] ?? "unknown" });
    } else if (kind === "exit") {
      const m = /\/node_(\d+)\/([^/]+)\.exit$/.exec(rest[0] ?? "");
      if (m) r.exits.push({ node: Number(m[1]), name: m[2], code: Number(rest[1] || NaN) });
    }
  }
  return reports;
}

/** A node SLURM has given up on (down, failed, drained for a failure) or that stopped answering (`*`). */
export const nodeLost = (state: string): boolean => /\*$|^(down|fail|failing|not_responding|no_respond)/i.test(state);

export type JobPhase = "queued" | "running" | "ended" | "failed" | "none";

/**
 * Every SLURM job state, mapped (the scheduler speaks first; raw strings never leak into statuses).
 * A job that ends by scancel is over (SHUTDOWN); one that ends by itself, or by the node, the clock
 * or the OOM killer, failed. A fleet never completes on its own, so COMPLETED is an ending too.
 */
export function jobPhase(state: string | null): JobPhase {
  if (state === null) return "none";
  if (/^(PENDING|REQUEUED|REQUEUE_HOLD|REQUEUE_FED|SUSPENDED|RESV_DEL_HOLD|SPECIAL_EXIT|STOPPED)$/.test(state)) return "queued";
  if (/^(CONFIGURING|RUNNING|RESIZING|SIGNALING|STAGE_OUT|UPDATE_DB|POWER_UP_NODE)$/.test(state)) return "running";
  if (/^(COMPLETING|COMPLETED|CANCELLED)$/.test(state)) return "ended";
  if (/^(FAILED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|PREEMPTED|BOOT_FAIL|DEADLINE|REVOKED)$/.test(state)) return "failed";
  return "queued";
}
