#!/usr/bin/env bash
# The harness itself: every host has its own hostname and resolves every other by name,
# sees only its own interfaces, its two links (rails) are shaped and the second reaches the
# other host on a network of its own, node2's first address is the blocked one (as
# `hostname -I` would hand it to a job script), and Slurm has both nodes idle.
. "$(dirname "$0")/lib.sh"
require_cluster
hosts=$("$cluster" status | awk -F: '/^node[0-9]+:/ {print $1}')
[ "$(echo "$hosts" | wc -w)" = 2 ] || fail "expected 2 hosts, status says: $hosts"
for host in $hosts; do
  [ "$("$cluster" exec "$host" hostname)" = "$host" ] || fail "$host's hostname is $("$cluster" exec "$host" hostname)"
  for other in $hosts; do
    address=$("$cluster" exec "$host" getent hosts "$other" | awk '{print $1}')
    [ "$address" = "198.51.100.${other#node}" ] || fail "$host resolves $other to '$address'"
    # Reachable by that name: a TCP connection to the other's slurmd.
    "$cluster" exec "$host" timeout 5 bash -c "exec 3<>/dev/tcp/$other/6818" ||
      fail "$host cannot connect to $other's slurmd (port 6818) by name"
  done
  for dev in eth0 eth1; do
    "$cluster" exec "$host" tc qdisc show dev "$dev" >"$work/tc" 2>&1
    expect_in "$work/tc" "tbf" "$host's $dev shaping"
    expect_in "$work/tc" "rate 2Gbit" "$host's $dev shaping"
  done
done
# The second rail joins the hosts on a network of its own.
"$cluster" exec node1 ip -o -4 addr show dev eth1 | grep -q ' 198.18.100.1/24 ' ||
  fail "node1's eth1: $("$cluster" exec node1 ip -o -4 addr show dev eth1)"
"$cluster" exec node1 timeout 5 bash -c "exec 3<>/dev/tcp/198.18.100.2/6818" ||
  fail "node1 cannot reach node2's slurmd over the second rail (198.18.100.2)"
# Each host's /sys shows its own interfaces (a sysfs of its namespace).
[ "$("$cluster" exec node1 ls /sys/class/net | tr '\n' ' ')" = "eth0 eth1 lo " ] ||
  fail "node1's /sys/class/net: $("$cluster" exec node1 ls /sys/class/net | tr '\n' ' ')"
first=$("$cluster" exec node2 hostname -I | awk '{print $1}')
[ "$first" = 203.0.113.2 ] || fail "node2's first address is $first, not the blocked ext0's 203.0.113.2"
"$cluster" exec node1 hostname -I | grep -q '^198.51.100.1 ' || fail "node1's address: $("$cluster" exec node1 hostname -I)"
sinfo -h -N -o '%N %T' >"$work/sinfo"
[ "$(count_in "$work/sinfo" idle)" = 2 ] || fail "sinfo: $(cat "$work/sinfo")"
pass "2 hosts, names resolved and reachable, two shaped rails, node2 blocked first"
