#!/usr/bin/env bash
# Bring up a real single-machine SLURM test cluster (idempotent; safe to re-run; root only).
#   slurmctld on bridge $BRIDGE ($CTL_IP), slurmd node1..nodeN each in its own netns,
#   GRES gpu:8 per node backed by fake device files, a login sshd on 127.0.0.1:$SSH_PORT.
# Writes $STATE_DIR/cluster.env for the e2e test. See README.md beside this file.
set -Eeuo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"
# shellcheck source=accounting.sh
. "$HERE/accounting.sh"

on_err() {
  local rc=$? line=$1
  echo "ERROR: up.sh failed at line $line (exit $rc) after $(elapsed)s" >&2
  show_logs 40
  exit "$rc"
}
trap 'on_err $LINENO' ERR

DIE_SHOW_LOGS=1
[[ $(id -u) -eq 0 ]] || die "up.sh must run as root"
export DEBIAN_FRONTEND=noninteractive
log "fleet e2e cluster up: $NODE_COUNT nodes, state dir $STATE_DIR"
((NODE_COUNT >= 1 && NODE_COUNT <= 200)) || die "FLEET_E2E_NODE_COUNT must be 1..200"

# ---------------------------------------------------------------- packages
pkg_installed() { [[ $(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null) == installed ]]; }
need=()
for p in slurm-wlm slurmdbd mariadb-server munge openssh-server curl iproute2; do
  pkg_installed "$p" || need+=("$p")
done
[[ -x /usr/bin/python3 ]] || need+=(python3) # the smoke test and e2e fixtures use python3
if ((${#need[@]})); then
  log "installing: ${need[*]}"
  mkdir -p "$STATE_DIR"
  # Keep package maintainer scripts from starting daemons (slurmd/slurmctld without a config,
  # a system sshd): we start exactly what we need ourselves.
  added_policy=0
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
    added_policy=1
  fi
  apt_ok=1
  {
    timeout 300 apt-get update -q &&
      timeout 900 apt-get install -y -q --no-install-recommends \
        -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${need[@]}"
  } >"$STATE_DIR/apt.log" 2>&1 || apt_ok=0
  ((added_policy)) && rm -f /usr/sbin/policy-rc.d
  if ((!apt_ok)); then
    tail -n 40 "$STATE_DIR/apt.log" >&2
    die "apt-get failed (full log: $STATE_DIR/apt.log)"
  fi
else
  log "packages already installed"
fi
phase packages

# ---------------------------------------------------------------- dirs, munge
mkdir -p "$STATE_DIR" "$SLURM_DIR"/{ctld,spool,log,run} "$SSH_DIR" "$FAKEGPU_DIR"
chmod 700 "$SSH_DIR"
# Fake GPUs: character devices with /dev/null's numbers (1:3). slurmd drops a gres.conf File= that
# is a regular file ("not a valid character or block device") and then sets no
# CUDA_VISIBLE_DEVICES; a char device keeps the env var right. Falls back to plain files where
# mknod is not allowed (FLEET_E2E_FAKEGPU=file forces plain files).
fakegpu_changed=0
for ((g = 0; g < GPUS_PER_NODE; g++)); do
  f=$FAKEGPU_DIR/nvidia$g
  if [[ ${FLEET_E2E_FAKEGPU:-chardev} == chardev ]]; then
    [[ -c $f ]] && continue
    rm -f "$f"
    if mknod -m 666 "$f" c 1 3 2>/dev/null; then
      fakegpu_changed=1
      continue
    fi
    log "WARNING: mknod not permitted; $f is a plain file (no CUDA_VISIBLE_DEVICES in jobs)"
  fi
  if [[ ! -f $f ]]; then
    rm -f "$f"
    : >"$f"
    fakegpu_changed=1
  fi
done

munge_ok() { timeout 5 munge -n 2>/dev/null | timeout 5 unmunge >/dev/null 2>&1; }
if munge_ok; then
  log "munged already running"
else
  if [[ ! -s /etc/munge/munge.key ]]; then
    log "creating /etc/munge/munge.key"
    mkdir -p /etc/munge
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none
  fi
  chown -R munge:munge /etc/munge
  chmod 700 /etc/munge
  chmod 400 /etc/munge/munge.key
  mkdir -p /run/munge /var/lib/munge /var/log/munge
  chown munge:munge /run/munge /var/lib/munge /var/log/munge
  chmod 755 /run/munge
  # a stale socket/pid from a killed munged blocks the start
  if [[ -e /run/munge/munged.pid ]] && ! pid_alive /run/munge/munged.pid munged >/dev/null; then
    rm -f /run/munge/munged.pid /run/munge/munge.socket.2 /run/munge/munge.socket.2.lock
  fi
  runuser -u munge -- /usr/sbin/munged </dev/null >/dev/null 2>&1 ||
    die "munged failed to start: $(tail -n 5 /var/log/munge/munged.log 2>/dev/null)"
  : >"$MUNGE_MARKER"
  for ((i = 0; i < 50; i++)); do
    munge_ok && break
    sleep 0.2
  done
  munge_ok || die "munged does not answer: $(tail -n 5 /var/log/munge/munged.log 2>/dev/null)"
  log "munged started"
fi
phase munge

# ---------------------------------------------------------------- network
if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
  ip link add "$BRIDGE" type bridge stp_state 0 forward_delay 0
fi
[[ $(ip -4 addr show dev "$BRIDGE") == *"inet $CTL_IP/24"* ]] || ip addr add "$CTL_IP/24" dev "$BRIDGE"
ip link set "$BRIDGE" up
for ((i = 1; i <= NODE_COUNT; i++)); do
  ns=$(node_ns "$i") veth=$(node_veth "$i") ip4=$(node_ip "$i")
  [[ -e /var/run/netns/$ns ]] || ip netns add "$ns"
  if ! ip -n "$ns" link show eth0 >/dev/null 2>&1; then
    ip link del "$veth" >/dev/null 2>&1 || true
    ip link add "$veth" type veth peer name eth0 netns "$ns"
  fi
  ip link set "$veth" master "$BRIDGE"
  ip link set "$veth" up
  ip -n "$ns" link set lo up
  [[ $(ip -n "$ns" -4 addr show dev eth0) == *"inet $ip4/24"* ]] || ip -n "$ns" addr add "$ip4/24" dev eth0
  ip -n "$ns" link set eth0 up
done
# /etc/hosts block (rewritten in place: /etc/hosts may be a bind mount)
hosts_block=$(
  echo "# BEGIN fleet-e2e (managed by test/e2e/cluster/up.sh)"
  echo "$CTL_IP fleet-ctl"
  for ((i = 1; i <= NODE_COUNT; i++)); do echo "$(node_ip "$i") $(node_name "$i")"; done
  echo "# END fleet-e2e"
)
hosts_new=$(
  sed '/^# BEGIN fleet-e2e/,/^# END fleet-e2e/d' /etc/hosts
  echo "$hosts_block"
)
if [[ $hosts_new != "$(cat /etc/hosts)" ]]; then
  printf '%s\n' "$hosts_new" >/etc/hosts
  log "/etc/hosts updated"
fi
# reachability of every netns from the root namespace (bounded; needs ping from iputils-ping)
if command -v ping >/dev/null; then
  for ((i = 1; i <= NODE_COUNT; i++)); do
    ok=0
    for ((t = 0; t < 20; t++)); do
      if ping -c1 -W1 "$(node_ip "$i")" >/dev/null 2>&1; then
        ok=1
        break
      fi
      sleep 0.25
    done
    ((ok)) || die "netns $(node_ns "$i") ($(node_ip "$i")) not reachable over $BRIDGE"
  done
fi
phase network

# ---------------------------------------------------------------- slurm config
CTL_HOST=$(hostname -s)
nodes_range="node[1-$NODE_COUNT]"
((NODE_COUNT == 1)) && nodes_range=node1
slurm_conf=$(
  cat <<EOF
# managed by test/e2e/cluster/up.sh -- fleet e2e test cluster; do not edit
ClusterName=fleet
SlurmctldHost=$CTL_HOST($CTL_IP)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation=$SLURM_DIR/ctld
SlurmdSpoolDir=$SLURM_DIR/spool/%n
SlurmctldPidFile=$SLURM_DIR/run/slurmctld.pid
SlurmdPidFile=$SLURM_DIR/run/slurmd-%n.pid
SlurmctldLogFile=$SLURM_DIR/log/slurmctld.log
SlurmdLogFile=$SLURM_DIR/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
# no systemd/cgroups needed
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
# sacct answers as on a real cluster (accounting.sh); GPUs are counted in AllocTRES.
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$DBD_PORT
AccountingStorageTRES=gres/gpu
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1
GresTypes=gpu
# trust the configured CPUs/GPUs instead of the 2-core host
SlurmdParameters=config_overrides
ReturnToService=2
MinJobAge=300
KillWait=5
InactiveLimit=0
SlurmctldTimeout=30
SlurmdTimeout=60
MessageTimeout=10
UnkillableStepTimeout=60
PropagateResourceLimits=NONE
MailProg=/bin/true
NodeName=DEFAULT CPUs=$CPUS_PER_NODE Boards=1 SocketsPerBoard=1 CoresPerSocket=$CPUS_PER_NODE ThreadsPerCore=1 RealMemory=16384 Gres=gpu:$GPUS_PER_NODE State=UNKNOWN
EOF
  for ((i = 1; i <= NODE_COUNT; i++)); do
    echo "NodeName=$(node_name "$i") NodeAddr=$(node_ip "$i") NodeHostname=$(node_name "$i")"
  done
  echo "PartitionName=$PARTITION Nodes=$nodes_range Default=YES MaxTime=INFINITE State=UP"
)
gres_conf=$(
  echo "# managed by test/e2e/cluster/up.sh -- fake device files stand in for GPUs"
  echo "AutoDetect=off"
  echo "NodeName=$nodes_range Name=gpu File=$FAKEGPU_DIR/nvidia[0-$((GPUS_PER_NODE - 1))]"
)
mkdir -p "$SLURM_ETC"
cfg_changed=$fakegpu_changed
write_if_changed() { # FILE CONTENT
  if [[ ! -f $1 || $(cat "$1") != "$2" ]]; then
    printf '%s\n' "$2" >"$1"
    cfg_changed=1
    log "wrote $1"
  fi
}
write_if_changed "$SLURM_ETC/slurm.conf" "$slurm_conf"
write_if_changed "$SLURM_ETC/gres.conf" "$gres_conf"
phase slurm-config

# ---------------------------------------------------------------- slurmctld + slurmd
ns_inode() { stat -L -c %i "/var/run/netns/$1" 2>/dev/null; }
slurmd_ok() { # i: alive, inside its own netns, and its UTS namespace says hostname nodeN
  local pid
  pid=$(pid_alive "$(slurmd_pidfile "$1")" slurmd) || return 1
  [[ $(stat -L -c %i "/proc/$pid/ns/net" 2>/dev/null) == "$(ns_inode "$(node_ns "$1")")" ]] &&
    [[ $(nsenter -t "$pid" -u hostname 2>/dev/null) == "$(node_name "$1")" ]]
}
ctld_ok() { pid_alive "$(slurmctld_pidfile)" slurmctld >/dev/null && timeout 10 scontrol ping 2>/dev/null | grep -q 'is UP'; }

if ((cfg_changed)); then
  log "slurm config changed: restarting slurm daemons"
  stop_pidfiles slurm 20 "$SLURM_DIR"/run/slurmd-*.pid "$(slurmctld_pidfile)"
fi
# slurmctld -c (below) forgets every job, and an id can come again: the accounting's job records go with it.
if ctld_ok; then accounting_up 0; else accounting_up 1; fi
phase accounting
if ctld_ok; then
  log "slurmctld already running"
else
  stop_pidfile "$(slurmctld_pidfile)" slurmctld 20
  # -c: start from a clean state (no jobs/node states left over from an earlier run)
  /usr/sbin/slurmctld -c </dev/null >>"$SLURM_DIR/log/slurmctld.stdout" 2>&1
  for ((t = 0; t < 60; t++)); do
    ctld_ok && break
    sleep 0.5
  done
  ctld_ok || die "slurmctld did not come up within 30s"
  log "slurmctld started (pid $(cat "$(slurmctld_pidfile)"))"
fi
phase slurmctld

to_start=()
for ((i = 1; i <= NODE_COUNT; i++)); do slurmd_ok "$i" || to_start+=("$i"); done
if ((${#to_start[@]})); then # stale slurmd (wrong netns/hostname): stop them all at once
  stale=()
  for i in "${to_start[@]}"; do stale+=("$(slurmd_pidfile "$i")"); done
  stop_pidfiles slurmd 20 "${stale[@]}"
fi
started_any=0
for i in "${to_start[@]}"; do
  n=$(node_name "$i")
  mkdir -p "$SLURM_DIR/spool/$n"
  # own netns (IP) + own UTS namespace (hostname nodeN, so `hostname`/`hostname --ip-address`
  # inside jobs behave like on a real node); the mount namespace is shared so /sys stays mounted
  # shellcheck disable=SC2016
  nsenter --net="/var/run/netns/$(node_ns "$i")" unshare --uts -- \
    sh -c 'hostname "$1" && exec /usr/sbin/slurmd -N "$1"' sh "$n" \
    </dev/null >>"$SLURM_DIR/log/slurmd-$n.stdout" 2>&1
  started_any=1
done
for ((i = 1; i <= NODE_COUNT; i++)); do
  for ((t = 0; t < 50; t++)); do
    slurmd_ok "$i" && break
    sleep 0.2
  done
  slurmd_ok "$i" || die "slurmd for $(node_name "$i") did not start (see $SLURM_DIR/log/slurmd-$(node_name "$i").log)"
done
if ((started_any)); then log "slurmd started for the missing nodes"; else log "all slurmd already running"; fi
phase slurmd

# wait (bounded) until every node is usable; on a fresh start that means IDLE
ready=0
last_resume=0
for ((t = 0; t < 120; t++)); do
  states=$(sinfo -h -N -p "$PARTITION" -o '%N %t' 2>/dev/null | sort -u || true)
  good=$(awk '$2 ~ /^(idle|mix|alloc)$/' <<<"$states" | wc -l)
  if ((good == NODE_COUNT)); then
    ready=1
    break
  fi
  # nodes that came back DOWN/DRAIN ("unexpectedly rebooted", "not responding"): resume them
  bad=$(awk '$2 ~ /^(down|drain|drng|fail|inval)/ {print $1}' <<<"$states" | paste -sd, -)
  if [[ -n $bad ]] && ((t - last_resume >= 6)); then
    log "resuming nodes: $bad"
    scontrol update nodename="$bad" state=resume 2>/dev/null || true
    last_resume=$t
  fi
  sleep 0.5
done
if ((!ready)); then
  echo "sinfo:" >&2
  sinfo -N -l >&2 || true
  die "nodes did not become idle within 60s"
fi
log "nodes ready: $(sinfo -h -N -p "$PARTITION" -o '%N:%t' | sort -u | paste -sd' ' -)"
phase nodes-idle

# ---------------------------------------------------------------- login sshd
[[ -s $SSH_DIR/id_ed25519 ]] || ssh-keygen -q -t ed25519 -N '' -C fleet-e2e-client -f "$SSH_DIR/id_ed25519"
[[ -s $SSH_DIR/ssh_host_ed25519_key ]] ||
  ssh-keygen -q -t ed25519 -N '' -C fleet-e2e-host -f "$SSH_DIR/ssh_host_ed25519_key"
cp "$SSH_DIR/id_ed25519.pub" "$SSH_DIR/authorized_keys"
chmod 600 "$SSH_DIR/authorized_keys" "$SSH_DIR/id_ed25519" "$SSH_DIR/ssh_host_ed25519_key"
host_pub=$(awk '{print $1" "$2}' "$SSH_DIR/ssh_host_ed25519_key.pub")
echo "[$SSH_HOST]:$SSH_PORT $host_pub" >"$SSH_DIR/known_hosts"
mkdir -p /run/sshd
chmod 755 /run/sshd
sshd_conf=$(
  cat <<EOF
# fleet e2e login node -- managed by test/e2e/cluster/up.sh
Port $SSH_PORT
ListenAddress $SSH_HOST
HostKey $SSH_DIR/ssh_host_ed25519_key
PidFile $SSH_DIR/sshd.pid
AuthorizedKeysFile $SSH_DIR/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes yes
X11Forwarding no
PrintMotd no
PrintLastLog no
MaxStartups 64:30:128
MaxSessions 64
AcceptEnv LANG LC_*
Subsystem sftp /usr/lib/openssh/sftp-server
EOF
)
sshd_changed=0
if [[ ! -f $SSH_DIR/sshd_config || $(cat "$SSH_DIR/sshd_config") != "$sshd_conf" ]]; then
  printf '%s\n' "$sshd_conf" >"$SSH_DIR/sshd_config"
  sshd_changed=1
fi
/usr/sbin/sshd -t -f "$SSH_DIR/sshd_config" || die "sshd config test failed"
cat >"$SSH_DIR/config" <<EOF
Host fleet-login
  HostName $SSH_HOST
  Port $SSH_PORT
  User $SSH_USER
  IdentityFile $SSH_DIR/id_ed25519
  IdentitiesOnly yes
  UserKnownHostsFile $SSH_DIR/known_hosts
  StrictHostKeyChecking yes
  BatchMode yes
EOF
if ((sshd_changed)) || ! pid_alive "$(sshd_pidfile)" sshd >/dev/null; then
  stop_pidfile "$(sshd_pidfile)" sshd
  /usr/sbin/sshd -f "$SSH_DIR/sshd_config" -E "$SSH_DIR/sshd.log" </dev/null >/dev/null 2>&1 ||
    die "sshd failed to start: $(tail -n 5 "$SSH_DIR/sshd.log")"
  log "login sshd started on $SSH_HOST:$SSH_PORT"
else
  log "login sshd already running"
fi
ok=0
for ((t = 0; t < 40; t++)); do
  if out=$(login 'command -v sbatch squeue scancel scontrol srun sinfo && sinfo -h -o %D' </dev/null 2>&1); then
    ok=1
    break
  fi
  sleep 0.25
done
((ok)) || die "ssh login to $SSH_HOST:$SSH_PORT failed: $out"
[[ $(wc -l <<<"$out") -ge 7 ]] || die "slurm commands not on PATH over ssh: $out"
phase sshd

# ---------------------------------------------------------------- env file
node_names="" node_ips=""
for ((i = 1; i <= NODE_COUNT; i++)); do
  node_names+="${node_names:+ }$(node_name "$i")"
  node_ips+="${node_ips:+ }$(node_ip "$i")"
done
{
  echo "# written by test/e2e/cluster/up.sh"
  echo "FLEET_E2E_SSH_HOST=$SSH_HOST"
  echo "FLEET_E2E_SSH_PORT=$SSH_PORT"
  echo "FLEET_E2E_SSH_USER=$SSH_USER"
  echo "FLEET_E2E_SSH_KEY=$SSH_DIR/id_ed25519"
  echo "FLEET_E2E_HOST_KEY=\"$host_pub\""
  echo "FLEET_E2E_HOST_KEY_FILE=$SSH_DIR/ssh_host_ed25519_key.pub"
  echo "FLEET_E2E_KNOWN_HOSTS=$SSH_DIR/known_hosts"
  echo "FLEET_E2E_SSH_CONFIG=$SSH_DIR/config"
  echo "FLEET_E2E_PARTITION=$PARTITION"
  echo "FLEET_E2E_NODES=\"$node_names\""
  echo "FLEET_E2E_NODE_IPS=\"$node_ips\""
  for ((i = 1; i <= NODE_COUNT; i++)); do
    echo "FLEET_E2E_$(node_name "$i" | tr '[:lower:]' '[:upper:]')_IP=$(node_ip "$i")"
    echo "FLEET_E2E_$(node_name "$i" | tr '[:lower:]' '[:upper:]')_NETNS=$(node_ns "$i")"
  done
  echo "FLEET_E2E_GPUS_PER_NODE=$GPUS_PER_NODE"
  echo "FLEET_E2E_CPUS_PER_NODE=$CPUS_PER_NODE"
  echo "FLEET_E2E_CONTROLLER_IP=$CTL_IP"
  echo "FLEET_E2E_SLURM_LOG_DIR=$SLURM_DIR/log"
} >"$ENV_FILE.tmp"
mv "$ENV_FILE.tmp" "$ENV_FILE"
phase env-file

log "cluster up in $(elapsed)s; env file: $ENV_FILE"
sinfo -N -o '%N %P %t %c %G %o' | sed 's/^/  /'
