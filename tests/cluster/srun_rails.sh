#!/usr/bin/env bash
# Two rails: every host has eth0 and eth1, each on a network of its own and shaped to
# 2 Gbit/s. With NCCL_SOCKET_IFNAME=eth0,eth1 the host's ranks take the named interfaces in
# turn (local rank 0 eth0, local rank 1 eth1, on both hosts), so the hierarchical
# all-reduce's cross-host rings, which join the local ranks of one index, each keep to one
# rail: both rails carry the traffic (their byte counters), and every result is right. A
# prefix matching both (NCCL_SOCKET_IFNAME=eth) leaves every rank on the proven eth0.
. "$(dirname "$0")/lib.sh"
require_cluster
cd "$work" || fail "cannot enter $work"
for host in node1 node2; do
  "$cluster" exec "$host" test -e /sys/class/net/eth1 || fail "$host has no eth1 (the cluster is up without --rails 2)"
done
sent() { "$cluster" exec "$1" cat "/sys/class/net/$2/statistics/tx_bytes"; }
declare -A before
for host in node1 node2; do for dev in eth0 eth1; do before[$host/$dev]=$(sent "$host" "$dev"); done; done
NCCL_SOCKET_IFNAME=eth0,eth1 NCCL_ALGO=hier NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET \
  timeout 120 srun -N 2 --ntasks-per-node 2 --time 2 "$BRAID_ALL_REDUCE_PERF" -b 16M -e 16M -n 2 -w 1 -c 1 >out 2>&1 ||
  fail "srun exited $?: $(tail -20 out)"
expect_in out "# Out of bounds values : 0 OK" "all_reduce_perf"
for rank_dev in 0:eth0 1:eth1 2:eth0 3:eth1; do
  expect_in out "NIC for rank ${rank_dev%:*}: ${rank_dev#*:} (chosen by NCCL_SOCKET_IFNAME=eth0,eth1" "rank ${rank_dev%:*}'s NIC"
done
expect_in out "hier-cross : 1[host] -> 3[host] via NET/Socket" "local rank 1's cross-host ring"
# The two hosts are namespaces of one machine: every rank counts the other host's ranks
# among those that share its CPUs (the waits and channel count follow from it).
expect_in out "CPU sharing: 4 ranks of this job run on this machine (2 on other hosts of it" "the CPU sharing line"
# Each operation sends each local rank's half of the 16 MiB (reduce-scatter and all-gather
# between the two hosts: 8 MiB) over its rail; 6 operations ran (warm-up and 2 timed, out
# of place and in place). Both rails must carry at least a third of that; the cluster link
# (eth0) also carries the bootstrap's few kilobytes.
least=$((6 * 8 * 1048576 / 3))
summary=""
for host in node1 node2; do
  for dev in eth0 eth1; do
    moved=$(($(sent "$host" "$dev") - before[$host/$dev]))
    summary+="$host/$dev $((moved / 1048576)) MiB, "
    [ "$moved" -ge "$least" ] || fail "$host's $dev sent only $moved bytes (expected at least $least): $summary"
  done
done
busbw=$(awk '$1 == 16777216 {print $8}' out)
# A prefix that matches both rails only narrows the candidates: every rank keeps the one
# the bootstrap proved (eth0), and the second rail carries nothing of the collective.
rail1_before=$(sent node1 eth1)
NCCL_SOCKET_IFNAME=eth NCCL_ALGO=hier NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET \
  timeout 120 srun -N 2 --ntasks-per-node 2 --time 2 "$BRAID_ALL_REDUCE_PERF" -b 4M -e 4M -n 1 -w 1 -c 1 >prefix 2>&1 ||
  fail "srun with NCCL_SOCKET_IFNAME=eth exited $?: $(tail -20 prefix)"
expect_in prefix "# Out of bounds values : 0 OK" "all_reduce_perf with NCCL_SOCKET_IFNAME=eth"
expect_in prefix "NIC for rank 1: eth0 (chosen by NCCL_SOCKET_IFNAME=eth; every rank of the host uses it" "rank 1's NIC"
rail1_moved=$(($(sent node1 eth1) - rail1_before))
[ "$rail1_moved" -lt 1048576 ] || fail "node1's eth1 sent $rail1_moved bytes with NCCL_SOCKET_IFNAME=eth"
# Four ranks on the machine's two cores take turns on them: the tuning model (agreed
# ranksPerCore 2) gives small all-reduces to the tree, whose chain has one rank of a host
# act at a time, and larger ones to Hier.
NCCL_SOCKET_IFNAME=eth0,eth1 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING \
  timeout 120 srun -N 2 --ntasks-per-node 2 --time 2 "$BRAID_ALL_REDUCE_PERF" -b 8 -e 256K -f 8 -n 2 -w 1 -c 1 >tuning 2>&1 ||
  fail "srun of the small sizes exited $?: $(tail -20 tuning)"
expect_in tuning "# Out of bounds values : 0 OK" "all_reduce_perf of the small sizes"
expect_in tuning "AllReduce of 8 bytes: Tree/" "the tree for 8 bytes on ranks that take turns on the cores"
# (Each algorithm and protocol is logged at the first size that runs it.)
expect_in tuning "bytes: Hier/Simple on" "Hier for the larger sizes"
pass "each local rank on its own rail: ${summary%, }; busbw $busbw GB/s; a prefix keeps every rank on eth0; the tree for small sizes"
