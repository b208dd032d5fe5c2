#!/usr/bin/env bash
# A real Slurm cluster on localhost for the tests: munged, slurmctld and one
# slurmd with every CPU of this machine, and on request slurmdbd with MariaDB
# so that sacct works. Everything lives in one state directory; the system's
# own /etc/slurm is not touched.
#
# With --nodes N, N nodes on this one machine instead (nbnode1..N), each
# slurmd in a UTS namespace of its own, so that its jobs see their node's
# host name, and on its own share of the CPUs (the jobs inherit it: the task
# plugin binds nothing). More nodes than CPUs share them round robin (node i
# on CPU i-1 modulo the CPUs): nbnode1 and nbnode2 never share one while
# there are two; --node-cpus L1:L2:... gives node i the CPU list Li instead.
# This cluster has its own state directory and ports, and runs beside the
# one-node cluster. With --tag NAME, another one beside both (its own state
# directory and ports), with the slurm.conf lines of --conf-extra FILE
# added (e.g. a HealthCheckProgram).
#
#   tests/slurm/cluster.sh start [--with-db] [--nodes N [--node-cpus L1:L2:...]]
#                                [--tag NAME [--conf-extra FILE]]   start (or check) it
#   tests/slurm/cluster.sh stop [--nodes N] [--tag NAME]           stop what start started
#   tests/slurm/cluster.sh env [--nodes N] [--tag NAME]            the variables clients need
#
# Clients find the cluster through SLURM_CONF (printed by `env`). The state
# directory is $NB_SLURM_DIR, by default .cache/slurm in the repository
# (.cache/slurm-Nnodes with --nodes N).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cmd=${1:-}
[ $# -gt 0 ] && shift
with_db=0 nodes=1 node_cpu_lists="" tag="" conf_extra=""
while [ $# -gt 0 ]; do
  case $1 in
    --with-db) with_db=1 ;;
    --nodes) nodes=${2:-}; shift ;;
    --node-cpus) node_cpu_lists=${2:-}; shift ;;
    --tag) tag=${2:-}; shift ;;
    --conf-extra) conf_extra=${2:-}; shift ;;
    *) echo "cluster.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[[ $nodes =~ ^[1-9][0-9]*$ ]] || { echo "cluster.sh: --nodes needs a count of nodes" >&2; exit 2; }
if [ "$nodes" -gt 1 ] && [ "$with_db" = 1 ]; then
  echo "cluster.sh: --with-db is for the one-node cluster (one slurmdbd serves this machine)" >&2; exit 2
fi
dir=${NB_SLURM_DIR:-$repo/.cache/slurm}
ctld_port=6817 slurmd_port=6818
if [ "$nodes" -gt 1 ]; then
  dir=$dir-${nodes}nodes
  ctld_port=6917 slurmd_port=6918
fi
if [ -n "$tag" ]; then
  [[ $tag =~ ^[a-z0-9]+$ ]] || { echo "cluster.sh: --tag wants a word of a-z and 0-9" >&2; exit 2; }
  dir=$dir-$tag
  ctld_port=7017 slurmd_port=7018
fi
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

# The CPUs of node i (1..nodes): an equal share of this process's CPUs, or
# with more nodes than CPUs the one CPU it shares round robin.
node_cpus() {
  local all per
  if [ -n "$node_cpu_lists" ]; then
    echo "$node_cpu_lists" | cut -d: -f"$1"
    return
  fi
  read -ra all <<< "$(taskset -pc $$ | sed 's/.*: //; s/,/ /g' | awk '{
    for (i = 1; i <= NF; i++) { n = split($i, r, "-"); for (c = r[1]; c <= r[n]; c++) printf "%d ", c } }')"
  if [ "$nodes" -gt ${#all[@]} ]; then
    echo "${all[$(( ($1 - 1) % ${#all[@]} ))]}"
    return
  fi
  per=$(( ${#all[@]} / nodes ))
  echo "${all[@]:$(( ($1 - 1) * per )):$per}" | tr ' ' ','
}

write_conf() {
  local with_db=$1 cpus mem
  cpus=$(nproc)
  mem=$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)
  if [ "$nodes" -gt 1 ]; then
    cpus=$(( cpus >= nodes ? cpus / nodes : 1 )) mem=$((mem / nodes))
  fi
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
SlurmctldLogFile=$dir/slurmctld.log
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
ProctrackType=proctrack/linuxproc
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
CONF
  if [ "$nodes" = 1 ]; then
    cat >> "$conf" <<CONF
SlurmdPidFile=$dir/slurmd.pid
SlurmdLogFile=$dir/slurmd.log
TaskPlugin=task/affinity
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
  else
    # per node: its spool, log and PMIx client directories (two steps of
    # one job on one machine would share them), and its own port
    cat >> "$conf" <<CONF
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmdLogFile=$dir/slurmd-%n.log
SlurmdSpoolDir=$dir/d-%n
TmpFS=$dir/tmp-%n
TaskPlugin=task/none
CONF
    for i in $(seq "$nodes"); do
      mkdir -p "$dir/d-nbnode$i" "$dir/tmp-nbnode$i"
      [ -n "$node_cpu_lists" ] && cpus=$(taskset -c "$(node_cpus "$i")" nproc)
      echo "NodeName=nbnode$i NodeHostname=nbnode$i NodeAddr=127.0.0.1 Port=$((slurmd_port + 2 + i)) CPUs=$cpus RealMemory=$mem State=UNKNOWN" >> "$conf"
    done
    echo "PartitionName=debug Nodes=nbnode[1-$nodes] Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO" >> "$conf"
  fi
  if [ -n "$conf_extra" ]; then
    cat "$conf_extra" >> "$conf"
  fi
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

start_slurmds() {
  if [ "$nodes" = 1 ]; then
    running slurmd || slurmd -f "$conf" -N "$node" </dev/null >>"$dir/daemons.out" 2>&1
    wait_for 30 "node $node" bash -c "sinfo -h -N -o %t | grep -Eq '^(idle|mix|alloc)'"
    return
  fi
  for i in $(seq "$nodes"); do
    running "slurmd-nbnode$i" ||
      taskset -c "$(node_cpus "$i")" unshare --uts sh -c \
        "hostname nbnode$i && exec slurmd -f '$conf' -N nbnode$i" </dev/null >>"$dir/daemons.out" 2>&1
  done
  wait_for 30 "nodes nbnode[1-$nodes]" bash -c \
    "[ \$(sinfo -h -N -o %t | grep -Ec '^(idle|mix|alloc)') = $nodes ]"
}

start() {
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
  start_slurmds
  echo "cluster.sh: Slurm is up on $(sinfo -h -o %N) ($(nproc) CPUs$([ $with_db = 1 ] && echo ', with accounting')); export SLURM_CONF=$conf"
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
  local d
  for d in "$dir"/slurmd*.pid; do [ -f "$d" ] && stop_daemon "$(basename "$d" .pid)"; done
  for d in slurmctld slurmdbd; do stop_daemon $d; done
  # anything still running on this state directory (a daemon whose pid file
  # was lost) would keep the ports
  pkill -9 -f -- "$dir/" 2>/dev/null || true
  if [ -f "$dir/mariadb.log" ] && command -v mariadb-admin >/dev/null; then
    mariadb-admin shutdown 2>/dev/null || true
    rm -f "$dir/mariadb.log"
  fi
  # munged serves every cluster on this machine: the last one stopped stops it
  if ! pgrep -x slurmctld >/dev/null; then
    pkill -x munged 2>/dev/null || true
    for _ in $(seq 100); do pgrep -x munged >/dev/null || break; sleep 0.1; done
  fi
  echo "cluster.sh: stopped"
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  env) echo "export SLURM_CONF=$conf" ;;
  *) echo "usage: $0 start [--with-db] [--nodes N] | stop [--nodes N] | env [--nodes N]" >&2; exit 2 ;;
esac
