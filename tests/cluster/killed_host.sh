#!/usr/bin/env bash
# A host that dies in the middle of hierarchical all-reduces is an error on the other host's
# ranks within the bounds docs/errors.md gives, and nothing hangs:
# 1. node2's ranks killed (SIGKILL: the OOM killer, or the job's processes on a failed node):
#    node1's ranks fail within 15 s, naming a node2 rank that is gone;
# 2. node2 cut off the network, its processes alive (a power loss or a pulled cable, as the
#    other hosts see it): node1's ranks fail within 75 s, naming a node2 rank whose
#    heartbeat was lost (TCP keepalive gives up after 30 s). The links come back up after.
. "$(dirname "$0")/lib.sh"
require_cluster
cd "$work" || fail "cannot enter $work"
# shellcheck source=../../scripts/cluster/common.sh
. "$repo/scripts/cluster/common.sh"  # netns_of, cluster_prefix: the harness's names
node2_ns=$(netns_of node2)
node2_links=$(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' |
  grep -E "^${cluster_prefix}-(r[0-9]+)?h2$")
[ -n "$node2_links" ] || fail "node2's links (${cluster_prefix}-h2...) not found in the root namespace"
# node2's ranks: all_reduce_perf processes in its network namespace (node1's are not).
node2_ranks() {
  local pid
  for pid in $(ip netns pids "$node2_ns"); do
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = all_reduce_perf ] && echo "$pid"
  done
}
restore_links() { for link in $node2_links; do ip link set "$link" up; done; }
trap 'restore_links; rm -rf "$work"' EXIT

# Starts all_reduce_perf with the hierarchical all-reduce on both hosts in the background
# (srun --label: every line begins with its task's rank) and returns once rank 0 has
# printed its table's header and a moment has passed: every rank is then in the timed loop.
start_run() {
  local out=$1
  NCCL_ALGO=hier NCCL_DEBUG=WARN NCCL_SOCKET_IFNAME=eth0,eth1 srun --label -N 2 --ntasks-per-node 2 --time 4 \
    "$BRAID_ALL_REDUCE_PERF" -b 4M -e 4M -n 1000000 -w 1 -c 0 >"$out" 2>&1 &
  srun_pid=$!
  for _ in $(seq 1 600); do
    grep -q "(B)" "$out" && { sleep 2; return 0; }
    kill -0 "$srun_pid" 2>/dev/null || fail "srun ended before the collectives ran: $(tail -20 "$out")"
    sleep 0.1
  done
  fail "the run did not start within 60 s: $(tail -20 "$out")"
}

# Waits up to LIMIT seconds for both of node1's ranks (tasks 0 and 1) to print an error
# matching PATTERN; prints the seconds it took.
node1_fails_within() {
  local out=$1 limit=$2 pattern=$3 start=$SECONDS
  while [ $((SECONDS - start)) -le "$limit" ]; do
    if grep -Eq "^ *0: .*$pattern" "$out" && grep -Eq "^ *1: .*$pattern" "$out"; then
      echo $((SECONDS - start))
      return 0
    fi
    sleep 0.2
  done
  return 1
}

# Waits for srun (all four tasks) to end, cancelling the job after LIMIT seconds.
srun_ends_within() {
  local limit=$1 start=$SECONDS
  while kill -0 "$srun_pid" 2>/dev/null; do
    if [ $((SECONDS - start)) -gt "$limit" ]; then
      scancel --signal=KILL "$(squeue -h -o %i | head -1)" 2>/dev/null
      wait "$srun_pid" 2>/dev/null
      return 1
    fi
    sleep 0.2
  done
  wait "$srun_pid" 2>/dev/null
  return 0
}

# 1. Killed.
start_run killed
pids=$(node2_ranks)
[ "$(echo "$pids" | wc -w)" = 2 ] || fail "expected node2's 2 ranks in $node2_ns, found: $pids"
# shellcheck disable=SC2086  # one pid per word
kill -KILL $pids
gone='rank [23] \(node2 pid [0-9]+\) is gone'
killed_s=$(node1_fails_within killed 15 "$gone") ||
  fail "node1's ranks did not report a gone node2 rank within 15 s: $(grep -E '^ *[01]: ' killed | tail -20)"
srun_ends_within 30 || fail "the job did not end within 30 s of node1's errors: $(tail -20 killed)"

# 2. Cut off.
start_run cut
for link in $node2_links; do ip link set "$link" down; done
lost='rank [23] \(node2 pid [0-9]+\) is unreachable: heartbeat lost'
cut_s=$(node1_fails_within cut 75 "$lost") ||
  fail "node1's ranks did not report node2 unreachable within 75 s: $(grep -E '^ *[01]: ' cut | tail -20)"
restore_links
srun_ends_within 90 || fail "the job did not end within 90 s of the links coming back: $(tail -20 cut)"
left=$(node2_ranks)
[ -z "$left" ] || fail "node2's ranks still run after the job ended: $left"
pass "killed: node1's ranks failed in ${killed_s} s; cut off: in ${cut_s} s (heartbeat lost)"
