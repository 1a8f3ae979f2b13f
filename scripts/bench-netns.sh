#!/usr/bin/env bash
# Two "hosts" in network namespaces joined by a veth pair shaped to RATE with tc tbf, one
# rank in each, running all_reduce_perf across the link. Shows whether the link, not Braid,
# is the bottleneck: busbw of a 2-rank all-reduce equals the rate each direction of the
# link carries.
#   scripts/bench-netns.sh [RATE (tc syntax, default 2gbit)] [all_reduce_perf arguments...]
# Needs root (ip netns, tc). Uses 198.51.100.0/24 inside the namespaces only.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rate=${1:-2gbit}
shift || true
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(-b 1M -e 256M -f 4 -n 5 -w 2)
perf=${PERF:-$root/build/bench/all_reduce_perf}
tag=$$
a=bnsa$tag b=bnsb$tag va=bva$tag vb=bvb$tag
cleanup() { ip netns del "$a" 2>/dev/null || true; ip netns del "$b" 2>/dev/null || true; }
trap cleanup EXIT
ip netns add "$a"
ip netns add "$b"
ip link add "$va" type veth peer name "$vb"
ip link set "$va" netns "$a"
ip link set "$vb" netns "$b"
ip -n "$a" addr add 198.51.100.1/24 dev "$va"
ip -n "$b" addr add 198.51.100.2/24 dev "$vb"
for ns in "$a" "$b"; do ip -n "$ns" link set lo up; done
ip -n "$a" link set "$va" up
ip -n "$b" link set "$vb" up
# Shape both directions: a token bucket at RATE with a burst of a few milliseconds.
for pair in "$a:$va" "$b:$vb"; do
  ip netns exec "${pair%%:*}" tc qdisc add dev "${pair##*:}" root tbf rate "$rate" burst 1mb latency 50ms
done
rendezvous=file:///tmp/braid-bench-netns-$tag
common=(BRAID_RENDEZVOUS=$rendezvous BRAID_JOB_TOKEN=bench-$tag WORLD_SIZE=2 NCCL_SOCKET_IFNAME=bv)
echo "# link: veth shaped to $rate each way; all_reduce_perf ${args[*]}"
ip netns exec "$b" env "${common[@]}" RANK=1 NCCL_HOSTID=host-b "$perf" "${args[@]}" > /tmp/braid-bench-netns-$tag.rank1 2>&1 &
ip netns exec "$a" env "${common[@]}" RANK=0 NCCL_HOSTID=host-a "$perf" "${args[@]}"
wait
