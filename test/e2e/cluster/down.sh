#!/usr/bin/env bash
# Tear down what up.sh started: jobs, slurmd/slurmctld, munged (only if up.sh started it), the
# login sshd, leftover task processes in the node netns, netns/veth/bridge, the /etc/hosts block.
# Idempotent. Keeps keys, configs and logs under the state dir (FLEET_E2E_PURGE=1 removes them).
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"
# shellcheck source=accounting.sh
. "$HERE/accounting.sh"
[[ $(id -u) -eq 0 ]] || die "down.sh must run as root"
log "fleet e2e cluster down"

# 1. cancel all jobs while the daemons are still there (bounded)
if pid_alive "$(slurmctld_pidfile)" slurmctld >/dev/null; then
  timeout 15 scancel --full --signal=KILL --state=RUNNING --user=root >/dev/null 2>&1 || true
  timeout 15 scancel --user=root >/dev/null 2>&1 || true
  for ((t = 0; t < 30; t++)); do
    [[ -z $(timeout 10 squeue -h -t RUNNING,COMPLETING,PENDING 2>/dev/null) ]] && break
    sleep 0.5
  done
  log "jobs cancelled"
fi
phase cancel-jobs

# 2. daemons
# slurmd and slurmctld together (each takes ~2s to exit on TERM)
stop_pidfiles slurm 20 "$SLURM_DIR"/run/slurmd-*.pid "$(slurmctld_pidfile)"
stop_pidfiles sshd 10 "$(sshd_pidfile)"
accounting_down
if [[ -e $MUNGE_MARKER ]]; then
  stop_pidfiles munged 10 /run/munge/munged.pid
  rm -f "$MUNGE_MARKER"
fi
phase daemons

# 3. leftover processes in the node namespaces (task processes that escaped), then the network
for nsfile in /var/run/netns/"$NETNS_PREFIX"node*; do
  [[ -e $nsfile ]] || continue
  ns=${nsfile##*/}
  nspids=$(ip netns pids "$ns" 2>/dev/null | paste -sd' ' -)
  if [[ -n $nspids ]]; then
    log "killing leftover processes in $ns: $nspids"
    # shellcheck disable=SC2086
    kill -KILL $nspids 2>/dev/null || true
    sleep 0.2
  fi
  ip netns del "$ns" 2>/dev/null || true
done
for dev in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep '^fveth[0-9]*$'); do
  ip link del "$dev" 2>/dev/null || true
done
ip link show "$BRIDGE" >/dev/null 2>&1 && ip link del "$BRIDGE"
if grep -q '^# BEGIN fleet-e2e' /etc/hosts; then
  hosts_new=$(sed '/^# BEGIN fleet-e2e/,/^# END fleet-e2e/d' /etc/hosts)
  printf '%s\n' "$hosts_new" >/etc/hosts
fi
phase network

if [[ ${FLEET_E2E_PURGE:-0} == 1 ]]; then
  rm -rf "$STATE_DIR" "$FAKEGPU_DIR" "$SLURM_ETC/slurm.conf" "$SLURM_ETC/gres.conf" "$SLURM_ETC/slurmdbd.conf"
  log "purged $STATE_DIR, $FAKEGPU_DIR and /etc/slurm/{slurm,gres,slurmdbd}.conf"
fi
rm -f "$ENV_FILE"
log "cluster down in $(elapsed)s"
