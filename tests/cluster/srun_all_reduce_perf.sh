#!/usr/bin/env bash
# srun -N 2 --ntasks-per-node 2 all_reduce_perf -c 1: every result checked, across the
# shaped link between the hosts.
. "$(dirname "$0")/lib.sh"
require_cluster
cd "$work"
timeout 120 srun -N 2 --ntasks-per-node 2 --time 2 "$BRAID_ALL_REDUCE_PERF" -b 8 -e 4M -f 8 -n 5 -w 1 -c 1 >out 2>&1 ||
  fail "srun exited $?: $(tail -20 out)"
expect_in out "# Out of bounds values : 0 OK" "all_reduce_perf"
for r in 0 1 2 3; do grep -Eq "Rank +$r .*node[12]" out || fail "no line for rank $r: $(head -30 out)"; done
grep -Eq "Rank +0 .*node1" out && grep -Eq "Rank +3 .*node2" out || fail "ranks not on both hosts: $(head -30 out)"
pass "$(awk '$1 == 4194304 {print "4 MiB out-of-place busbw " $8 " GB/s"}' out)"
