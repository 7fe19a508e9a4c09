#!/usr/bin/env bash
# Prove the test cluster from up.sh works the way the e2e test uses it: everything SLURM goes over
# the login sshd (127.0.0.1:$SSH_PORT, key auth); HTTP checks curl node IPs from the root netns.
# Prints PASS/FAIL per check and "N passed, M failed"; exits 0 only if every check passed.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"
[[ -r $ENV_FILE ]] || die "no $ENV_FILE: run up.sh first"
# shellcheck disable=SC1090
. "$ENV_FILE"
read -r -a NODES <<<"$FLEET_E2E_NODES"
read -r -a IPS <<<"$FLEET_E2E_NODE_IPS"
N=${#NODES[@]}
((N >= 4)) || die "smoke.sh needs at least 4 nodes, cluster has $N"

PASSED=0 FAILED=0
pass() {
  PASSED=$((PASSED + 1))
  echo "PASS  $1"
}
fail() {
  FAILED=$((FAILED + 1))
  echo "FAIL  $1: $2"
}
info() { echo "INFO  $*"; }
rsh() { login "$@" </dev/null; } # remote command on the login node, no stdin
curl_ok() { curl --noproxy '*' -sf -m 2 -o /dev/null "http://$1:18080/"; }

WORK=$(mktemp -d /tmp/fleet-smoke.XXXXXX) # same filesystem for login node and all nodes
JOB_NAMES=(fleet-smoke-http fleet-smoke-named fleet-smoke-kobe fleet-smoke-two fleet-smoke-one fleet-smoke-het)
cleanup() {
  local n
  for n in "${JOB_NAMES[@]}"; do rsh "scancel --name=$n" >/dev/null 2>&1 || true; done
  if ((FAILED == 0)); then rm -rf "$WORK"; else echo "job outputs kept in $WORK"; fi
}
trap cleanup EXIT

# job_state ID -> state ("" once gone from squeue)
job_state() { rsh "squeue -h -j $1 -o %T" 2>/dev/null | head -n1; }
# wait_running ID TIMEOUT_S
wait_running() {
  local i s
  for ((i = 0; i < $2 * 2; i++)); do
    s=$(job_state "$1")
    [[ $s == RUNNING ]] && return 0
    sleep 0.5
  done
  echo "job $1 not RUNNING after $2s (state: ${s:-gone})" >&2
  return 1
}
# wait_gone ID TIMEOUT_S
wait_gone() {
  local i
  for ((i = 0; i < $2 * 2; i++)); do
    [[ -z $(job_state "$1") ]] && return 0
    sleep 0.5
  done
  return 1
}
expand_hosts() { rsh "scontrol show hostnames '$1'" | paste -sd' ' -; }

echo "smoke test against $FLEET_E2E_SSH_USER@$FLEET_E2E_SSH_HOST:$FLEET_E2E_SSH_PORT, nodes: ${NODES[*]}"

# 1. login node: slurm CLI on PATH for a non-interactive ssh command
# shellcheck disable=SC2016
out=$(rsh 'for c in sbatch squeue scancel scontrol srun sinfo; do command -v $c || echo "missing $c"; done' 2>&1)
if [[ $? -eq 0 && $out != *missing* ]]; then
  pass "ssh login (key auth, port $FLEET_E2E_SSH_PORT): sbatch squeue scancel scontrol srun on PATH"
else fail "ssh login" "$out"; fi

# 2. all nodes idle with gpu:8
out=$(rsh "sinfo -h -N -p $FLEET_E2E_PARTITION -o '%N %t %G'" | sort -u)
if [[ $(grep -c " idle gpu:$FLEET_E2E_GPUS_PER_NODE" <<<"$out") -eq $N ]]; then
  pass "sinfo: $N nodes idle with gpu:$FLEET_E2E_GPUS_PER_NODE"
else fail "sinfo idle+gres" "$out"; fi

# 3. 4-node exclusive GPU job: one HTTP server per node, bound to the node's netns IP
cat >"$WORK/http.sbatch" <<'EOF'
#!/bin/bash
scontrol show hostnames "$SLURM_JOB_NODELIST" > hostnames.txt
srun bash -c 'echo $SLURMD_NODENAME $(hostname -I) $SLURM_PROCID cuda=$CUDA_VISIBLE_DEVICES host=$(hostname)/$(hostname --ip-address); exec python3 -m http.server --bind $(hostname -I | awk "{print \$1}") 18080'
EOF
jid=$(login "sbatch --parsable -N4 --ntasks-per-node=1 --gres=gpu:8 --exclusive --job-name=fleet-smoke-http --chdir=$WORK --output=http-%j.out" <"$WORK/http.sbatch")
jid=${jid%%;*}
if [[ $jid =~ ^[0-9]+$ ]] && wait_running "$jid" 30; then
  pass "sbatch -N4 --ntasks-per-node=1 --gres=gpu:8 --exclusive: job $jid RUNNING"
  bad=()
  for ((k = 0; k < 4; k++)); do
    ok=0
    for ((t = 0; t < 40; t++)); do
      if curl_ok "${IPS[k]}"; then
        ok=1
        break
      fi
      sleep 0.5
    done
    ((ok)) || bad+=("${IPS[k]}")
  done
  if ((${#bad[@]} == 0)); then
    pass "curl from root netns reaches http.server on ${IPS[*]}:18080"
  else fail "curl node servers" "unreachable: ${bad[*]}"; fi
  # task lines: "<node> <ip> <procid> cuda=<list>" -- node's own netns IP, 8 GPUs each
  lines=$(grep -E '^node[0-9]+ ' "$WORK/http-$jid.out" 2>/dev/null | sort)
  okl=1
  for ((k = 0; k < 4; k++)); do
    grep -qE "^${NODES[k]} ${IPS[k]} [0-3] cuda=0,1,2,3,4,5,6,7 host=${NODES[k]}/${IPS[k]}$" <<<"$lines" || okl=0
  done
  [[ $(awk '{print $3}' <<<"$lines" | sort -u | paste -sd,) == 0,1,2,3 ]] || okl=0
  if ((okl)); then
    pass "srun tasks run in their node's netns (hostname -I = node IP; hostname = node name), SLURM_PROCID 0-3, CUDA_VISIBLE_DEVICES=0..7"
  else fail "srun task output" "$(head -20 "$WORK/http-$jid.out" 2>/dev/null)"; fi
  hn=$(paste -sd' ' "$WORK/hostnames.txt" 2>/dev/null)
  if [[ $hn == "${NODES[*]:0:4}" ]]; then
    pass "scontrol show hostnames \$SLURM_JOB_NODELIST -> $hn"
  else fail "scontrol show hostnames" "got '$hn'"; fi
  rsh "scancel --name=fleet-smoke-http"
  if wait_gone "$jid" 30; then
    pass "scancel --name=fleet-smoke-http removed job $jid from squeue"
  else fail "scancel http job" "still $(job_state "$jid")"; fi
  still=()
  for ((k = 0; k < 4; k++)); do
    for ((t = 0; t < 20; t++)); do
      curl_ok "${IPS[k]}" || break
      sleep 0.5
    done
    curl_ok "${IPS[k]}" && still+=("${IPS[k]}")
  done
  if ((${#still[@]} == 0)); then
    pass "task processes killed on scancel (servers gone)"
  else fail "servers after scancel" "still answering: ${still[*]}"; fi
  st=$(rsh "scontrol show job $jid" | grep -o 'JobState=[A-Z_]*')
  if [[ $st == JobState=CANCELLED ]]; then
    pass "scontrol show job $jid still sees the finished job ($st, MinJobAge)"
  else fail "scontrol show finished job" "got '$st'"; fi
  # slurmdbd's record of the ended job (accounting.sh); it can trail the end by a moment.
  for ((t = 0; t < 20; t++)); do
    sa=$(rsh "sacct -n -P -X -j $jid -o State,AllocTRES" 2>&1 | head -n 1)
    [[ $sa == CANCELLED* ]] && break
    sleep 0.5
  done
  if [[ $sa == CANCELLED*gres/gpu=* ]]; then
    pass "sacct keeps the finished job with its GPUs ($sa)"
  else fail "sacct of the finished job" "got '${sa:-<empty>}'"; fi
else
  fail "4-node GPU job" "sbatch said '$jid'; $(rsh 'squeue; sinfo' 2>&1)"
fi

# 4. --job-name: squeue --name finds it, scancel --name removes it, squeue is empty afterwards
jid=$(rsh "sbatch --parsable -N1 --job-name=fleet-smoke-named --chdir=$WORK --output=named-%j.out --wrap='sleep 300'")
jid=${jid%%;*}
found=$(rsh "squeue -h --name=fleet-smoke-named -o %i")
if [[ -n $jid && $found == "$jid" ]]; then
  pass "squeue --name=fleet-smoke-named finds job $jid"
else fail "squeue --name" "submitted '$jid', found '$found'"; fi
rsh "scancel --name=fleet-smoke-named"
empty=0
for ((t = 0; t < 60; t++)); do
  if [[ -z $(rsh 'squeue -h') ]]; then
    empty=1
    break
  fi
  sleep 0.5
done
if ((empty)); then
  pass "scancel --name=fleet-smoke-named; squeue -h is empty afterwards"
else fail "squeue empty after scancel" "$(rsh 'squeue')"; fi

# 5. srun --kill-on-bad-exit=1 ends the whole step when one task exits non-zero
cat >"$WORK/kobe.sbatch" <<'EOF'
#!/bin/bash
start=$(date +%s)
srun --kill-on-bad-exit=1 bash -c 'if [ "$SLURM_PROCID" = 1 ]; then sleep 2; exit 3; fi; sleep 120'
rc=$?
echo "srun_rc=$rc elapsed=$(( $(date +%s) - start ))"
EOF
t0=$(date +%s)
jid=$(login "timeout 100 sbatch --parsable --wait -N2 --ntasks-per-node=1 --job-name=fleet-smoke-kobe --chdir=$WORK --output=kobe-%j.out" <"$WORK/kobe.sbatch")
jid=${jid%%;*}
res=$(grep -o 'srun_rc=[0-9]* elapsed=[0-9]*' "$WORK/kobe-$jid.out" 2>/dev/null)
rc=${res#srun_rc=}
rc=${rc%% *}
el=${res##*elapsed=}
if [[ -n $res && $rc != 0 && $el -lt 60 ]]; then
  pass "srun --kill-on-bad-exit=1: step killed ${el}s after start ($res), sleeping task did not run 120s"
else fail "kill-on-bad-exit" "job '$jid' after $(($(date +%s) - t0))s: '$res' $(tail -5 "$WORK/kobe-$jid.out" 2>/dev/null)"; fi

# 6. a 2-node and a 1-node job run at the same time, on different nodes
j2=$(rsh "sbatch --parsable -N2 --ntasks-per-node=1 --gres=gpu:8 --exclusive --job-name=fleet-smoke-two --chdir=$WORK --output=two-%j.out --wrap='sleep 120'")
j1=$(rsh "sbatch --parsable -N1 --ntasks-per-node=1 --gres=gpu:8 --exclusive --job-name=fleet-smoke-one --chdir=$WORK --output=one-%j.out --wrap='sleep 120'")
j2=${j2%%;*} j1=${j1%%;*}
if wait_running "$j2" 30 && wait_running "$j1" 30; then
  n2=$(expand_hosts "$(rsh "squeue -h -j $j2 -o %N")")
  n1=$(expand_hosts "$(rsh "squeue -h -j $j1 -o %N")")
  both=$(rsh "squeue -h -t RUNNING -o %i" | sort | paste -sd' ' -)
  overlap=$(comm -12 <(tr ' ' '\n' <<<"$n2" | sort) <(tr ' ' '\n' <<<"$n1" | sort))
  if [[ $(wc -w <<<"$n2") -eq 2 && $(wc -w <<<"$n1") -eq 1 && -z $overlap && $both == *$j1* && $both == *$j2* ]]; then
    pass "2-node job $j2 ($n2) and 1-node job $j1 ($n1) RUNNING concurrently on disjoint nodes"
  else fail "concurrent jobs" "two='$n2' one='$n1' running='$both'"; fi
else
  fail "concurrent jobs" "$(rsh squeue)"
fi
rsh "scancel $j2 $j1" >/dev/null 2>&1
wait_gone "$j2" 30
wait_gone "$j1" 30

# 7. heterogeneous job starts (bf_interval=1) and srun spans both components
cat >"$WORK/het.sbatch" <<'EOF'
#!/bin/bash
#SBATCH -N1 --ntasks-per-node=1 --gres=gpu:8
#SBATCH hetjob
#SBATCH -N2 --ntasks-per-node=1 --gres=gpu:4
srun --het-group=0,1 bash -c 'echo het $SLURMD_NODENAME $(hostname -I) $SLURM_PROCID'
EOF
t0=$(date +%s)
jid=$(login "timeout 60 sbatch --parsable --wait --job-name=fleet-smoke-het --chdir=$WORK --output=het-%j.out" <"$WORK/het.sbatch")
jid=${jid%%;*}
hl=$(grep -E '^het node' "$WORK/het-$jid.out" 2>/dev/null | awk '{print $2}' | sort -u | wc -l)
if ((hl == 3)); then
  pass "hetjob (1 node gpu:8 + 2 nodes gpu:4) ran srun across 3 nodes in $(($(date +%s) - t0))s"
else fail "hetjob" "job '$jid': $(head "$WORK/het-$jid.out" 2>/dev/null)"; fi

# 8. srun straight from the login node (root netns) to the nodes, I/O back over the bridge
out=$(rsh "timeout 60 srun -N$N --ntasks-per-node=1 bash -c 'echo \$SLURMD_NODENAME \$(hostname -I)'" 2>&1 | sort)
exp=$(for ((k = 0; k < N; k++)); do echo "${NODES[k]} ${IPS[k]}"; done | sort)
# shellcheck disable=SC2001 # hostname -I ends with a blank
if [[ $(sed 's/ *$//' <<<"$out") == "$exp" ]]; then
  pass "interactive srun -N$N from the login node"
else fail "interactive srun" "$out"; fi

# squeue empty at the end
remaining=$(rsh 'squeue -h')
if [[ -z $remaining ]]; then pass "squeue empty at the end"; else fail "squeue at end" "$remaining"; fi

echo "$PASSED passed, $FAILED failed"
((FAILED == 0))
