# shellcheck shell=bash
# The test cluster's accounting, as a real cluster keeps it: MariaDB (Debian's mariadb-server) on
# 127.0.0.1:$DB_PORT with its data under $DB_DIR, and slurmdbd on 127.0.0.1:$DBD_PORT storing into
# it, so sacct answers for running and ended jobs (fleet cost reads it). Sourced by up.sh and down.sh
# after lib.sh.

DB_DIR=$STATE_DIR/mysql
DB_SOCK=$DB_DIR/mysqld.sock
DB_PORT=${FLEET_E2E_DB_PORT:-16033}
DBD_PORT=6819
# A test database on loopback, for this machine's root only; never a real secret.
DB_PASS=fleet-e2e-accounting

db_pidfile() { echo "$SLURM_DIR/run/mariadbd.pid"; }
slurmdbd_pidfile() { echo "$SLURM_DIR/run/slurmdbd.pid"; }
db_sql() { mariadb --socket="$DB_SOCK" -uroot -N -B -e "$1"; }
db_ok() { pid_alive "$(db_pidfile)" mariadbd >/dev/null && db_sql 'SELECT 1' >/dev/null 2>&1; }
# slurmdbd answers, and knows the cluster (slurmctld registers only a cluster the database has).
dbd_ok() {
  pid_alive "$(slurmdbd_pidfile)" slurmdbd >/dev/null &&
    [[ $(timeout 10 sacctmgr -n -P show cluster format=cluster 2>/dev/null) == *fleet* ]]
}

slurmdbd_conf() {
  cat <<EOF
# managed by test/e2e/cluster/accounting.sh -- fleet e2e test cluster; do not edit
AuthType=auth/munge
DbdAddr=127.0.0.1
DbdHost=localhost
DbdPort=$DBD_PORT
SlurmUser=root
PidFile=$(slurmdbd_pidfile)
LogFile=$SLURM_DIR/log/slurmdbd.log
DebugLevel=info
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=slurm
StoragePass=$DB_PASS
StorageLoc=slurm_acct_db
EOF
}

# wait_until SECONDS WHAT CMD...: CMD every 0.5 s until it holds, or die naming WHAT.
wait_until() {
  local s=$1 what=$2 t
  shift 2
  for ((t = 0; t < s * 2; t++)); do
    "$@" && return 0
    sleep 0.5
  done
  die "$what"
}

# accounting_up RESET: MariaDB and slurmdbd running, the cluster registered. RESET=1 (slurmctld
# starts from a clean state, forgetting its jobs, so a job id can come again) empties the job records first, so
# sacct never answers for an earlier run's job of the same id.
accounting_up() {
  local reset=$1
  mkdir -p "$DB_DIR" "$SLURM_DIR/run" "$SLURM_DIR/log"
  if ! db_ok; then
    stop_pidfile "$(db_pidfile)" mariadbd 20
    if [[ ! -d $DB_DIR/mysql ]]; then
      mariadb-install-db --user=root --datadir="$DB_DIR" --skip-test-db \
        --auth-root-authentication-method=socket >"$SLURM_DIR/log/mariadb-install.log" 2>&1 ||
        die "mariadb-install-db failed (see $SLURM_DIR/log/mariadb-install.log)"
    fi
    # Detached from up.sh: mariadbd does not daemonize itself.
    setsid /usr/sbin/mariadbd --user=root --datadir="$DB_DIR" --socket="$DB_SOCK" \
      --bind-address=127.0.0.1 --port="$DB_PORT" --pid-file="$(db_pidfile)" \
      --log-error="$SLURM_DIR/log/mariadb.log" --innodb-buffer-pool-size=32M \
      </dev/null >/dev/null 2>&1 &
    wait_until 60 "mariadbd did not answer within 60s (see $SLURM_DIR/log/mariadb.log)" db_ok
    log "mariadbd started on 127.0.0.1:$DB_PORT"
  fi
  db_sql "CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY '$DB_PASS';
    GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';"

  write_if_changed "$SLURM_ETC/slurmdbd.conf" "$(slurmdbd_conf)"
  chmod 600 "$SLURM_ETC/slurmdbd.conf"
  if ((reset)) || ! dbd_ok; then
    stop_pidfile "$(slurmdbd_pidfile)" slurmdbd 20
    ((reset)) && db_sql 'DROP DATABASE IF EXISTS slurm_acct_db'
    /usr/sbin/slurmdbd </dev/null >>"$SLURM_DIR/log/slurmdbd.stdout" 2>&1 ||
      die "slurmdbd failed to start (see $SLURM_DIR/log/slurmdbd.log)"
    wait_until 60 "slurmdbd did not answer within 60s (see $SLURM_DIR/log/slurmdbd.log)" \
      sh -c "timeout 10 sacctmgr -n show cluster >/dev/null 2>&1"
    [[ $(sacctmgr -n -P show cluster format=cluster) == *fleet* ]] ||
      sacctmgr -i add cluster fleet >/dev/null || die "sacctmgr could not add the cluster"
    log "slurmdbd started on 127.0.0.1:$DBD_PORT$( ((reset)) && echo ', job records emptied')"
  else
    log "slurmdbd already running"
  fi
}

accounting_down() {
  stop_pidfiles slurmdbd 20 "$(slurmdbd_pidfile)"
  stop_pidfiles mariadbd 30 "$(db_pidfile)"
}
