#!/usr/bin/env bash
# What the nodes the benchmark's jobs run on offer, for the sweep
# (parameters.xml): the CPUs a job may use on every node, their processor
# (uname -m, Slurm's Arch), or how many are up (the acceptance preset's
# every node).
#
#   node_shape.sh cpus|arch|nodes local                 this machine
#   node_shape.sh cpus|arch|nodes slurm PARTITION [CPUS [CORE_SPEC [ARCH [NODE_LIST]]]]
#
# Under Slurm the figures are Slurm's, for the partition the jobs go to:
# a node's CPUs less those it keeps for the system (CPUEfctv: CPUSpecList,
# CoreSpecCount), or less CORE_SPEC cores when the jobs ask for them with
# --core-spec; the smallest over the partition's nodes, so that every
# point of the sweep fits on each of them. CPUS and ARCH, when not empty,
# are a system file's own values and win (jube/platforms/<system>).
# NODE_LIST, in Slurm's notation (nid[0012-0015]): of those nodes only.
set -euo pipefail
what=${1:-} where=${2:-}
die() { echo "node_shape.sh: $*" >&2; exit 2; }
[[ $what =~ ^(cpus|arch|nodes)$ ]] || die "first argument: cpus, arch or nodes, not '$what'"
if [ "$where" = local ]; then
  case $what in
    cpus) nproc | tr -d '\n' ;;
    arch) uname -m | tr -d '\n' ;;
    nodes) printf 1 ;;
  esac
  exit 0
fi
[ "$where" = slurm ] || die "second argument: local or slurm, not '$where'"
partition=${3:-} cpus=${4:-} core_spec=${5:-} arch=${6:-} list=${7:-}
[ -n "$partition" ] || die "slurm: no partition (site_partition in system.xml)"
if [ "$what" = cpus ] && [ -n "$cpus" ]; then printf %s "$cpus"; exit 0; fi
if [ "$what" = arch ] && [ -n "$arch" ]; then printf %s "$arch"; exit 0; fi
[ -z "$core_spec" ] || [[ $core_spec =~ ^[0-9]+$ ]] || die "core spec '$core_spec' is not a count of cores"
nodes=$(scontrol -o show node 2>&1) || die "scontrol show node failed: ${nodes%%$'\n'*}"
named=""
if [ -n "$list" ]; then
  named=$(scontrol show hostnames "$list" 2>&1) || die "node list '$list': ${named%%$'\n'*}"
  named=$(printf '%s' "$named" | tr '\n' ' ')
fi
printf '%s\n' "$nodes" | awk -v want="$what" -v partition="$partition" -v spec="$core_spec" \
    -v named="$named" -v list="$list" '
  function field(name,   i) {
    for (i = 1; i <= NF; i++) if (index($i, name "=") == 1) return substr($i, length(name) + 2)
    return ""
  }
  BEGIN {
    listed = split(named, names, " ")
    for (i = 1; i <= listed; i++) wanted[names[i]] = 1
  }
  {
    if (listed && !(field("NodeName") in wanted)) next
    n = split(field("Partitions"), parts, ",")
    mine = 0
    for (i = 1; i <= n; i++) mine = mine || parts[i] == partition
    if (!mine) next
    seen[field("NodeName")] = 1
    found++
    if (field("State") !~ /DOWN|DRAIN|FAIL|NOT_RESPONDING/) up++
    usable = field("CPUEfctv") != "" ? field("CPUEfctv") : field("CPUTot")
    if (spec != "") usable = field("CPUTot") - spec * field("ThreadsPerCore")
    if (found == 1 || usable < least) least = usable
    arches[field("Arch")] = 1
  }
  END {
    for (i = 1; i <= listed; i++) if (!(names[i] in seen)) {
      print "node_shape.sh: node " names[i] " of " list " is not in partition " partition > "/dev/stderr"; exit 2
    }
    if (!found) { print "node_shape.sh: no node of partition " partition (listed ? " in " list : "") " in scontrol show node" > "/dev/stderr"; exit 2 }
    if (want == "nodes") {
      if (!up) { print "node_shape.sh: no node of partition " partition " is up" > "/dev/stderr"; exit 2 }
      printf "%d", up
    } else if (want == "cpus") {
      if (least < 1) { print "node_shape.sh: partition " partition " leaves no CPU to a job" > "/dev/stderr"; exit 2 }
      printf "%d", least
    } else {
      sep = ""
      for (a in arches) { printf "%s%s", sep, a; sep = "," }
    }
  }'
