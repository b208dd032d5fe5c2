#!/usr/bin/env bash
# A real Slurm cluster on localhost for the tests: munged, slurmctld and one
# slurmd with every CPU of this machine, and on request slurmdbd with MariaDB
# so that sacct works. Everything lives in one state directory; the system's
# own /etc/slurm is not touched.
#
#   tests/slurm/cluster.sh start [--with-db]   start (or check) the cluster
#   tests/slurm/cluster.sh stop                stop what start started
#   tests/slurm/cluster.sh env                 the variables clients need
#
# Clients find the cluster through SLURM_CONF (printed by `env`). The state
# directory is $NB_SLURM_DIR, by default .cache/slurm in the repository.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
dir=${NB_SLURM_DIR:-$repo/.cache/slurm}
conf=$dir/slurm.conf
node=$(hostname -s)
# Job ids start again at 1 with a new state directory, while the accounting
# database (one for the machine) keeps every cluster's past jobs: a cluster
# name of its own for each state directory keeps sacct from answering for an
# old job of the same id.
cluster_name() {
  [ -s "$dir/cluster_name" ] ||
    { mkdir -p "$dir"; echo "noisebench$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')" > "$dir/cluster_name"; }
  cat "$dir/cluster_name"
}

die() { echo "cluster.sh: $*" >&2; exit 1; }

install_packages() {
  local want=(slurmctld slurmd slurm-client munge)
  [ "${1:-}" = db ] && want+=(slurmdbd mariadb-server)
  local missing=()
  for p in "${want[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return
  echo "cluster.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >/dev/null \
    || { sleep 2; apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
}

wait_for() { # wait_for SECONDS what command...: until the command succeeds
  local deadline=$((SECONDS + $1)) what=$2; shift 2
  until timeout 10 "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || die "$what did not come up in time (logs in $dir)"
    sleep 0.2
  done
}

write_conf() {
  local with_db=$1 cpus mem
  cpus=$(nproc)
  mem=$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)
  # state saved under another cluster name (before names were per state
  # directory) would stop slurmctld
  if [ -f "$dir/ctld/clustername" ] && [ "$(cat "$dir/ctld/clustername")" != "$(cluster_name)" ]; then
    rm -rf "$dir/ctld"
  fi
  mkdir -p "$dir/ctld" "$dir/d"
  rm -f "$dir/cgroup.conf"
  cat > "$conf" <<CONF
ClusterName=$(cluster_name)
SlurmctldHost=$node(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$dir/ctld
SlurmdSpoolDir=$dir/d
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmctldPort=6817
SlurmdPort=6818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
KillWait=5
InactiveLimit=0
MinJobAge=300
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=30
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
  if [ "$with_db" = 1 ]; then
    cat >> "$conf" <<CONF
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=6819
CONF
  fi
}

start_munge() {
  pgrep -x munged >/dev/null && return
  mkdir -p /run/munge && chown munge:munge /run/munge
  [ -s /etc/munge/munge.key ] || { dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 2>/dev/null;
    chown munge:munge /etc/munge/munge.key; chmod 400 /etc/munge/munge.key; }
  runuser -u munge -- /usr/sbin/munged </dev/null >>"$dir/daemons.out" 2>&1
  wait_for 10 munged munge -n
}

start_db() {
  if ! pgrep -x mariadbd >/dev/null && ! pgrep -x mysqld >/dev/null; then
    mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
    [ -d /var/lib/mysql/mysql ] || mariadb-install-db --user=mysql >/dev/null
    (mysqld_safe --bind-address=127.0.0.1 </dev/null > "$dir/mariadb.log" 2>&1 &)
    wait_for 30 mariadb mariadb -e "select 1"
  fi
  mariadb -e "CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'noisebench';
              GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost'; FLUSH PRIVILEGES;"
  cat > "$dir/slurmdbd.conf" <<CONF
AuthType=auth/munge
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=6819
SlurmUser=root
LogFile=$dir/slurmdbd.log
PidFile=$dir/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=noisebench
StorageLoc=slurm_acct_db
CONF
  chmod 600 "$dir/slurmdbd.conf"
  if ! [ -f "$dir/slurmdbd.pid" ] || ! kill -0 "$(cat "$dir/slurmdbd.pid")" 2>/dev/null; then
    # slurmdbd reads slurmdbd.conf beside $SLURM_CONF
    SLURM_CONF=$conf slurmdbd </dev/null >>"$dir/daemons.out" 2>&1
    wait_for 30 slurmdbd bash -c "SLURM_CONF=$conf sacctmgr -n list cluster"
  fi
  SLURM_CONF=$conf sacctmgr -i add cluster "$(cluster_name)" >/dev/null 2>&1 || true
}

running() { [ -f "$dir/$1.pid" ] && kill -0 "$(cat "$dir/$1.pid")" 2>/dev/null; }

start() {
  local with_db=0
  [ "${1:-}" = --with-db ] && with_db=1
  [ "$(id -u)" -eq 0 ] || die "needs root (it starts the daemons as root)"
  install_packages $([ $with_db = 1 ] && echo db)
  mkdir -p "$dir"
  # a cluster already running with the other accounting setting is restarted
  local has_db=0
  grep -q slurmdbd "$conf" 2>/dev/null && has_db=1
  if running slurmctld && [ $has_db != $with_db ]; then
    stop
  fi
  write_conf $with_db
  start_munge
  [ $with_db = 1 ] && start_db
  export SLURM_CONF=$conf
  # daemons get no stdio of the caller: a caller reading our output to its
  # end (a test) must not wait on them
  running slurmctld || slurmctld -f "$conf" </dev/null >>"$dir/daemons.out" 2>&1
  wait_for 30 slurmctld scontrol ping
  running slurmd || slurmd -f "$conf" -N "$node" </dev/null >>"$dir/daemons.out" 2>&1
  wait_for 30 "node $node" bash -c "sinfo -h -N -o %t | grep -Eq '^(idle|mix|alloc)'"
  echo "cluster.sh: Slurm is up on $node ($(nproc) CPUs$([ $with_db = 1 ] && echo ', with accounting')); export SLURM_CONF=$conf"
}

# Stops one daemon: SIGTERM, up to 30 s to save its state, then SIGKILL.
stop_daemon() {
  local d=$1 pid
  running "$d" || return 0
  pid=$(cat "$dir/$d.pid")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
}

stop() {
  export SLURM_CONF=$conf
  for d in slurmd slurmctld slurmdbd; do stop_daemon $d; done
  # anything still running on this state directory (a daemon whose pid file
  # was lost) would keep the ports
  pkill -9 -f -- "$dir/" 2>/dev/null || true
  if [ -f "$dir/mariadb.log" ] && command -v mariadb-admin >/dev/null; then
    mariadb-admin shutdown 2>/dev/null || true
    rm -f "$dir/mariadb.log"
  fi
  pkill -x munged 2>/dev/null || true
  for _ in $(seq 100); do pgrep -x munged >/dev/null || break; sleep 0.1; done
  echo "cluster.sh: stopped"
}

case "${1:-}" in
  start) shift; start "$@" ;;
  stop) stop ;;
  env) echo "export SLURM_CONF=$conf" ;;
  *) echo "usage: $0 start [--with-db] | stop | env" >&2; exit 2 ;;
esac
