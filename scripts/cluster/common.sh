# Shared by the cluster harness's scripts: where the cluster lives and how to reach a host.
# Sourced, not run. One cluster per machine at a time (its bridge, subnet, controller port
# and host names are fixed); BRAID_CLUSTER_DIR moves its state directory.

cluster_dir=${BRAID_CLUSTER_DIR:-/run/braid-cluster}
# Everything the harness creates in the kernel carries this prefix, so that a stale
# cluster (its state directory gone with a reboot or a killed run) is still found.
cluster_prefix=braidc
cluster_bridge=${cluster_prefix}-br
cluster_subnet=198.51.100          # TEST-NET-2: never a real network
cluster_controller_ip=$cluster_subnet.254
blocked_subnet=203.0.113           # TEST-NET-3: the unroutable second interface
# Further rails (--rails): rail k (1, 2, ...) is interface eth<k> on every host, joined by
# bridge braidc-br<k> in 198.18.<99+k>.0/24, of the benchmarking range (RFC 2544).
rail_subnet() { echo "198.18.$((99 + $1))"; }
rail_bridge() { if [ "$1" = 0 ]; then echo "$cluster_bridge"; else echo "${cluster_bridge}$1"; fi; }
cluster_lock=/run/lock/braid-cluster.lock

netns_of() { echo "${cluster_prefix}-$1"; }   # node1 -> braidc-node1

cluster_log() { echo "cluster: $*" >&2; }
cluster_die() {
  echo "cluster: error: $*" >&2
  exit 1
}

# The host's holder process: the one process that keeps its UTS and mount namespaces
# (the network namespace is kept by its name under /var/run/netns).
holder_pid() {
  local file="$cluster_dir/hosts/$1/holder.pid" pid
  [ -r "$file" ] || return 1
  pid=$(cat "$file")
  kill -0 "$pid" 2>/dev/null || return 1
  echo "$pid"
}

# Runs a command on a host: its network, hostname and mount namespaces (its /etc/hosts
# and /sys), in the caller's working directory.
on_host() {
  local host=$1 pid
  shift
  pid=$(holder_pid "$host") || cluster_die "no host $host in the cluster at $cluster_dir (is it up?)"
  exec nsenter --target "$pid" --net --uts --mount --wd="$PWD" -- "$@"
}

# The hosts of the running cluster, one a line (node1, node2, ...).
cluster_hosts() {
  [ -r "$cluster_dir/hosts.list" ] && cat "$cluster_dir/hosts.list"
}
