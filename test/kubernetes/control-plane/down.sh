#!/usr/bin/env bash
# Stops exactly what up.sh started (the pids recorded in STATE_DIR/pids, newest first; a pid whose
# process no longer runs the recorded binary is left alone) and removes the state dir.
#
# Usage: down.sh [--keep] [STATE_DIR]   --keep: keep the state dir (logs) after stopping
set -uo pipefail
keep=0
if [[ "${1:-}" == --keep ]]; then keep=1; shift; fi
state=${1:-${CP_STATE_DIR:-/tmp/vllm-fleet-k8s-control-plane}}
[[ -d "$state/pids" ]] || { echo "down.sh: nothing recorded in $state" >&2; exit 0; }

ours() { # ours PID BINARY: the pid still runs that binary (not a reused pid)
  [[ -r "/proc/$1/cmdline" ]] && [[ "$(tr '\0' '\n' < "/proc/$1/cmdline" | head -n 1)" == "$2" ]]
}
gone() { # gone PID BINARY SLEEP: waits (50 rounds of SLEEP at most) until PID no longer runs BINARY
  for _ in $(seq 1 50); do ours "$1" "$2" || return 0; sleep "$3"; done
  return 1
}
mapfile -t files < <(find "$state/pids" -type f | sort -r)
for f in "${files[@]}"; do
  read -r pid binary < "$f"
  if ours "$pid" "$binary"; then
    kill -TERM "$pid" 2>/dev/null
    # Gone before returning, even after SIGKILL: the next up.sh binds the same ports.
    gone "$pid" "$binary" 0.2 || { kill -KILL "$pid" 2>/dev/null; gone "$pid" "$binary" 0.1; }
  fi
  rm -f "$f"
done
if ((keep == 0)); then rm -rf "$state"; fi
exit 0
