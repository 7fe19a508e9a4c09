#!/usr/bin/env bash
# vec-inf's readiness against a real vLLM, without a cluster (docs/vec-inf.md, "Observed"): runs
# `vec-inf launch` with an sbatch capture shim, runs the captured script as the batch step would
# (stdout and stderr into its --output and --error files, SLURMD_NODENAME and SLURM_JOB_ID set by
# hand), and asks `vec-inf status` every 2 s, beside direct probes of /health and /v1/models, until
# vec-inf says READY or FAILED. Prints one line per poll; the logs stay in the work directory.
#
# usage: test/compat/vec-inf-readiness.sh VENV MODEL_DIR [WORK_DIR]
#   VENV       a venv with vec-inf and vLLM (FLEET_PYENV of test/e2e/python-env.sh)
#   MODEL_DIR  a model vLLM can serve on this machine (FLEET_TINY_MODEL of the same env file)
#
# Stand-ins, each for something a compute node has and this machine may not: `sbatch` and
# `scontrol` (the job is RUNNING), and `nc` (vec-inf's find_port.sh probes ports with `nc -l`; a
# Python listener stands in when nc is missing). vLLM runs as `python -m vllm.entrypoints.cli.main`
# with VLLM_PROCESS_NAME_PREFIX=VIX, so the stale-vLLM cleanup of vllm-fleet jobs on a test cluster
# sharing this machine (pkill of processes named vllm or VLLM::*) leaves it alone.
set -euo pipefail
venv=$(cd "$1" && pwd)
model=$(cd "$2" && pwd)
work=${3:-$(mktemp -d /tmp/vec-inf-readiness-XXXXXX)}
mkdir -p "$work"/{home,run,shim,weights,venv/bin}
work=$(cd "$work" && pwd)
name=tiny-llama
ln -sfn "$model" "$work/weights/$name"

cat >"$work/shim/sbatch" <<'EOF'
#!/bin/bash
cp "$1" "$VI_CAPTURE"
echo "Submitted batch job 4242"
EOF
if ! command -v nc >/dev/null 2>&1; then
  cat >"$work/shim/nc" <<EOF
#!$venv/bin/python
# stand-in for \`nc -l IP PORT\`: listen until killed
import socket, sys, time
s = socket.socket()
s.bind((socket.gethostbyname(sys.argv[2]), int(sys.argv[3])))
s.listen(1)
time.sleep(3600)
EOF
fi
# A "venv" whose activate is the real one's, plus the process names above.
cat >"$work/venv/bin/activate" <<EOF
source $venv/bin/activate
export PATH=$work/venv/bin:\$PATH
export VLLM_PROCESS_NAME_PREFIX=VIX
EOF
cat >"$work/venv/bin/vllm" <<EOF
#!/bin/bash
exec $venv/bin/python -m vllm.entrypoints.cli.main "\$@"
EOF
chmod +x "$work"/shim/* "$work/venv/bin/vllm"

base_env=(env -i "PATH=$work/shim:$venv/bin:/usr/bin:/bin" "HOME=$work/home" LANG=C.UTF-8)
(cd "$work/run" && "${base_env[@]}" VI_CAPTURE="$work/captured.sbatch" "$venv/bin/vec-inf" launch "$name" --json-mode \
  --venv "$work/venv" --account a --work-dir "$work/run" --model-weights-parent-dir "$work/weights" \
  --vllm-args "--max-model-len=512,--kv-cache-memory-bytes=268435456" >"$work/launch.json")
log_dir=$(jq -r .log_dir "$work/launch.json")/$name.4242
out=$log_dir/$name.4242.out
err=$log_dir/$name.4242.err
cat >"$work/shim/scontrol" <<EOF
#!/bin/bash
echo "JobId=4242 JobName=$name-vec-inf JobState=RUNNING Reason=None StdErr=$err StdOut=$out"
EOF
chmod +x "$work/shim/scontrol"

(cd "$work/run" && exec setsid "${base_env[@]}" SLURMD_NODENAME=127.0.0.1 SLURM_JOB_ID=4242 bash "$work/captured.sbatch" >"$out" 2>"$err") &
job=$!
trap 'kill -- -$job 2>/dev/null || true' EXIT
start=$SECONDS
echo "work directory: $work"
for ((i = 0; i < 600; i++)); do
  st=$("${base_env[@]}" "$venv/bin/vec-inf" status 4242 --json-mode 2>/dev/null | jq -c '{model_status, base_url, failed_reason}' || true)
  addr=$(jq -r '.server_address // empty' "$log_dir/$name.4242.json" 2>/dev/null || true)
  health=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "${addr%/v1}/health" 2>/dev/null || true)
  models=$(curl -s --max-time 2 "$addr/models" 2>/dev/null | grep -c "\"$name\"" || true)
  echo "t=$((SECONDS - start))s health=$health models_lists_it=$models vec-inf=$st"
  case $st in *'"READY"'* | *'"FAILED"'*) break ;; esac
  kill -0 "$job" 2>/dev/null || { echo "the job script exited"; break; }
  sleep 2
done
echo "fatal-pattern lines vec-inf never reads (in .out): $(grep -ciE 'error:|could not|unable to|failed to|exception|traceback' "$out" || true)"
