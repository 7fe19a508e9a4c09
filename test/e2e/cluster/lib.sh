# shellcheck shell=bash disable=SC2034,SC2029
# Shared settings and helpers for up.sh / down.sh / smoke.sh (sourced, not executed).
# Everything the test cluster creates lives under $STATE_DIR, /etc/slurm/{slurm,gres}.conf,
# $FAKEGPU_DIR, a marked block in /etc/hosts, the bridge and the netns fleet-node*.

STATE_DIR=${FLEET_E2E_STATE_DIR:-/var/lib/fleet-e2e}
NODE_COUNT=${FLEET_E2E_NODE_COUNT:-4}
CPUS_PER_NODE=${FLEET_E2E_CPUS_PER_NODE:-8}
GPUS_PER_NODE=${FLEET_E2E_GPUS_PER_NODE:-8}
SSH_PORT=${FLEET_E2E_SSH_PORT:-2222}
SSH_HOST=127.0.0.1
SSH_USER=root
PARTITION=cluster
BRIDGE=fleetbr0
NET_PREFIX=10.231.0
CTL_IP=$NET_PREFIX.1
NETNS_PREFIX=fleet-
FAKEGPU_DIR=/var/lib/fleet-fakegpu
SLURM_ETC=/etc/slurm
SLURM_DIR=$STATE_DIR/slurm
SSH_DIR=$STATE_DIR/ssh
ENV_FILE=$STATE_DIR/cluster.env
MUNGE_MARKER=$STATE_DIR/munged.started-by-up

node_name() { echo "node$1"; }
node_ip() { echo "$NET_PREFIX.$((10 + $1))"; }
node_ns() { echo "${NETNS_PREFIX}node$1"; }
node_veth() { echo "fveth$1"; }

_T0=$(date +%s.%N)
_TP=$_T0
log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*"; }
# phase NAME: print the time spent since the previous phase mark
phase() {
  local now
  now=$(date +%s.%N)
  printf '[%s] ---- %-28s (+%6.2fs, total %6.2fs)\n' "$(date +%H:%M:%S)" "$1" \
    "$(awk -v a="$now" -v b="$_TP" 'BEGIN{print a-b}')" "$(awk -v a="$now" -v b="$_T0" 'BEGIN{print a-b}')"
  _TP=$now
}
elapsed() { awk -v a="$(date +%s.%N)" -v b="$_T0" 'BEGIN{printf "%.1f", a-b}'; }
DIE_SHOW_LOGS=0
die() {
  echo "ERROR: $*" >&2
  if ((DIE_SHOW_LOGS)); then show_logs 40; fi
  exit 1
}

# pid_alive PIDFILE [COMM-SUBSTRING] -> prints pid, rc 0 if the process is alive
pid_alive() {
  local f=$1 want=${2:-} pid
  [[ -s $f ]] || return 1
  pid=$(tr -dc '0-9' <"$f")
  [[ -n $pid && -d /proc/$pid ]] || return 1
  if [[ -n $want ]]; then
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$want" || return 1
  fi
  echo "$pid"
}

# stop_pidfiles COMM TIMEOUT_S PIDFILE...: TERM all at once, wait (bounded), then KILL
stop_pidfiles() {
  local want=$1 t=$2 f pid i left
  shift 2
  local pids=()
  for f in "$@"; do
    if pid=$(pid_alive "$f" "$want"); then
      kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid")
    fi
  done
  for ((i = 0; i < t * 10 && ${#pids[@]}; i++)); do
    left=()
    for pid in "${pids[@]}"; do [[ -d /proc/$pid ]] && left+=("$pid"); done
    pids=("${left[@]}")
    ((${#pids[@]})) || break
    sleep 0.1
  done
  for pid in "${pids[@]}"; do
    if [[ -d /proc/$pid ]]; then
      log "pid $pid ($want) did not stop in ${t}s, sending KILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  ((${#pids[@]})) && sleep 0.2
  for f in "$@"; do [[ -e $f ]] && ! pid_alive "$f" >/dev/null && rm -f "$f"; done
  return 0
}
# stop_pidfile PIDFILE COMM [TIMEOUT_S]
stop_pidfile() { stop_pidfiles "$2" "${3:-15}" "$1"; }

slurmd_pidfile() { echo "$SLURM_DIR/run/slurmd-$(node_name "$1").pid"; }
slurmctld_pidfile() { echo "$SLURM_DIR/run/slurmctld.pid"; }
sshd_pidfile() { echo "$SSH_DIR/sshd.pid"; }

ssh_opts() {
  echo "-i $SSH_DIR/id_ed25519 -p $SSH_PORT -o BatchMode=yes -o IdentitiesOnly=yes" \
    "-o UserKnownHostsFile=$SSH_DIR/known_hosts -o StrictHostKeyChecking=yes" \
    "-o ConnectTimeout=10 -o LogLevel=ERROR"
}
# login CMD...: run a command on the "login node" over the test sshd
login() {
  # shellcheck disable=SC2046
  ssh $(ssh_opts) "$SSH_USER@$SSH_HOST" "$@"
}

show_logs() {
  local f n=${1:-30}
  for f in "$SLURM_DIR"/log/slurmctld.log "$SLURM_DIR"/log/slurmd-*.log "$SSH_DIR"/sshd.log; do
    [[ -s $f ]] || continue
    echo "===== tail -n $n $f" >&2
    tail -n "$n" "$f" >&2
  done
}
