#!/usr/bin/env bash
# What TLS costs: all_reduce_perf between 2 processes over the socket transport, without
# and with encryption (BRAID_TLS_PSK_FILE, so the program is unchanged), runs alternating,
# REPEAT times each, the best busbw per size kept. Twice: over loopback (shared memory off,
# so the sockets carry everything) and, when run as root, between two network namespaces
# joined by an unshaped veth pair (two "hosts"; 198.51.100.0/24 inside them only).
#   scripts/bench-tls.sh [REPEAT=3] [all_reduce_perf arguments...]
# Prints one table: size, then plain / TLS busbw (GB/s, out of place) and their ratio for
# each path.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
repeat=${1:-3}
shift || true
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(-b 64K -e 64M -f 4 -n 10 -w 3 -c 0)
build=${BUILD:-$root/build}
perf=$build/bench/all_reduce_perf
braidrun=$build/tools/braidrun/braidrun
for f in "$perf" "$braidrun"; do
  [ -x "$f" ] || { echo "bench-tls: $f is missing (build first)" >&2; exit 1; }
done
work=$(mktemp -d /tmp/braid-bench-tls-XXXXXX)
tag=$$
a=btlsa$tag b=btlsb$tag va=btva$tag vb=btvb$tag
cleanup() {
  ip netns del "$a" 2>/dev/null || true
  ip netns del "$b" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/key"
chmod 600 "$work/key"

# Keeps, per size, the best out-of-place busbw of this run in $work/<name>.
record() {
  local name=$1 out=$2
  awk '/^ *\[?[0-9]/ { sub(/^\[0\] */, ""); if ($1 ~ /^[0-9]+$/ && NF >= 13) print $1, $8 }' "$out" |
    while read -r size busbw; do
      best=$(awk -v s="$size" '$1 == s { print $2 }' "$work/$name" 2>/dev/null || true)
      if [ -z "$best" ] || awk -v a="$busbw" -v b="$best" 'BEGIN { exit !(a > b) }'; then
        { grep -v "^$size " "$work/$name" 2>/dev/null || true; echo "$size $busbw"; } > "$work/$name.new"
        mv "$work/$name.new" "$work/$name"
      fi
    done
}

loopback() {  # $1: plain or tls
  local env=(NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo)
  [ "$1" = tls ] && env+=(BRAID_TLS_PSK_FILE="$work/key")
  "$braidrun" -n 2 --no-prefix "${env[@]}" "$perf" "${args[@]}" > "$work/out" 2>&1
  record "loopback-$1" "$work/out"
}

netns_ready=0
if [ "$(id -u)" -eq 0 ] && command -v ip >/dev/null; then
  ip netns add "$a" && ip netns add "$b" &&
    ip link add "$va" type veth peer name "$vb" &&
    ip link set "$va" netns "$a" && ip link set "$vb" netns "$b" &&
    ip -n "$a" addr add 198.51.100.1/24 dev "$va" && ip -n "$b" addr add 198.51.100.2/24 dev "$vb" &&
    ip -n "$a" link set lo up && ip -n "$b" link set lo up &&
    ip -n "$a" link set "$va" up && ip -n "$b" link set "$vb" up && netns_ready=1
fi

netns() {  # $1: plain or tls
  local common=(BRAID_RENDEZVOUS=file://$work/rendezvous BRAID_JOB_TOKEN=bench-tls-$tag WORLD_SIZE=2 NCCL_SOCKET_IFNAME=btv)
  [ "$1" = tls ] && common+=(BRAID_TLS_PSK_FILE="$work/key")
  ip netns exec "$b" env "${common[@]}" RANK=1 NCCL_HOSTID=host-b "$perf" "${args[@]}" > "$work/rank1" 2>&1 &
  ip netns exec "$a" env "${common[@]}" RANK=0 NCCL_HOSTID=host-a "$perf" "${args[@]}" > "$work/out" 2>&1
  wait
  record "netns-$1" "$work/out"
}

for ((i = 1; i <= repeat; ++i)); do
  for mode in plain tls; do
    loopback "$mode"
    [ $netns_ready -eq 1 ] && netns "$mode"
  done
  echo "bench-tls: round $i of $repeat done" >&2
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0) printf "%.2f", b / a; else printf "-" }'; }
echo "# all_reduce_perf ${args[*]}, 2 processes, best of $repeat alternating runs, busbw GB/s (out of place)"
if [ $netns_ready -eq 1 ]; then
  echo "# size  loopback-plain loopback-tls ratio  netns-plain netns-tls ratio"
else
  echo "# size  loopback-plain loopback-tls ratio  (namespaces need root: not measured)"
fi
sort -n "$work/loopback-plain" | while read -r size plain; do
  tls=$(awk -v s="$size" '$1 == s { print $2 }' "$work/loopback-tls")
  line="$size  $plain $tls $(ratio "$plain" "$tls")"
  if [ $netns_ready -eq 1 ]; then
    np=$(awk -v s="$size" '$1 == s { print $2 }' "$work/netns-plain")
    nt=$(awk -v s="$size" '$1 == s { print $2 }' "$work/netns-tls")
    line="$line  $np $nt $(ratio "$np" "$nt")"
  fi
  echo "$line"
done
