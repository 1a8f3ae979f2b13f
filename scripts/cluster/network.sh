# The cluster's network: one network namespace per host, each joined to a bridge in the
# root namespace by a veth pair, shaped by tc, and optionally a first interface that
# reaches nothing. Each host also gets its own hostname and /etc/hosts (a UTS and a mount
# namespace kept by a holder process). Sourced by cluster.sh.

# Link shaping on one end of a veth: a token bucket for the rate and, where the kernel has
# netem, a fixed delay before it.
shape_link() {
  local netns_args=$1 dev=$2 rate=$3 delay=$4
  # shellcheck disable=SC2086  # netns_args is empty or "-n NAME"
  if [ -n "$delay" ]; then
    ip $netns_args link set "$dev" up
    tc $netns_args qdisc add dev "$dev" root handle 1: netem delay "$delay" ||
      cluster_die "tc netem (for --delay) is not available in this kernel (CONFIG_NET_SCH_NETEM)"
    [ -z "$rate" ] || tc $netns_args qdisc add dev "$dev" parent 1: handle 2: tbf rate "$rate" burst 1mb latency 50ms
  elif [ -n "$rate" ]; then
    tc $netns_args qdisc add dev "$dev" root tbf rate "$rate" burst 1mb latency 50ms
  fi
}

# /etc/hosts of every host: the machine's localhost lines, the hosts and the controller.
write_hosts_file() {
  local n=$1 i
  {
    echo "127.0.0.1 localhost"
    echo "::1 localhost ip6-localhost ip6-loopback"
    for i in $(seq 1 "$n"); do echo "$cluster_subnet.$i node$i"; done
    echo "$cluster_controller_ip $(hostname -s) braid-controller"
  } >"$cluster_dir/etc-hosts"
}

# Starts host `name`'s holder: a process in the host's network namespace and in UTS and
# mount namespaces of its own, where the hostname is set, /etc/hosts is the cluster's, and
# /sys is a sysfs of this network namespace (so that /sys/class/net shows the host's own
# interfaces) with the machine's cgroup hierarchy mounted back (slurmd needs it).
start_holder() {
  local name=$1 dir="$cluster_dir/hosts/$1"
  mkdir -p "$dir/cgroup"
  nsenter --net="/var/run/netns/$(netns_of "$name")" unshare --uts --mount --propagation private \
    bash -c '
      set -e
      hostname "$1"
      mount --bind "$2/etc-hosts" /etc/hosts
      mount --rbind /sys/fs/cgroup "$3/cgroup"
      mount -t sysfs sysfs /sys
      mount --rbind "$3/cgroup" /sys/fs/cgroup
      umount -l "$3/cgroup"
      echo $$ >"$3/holder.pid"
      exec -a "braid-cluster-host-$1" sleep infinity' _ "$name" "$cluster_dir" "$dir" </dev/null >"$dir/holder.log" 2>&1 8>&- &
  local i
  for i in $(seq 1 100); do
    holder_pid "$name" >/dev/null && return 0
    kill -0 $! 2>/dev/null || break
    sleep 0.05
  done
  cluster_die "host $name did not start: $(cat "$dir/holder.log")"
}

# Rail k (k >= 1) of host i: interface eth<k> in 198.18.<99+k>.i/24 on bridge braidc-br<k>,
# shaped as eth0. Its root end is braidc-r<k>h<i>.
add_rail() {
  local ns=$1 i=$2 k=$3 rate=$4 delay=$5 root_end=${cluster_prefix}-r$3h$2 inner=${cluster_prefix}-r$3t$2
  ip link add "$root_end" type veth peer name "$inner"
  ip link set "$inner" netns "$ns"
  ip -n "$ns" link set "$inner" name "eth$k"
  ip -n "$ns" addr add "$(rail_subnet "$k").$i/24" dev "eth$k"
  ip link set "$root_end" master "$(rail_bridge "$k")"
  shape_link "-n $ns" "eth$k" "$rate" "$delay"
  shape_link "" "$root_end" "$rate" "$delay"
  ip link set "$root_end" up
  ip -n "$ns" link set "eth$k" up
}

# net_up N RATE DELAY BLOCKED_HOSTS [RAILS]: the bridges, N hosts, their links and holders.
# RAILS (default 1) links per host, each on its own bridge and subnet: eth0 is the cluster
# link (names, Slurm, the bootstrap), eth1... the further rails of a multi-rail cluster.
net_up() {
  local n=$1 rate=$2 delay=$3 blocked=" $4 " rails=${5:-1} i k name ns root_end
  ip link add "$cluster_bridge" type bridge
  ip addr add "$cluster_controller_ip/24" dev "$cluster_bridge"
  ip link set "$cluster_bridge" up
  for k in $(seq 1 $((rails - 1))); do
    ip link add "$(rail_bridge "$k")" type bridge
    ip link set "$(rail_bridge "$k")" up
  done
  write_hosts_file "$n"
  for i in $(seq 1 "$n"); do
    name=node$i ns=$(netns_of "node$i") root_end=${cluster_prefix}-h$i
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    if [[ "$blocked" == *" $name "* ]]; then
      # The host's first interface (ext0: the lowest index, first in `hostname -I`) leads
      # nowhere: a veth pair inside the host, ARP off, its far end without an address.
      # What is sent through it vanishes, as behind a firewall that drops. The cluster
      # link stays eth0 on every host, so that one NCCL_SOCKET_IFNAME fits them all.
      ip -n "$ns" link add ext0 type veth peer name ext0p
      ip -n "$ns" link set ext0 arp off
      ip -n "$ns" addr add "$blocked_subnet.$i/24" dev ext0
      ip -n "$ns" link set ext0p up
      ip -n "$ns" link set ext0 up
    fi
    ip link add "$root_end" type veth peer name "${cluster_prefix}-t$i"
    ip link set "${cluster_prefix}-t$i" netns "$ns"
    ip -n "$ns" link set "${cluster_prefix}-t$i" name eth0
    ip -n "$ns" addr add "$cluster_subnet.$i/24" dev eth0
    ip link set "$root_end" master "$cluster_bridge"
    shape_link "-n $ns" eth0 "$rate" "$delay"
    shape_link "" "$root_end" "$rate" "$delay"
    ip link set "$root_end" up
    ip -n "$ns" link set eth0 up
    for k in $(seq 1 $((rails - 1))); do add_rail "$ns" "$i" "$k" "$rate" "$delay"; done
    echo "$name" >>"$cluster_dir/hosts.list"
    start_holder "$name"
  done
}

# Every process in a host's network namespace (its holder, slurmd, job steps, tasks).
netns_pids() {
  ip netns pids "$1" 2>/dev/null
}

# Removes every namespace and link the harness made, found by name (also a stale
# cluster's whose state directory is gone). Processes must be stopped first.
net_down() {
  local ns
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^${cluster_prefix}-node[0-9]*$"); do
    ip netns del "$ns" || cluster_log "could not delete network namespace $ns"
  done
  local bridge
  for bridge in $(cluster_bridges); do
    ip link del "$bridge" || cluster_log "could not delete bridge $bridge"
  done
  # A root end whose namespace went away takes its veth with it; one left behind by an
  # interrupted start (moved nowhere yet) is removed here.
  local link
  for link in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' |
    grep -E "^${cluster_prefix}-(r[0-9]+)?[ht][0-9]+$"); do
    ip link del "$link" 2>/dev/null || true
  done
}

# The cluster's bridges that exist now (the cluster link's and the further rails').
cluster_bridges() {
  ip -o link show type bridge 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' |
    grep -E "^${cluster_bridge}[0-9]*$" || true
}
