#!/usr/bin/env bash
# A virtual cluster on one machine: H hosts (network namespaces with their own hostname,
# node1..nodeH, and /etc/hosts), joined by a bridge (198.51.100.0/24, the controller's
# address .254 in the root namespace), with Slurm (slurmctld + one slurmd per host, munge)
# and an rsh agent for Open MPI. Needs root. docs/testing.md shows it in use.
#
#   cluster.sh up [--hosts N] [--rate RATE] [--delay DELAY] [--blocked-first HOST]...
#                 [--rails R] [--no-slurm] [--owner TEXT] [--force]
#   cluster.sh down                 stop every process, remove namespaces, bridge and state
#   cluster.sh status               the hosts and nodes, or why there is no cluster
#   cluster.sh exec HOST CMD...     run CMD on a host (its network, hostname, /etc/hosts)
#   cluster.sh env                  the variables a shell needs for srun/sbatch (eval it)
#   cluster.sh pids                 every process of the cluster, one a line
#   cluster.sh check-clean          exit 1 (saying what) if anything of a cluster is left
#
# --rate shapes each host's link both ways with tc tbf (e.g. 2gbit); --delay adds a netem
# delay (e.g. 1ms) where the kernel has netem. --blocked-first nodeK gives that host a
# first interface (ext0, 203.0.113.K) that reaches nothing (the cluster link is eth0 on
# every host). --rails R (1 to 3, default 1) gives every host R links, each on a bridge and
# subnet of its own and shaped alike: eth0 (the cluster link) and eth1, eth2 in
# 198.18.100.0/24, 198.18.101.0/24 (a multi-rail cluster: NCCL_SOCKET_IFNAME=eth0,eth1).
# `up` first removes whatever is left of an earlier cluster (a killed run's); it refuses
# one that another owner (--owner, default "manual") started and still runs, unless
# --force (exit status 75). A failed or interrupted `up` tears down what it made.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$here/common.sh"
# shellcheck source=network.sh
. "$here/network.sh"
# shellcheck source=slurm.sh
. "$here/slurm.sh"

require_root() {
  [ "$(id -u)" -eq 0 ] || cluster_die "needs root (network namespaces, a bridge, slurmd)"
}

# Every process of the cluster: what lives in its namespaces and the daemons of the root
# namespace (slurmctld, munged), from their pid files.
all_pids() {
  local ns file
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^${cluster_prefix}-node[0-9]*$"); do
    netns_pids "$ns"
  done
  for file in "$cluster_dir/slurm/run/slurmctld.pid" "$cluster_dir/munge/munged.pid" "$cluster_dir"/hosts/*/holder.pid; do
    [ -r "$file" ] && cat "$file"
  done | while read -r pid; do kill -0 "$pid" 2>/dev/null && echo "$pid"; done
}

teardown() {
  # Daemons first, gently (slurmd ends its steps), then everything left in the namespaces.
  # shellcheck disable=SC2046
  stop_by_pidfiles "$cluster_dir"/slurm/run/slurmd-*.pid "$cluster_dir/slurm/run/slurmctld.pid"
  # shellcheck disable=SC2046
  stop_pids $(all_pids | sort -u)
  net_down
  # The state directory goes last: munged may still be writing its log a moment after
  # its pid ended.
  rm -rf "$cluster_dir"
}

# What a started cluster leaves behind, one line each; nothing when clean.
leftovers() {
  local ns pid
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^${cluster_prefix}-" || true); do
    echo "network namespace $ns"
  done
  local bridge
  for bridge in $(cluster_bridges); do echo "bridge $bridge"; done
  [ -e "$cluster_dir" ] && echo "state directory $cluster_dir"
  # Processes started from the cluster's files or as its hosts' holders. The patterns
  # begin with a bracket so that grep's own command line does not match them.
  local dir_pattern file
  dir_pattern="[${cluster_dir:0:1}]$(printf '%s' "${cluster_dir:1}/" | sed 's/[].[*^$\\]/\\&/g')"
  for file in $(grep -lsaE -e "$dir_pattern" -e '[b]raid-cluster-host-' /proc/[0-9]*/cmdline 2>/dev/null); do
    pid=${file#/proc/}
    pid=${pid%/cmdline}
    { echo "process $pid: $(tr '\0' ' ' <"$file")"; } 2>/dev/null || true
  done
  return 0
}

cmd_up() {
  local hosts=2 rate="" delay="" blocked="" rails=1 slurm=1 owner=manual force=0
  while [ $# -gt 0 ]; do
    case "$1" in
      --hosts) hosts=$2; shift 2 ;;
      --rate) rate=$2; shift 2 ;;
      --delay) delay=$2; shift 2 ;;
      --blocked-first) blocked="$blocked $2"; shift 2 ;;
      --rails) rails=$2; shift 2 ;;
      --no-slurm) slurm=0; shift ;;
      --owner) owner=$2; shift 2 ;;
      --force) force=1; shift ;;
      *) cluster_die "unknown option $1 (see the top of $0)" ;;
    esac
  done
  [[ "$hosts" =~ ^[1-9][0-9]*$ ]] && [ "$hosts" -le 16 ] || cluster_die "--hosts takes 1 to 16, not $hosts"
  [[ "$rails" =~ ^[1-3]$ ]] || cluster_die "--rails takes 1 to 3, not $rails"
  require_root
  if [ $slurm = 1 ] && [ -n "$(slurm_missing)" ]; then
    cluster_die "missing $(slurm_missing): install slurmd slurmctld slurm-client munge (scripts/install-deps.sh)"
  fi
  if [ -r "$cluster_dir/owner" ] && [ "$(cat "$cluster_dir/owner")" != "$owner" ] && [ $force = 0 ] &&
    [ -n "$(all_pids)" ]; then
    echo "cluster: error: a cluster started by '$(cat "$cluster_dir/owner")' is running on this machine; stop it with '$0 down' (or up --force)" >&2
    exit 75  # EX_TEMPFAIL: in use, try later
  fi
  if [ -n "$(leftovers)" ]; then
    cluster_log "removing what is left of an earlier cluster: $(leftovers | tr '\n' ';')"
    teardown
  fi
  mkdir -p "$cluster_dir/hosts"
  echo "$owner" >"$cluster_dir/owner"
  # From here a failure (or an interrupt) tears down what was made.
  trap 'status=$?; trap - EXIT INT TERM; if [ $status != 0 ]; then cluster_log "start failed: tearing down"; teardown; fi; exit $status' EXIT
  trap 'exit 130' INT TERM
  local start=$SECONDS
  net_up "$hosts" "$rate" "$delay" "$blocked" "$rails"
  [ "${BRAID_CLUSTER_FAIL_AFTER_NETWORK:-0}" = 1 ] && cluster_die "failing on purpose after the network (BRAID_CLUSTER_FAIL_AFTER_NETWORK)"
  if [ $slurm = 1 ]; then
    start_munge
    write_slurm_conf "$hosts"
    start_slurm "$hosts"
  fi
  trap - EXIT INT TERM
  cluster_log "up: $hosts hosts (node1-node$hosts, $cluster_subnet.1-$hosts)${rate:+, links at $rate}${delay:+, delay $delay}${blocked:+, blocked first interface on$blocked}$([ "$rails" -gt 1 ] && echo ", $rails rails")$([ $slurm = 1 ] && echo ", Slurm") in $((SECONDS - start)) s"
}

cmd_down() {
  require_root
  teardown
  local left
  left=$(leftovers)
  [ -z "$left" ] || cluster_die "left behind after down: $(echo "$left" | tr '\n' ';')"
  cluster_log "down"
}

cmd_status() {
  if [ -z "$(cluster_hosts)" ]; then
    echo "no cluster at $cluster_dir"
    return 1
  fi
  echo "owner: $(cat "$cluster_dir/owner" 2>/dev/null)"
  local host
  for host in $(cluster_hosts); do
    if pid=$(holder_pid "$host"); then
      echo "$host: $(nsenter --target "$pid" --net ip -o -4 addr show | awk '$2 != "lo" {print $2, $4}' | tr '\n' ' ')"
    else
      echo "$host: down (no holder process)"
    fi
  done
  [ -r "$cluster_dir/slurm/slurm.conf" ] && SLURM_CONF="$cluster_dir/slurm/slurm.conf" sinfo -N
  return 0
}

# Starting and stopping take turns (two at once would tear down each other's hosts): the
# lock is on descriptor 8, which every daemon started here is started without (8>&-),
# or it would hold the lock for as long as it runs.
if [ "${1:-}" = up ] || [ "${1:-}" = down ]; then
  require_root
  mkdir -p "$(dirname "$cluster_lock")"
  exec 8>"$cluster_lock"
  flock 8
fi

case "${1:-}" in
  up) shift; cmd_up "$@" ;;
  down) cmd_down ;;
  status) cmd_status ;;
  exec)
    [ $# -ge 3 ] || cluster_die "usage: $0 exec HOST CMD..."
    host=$2
    shift 2
    on_host "$host" "$@"
    ;;
  env)
    [ -n "$(cluster_hosts)" ] || cluster_die "no cluster at $cluster_dir"
    echo "export $(slurm_env)"
    echo "export BRAID_CLUSTER_DIR=$cluster_dir"
    ;;
  pids) all_pids | sort -un ;;
  check-clean)
    left=$(leftovers)
    [ -z "$left" ] || { echo "$left"; exit 1; }
    ;;
  *) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
