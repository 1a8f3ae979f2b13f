#!/usr/bin/env bash
# srun -N 2 --ntasks-per-node 2 braid-doctor on the cluster whose node2 has a blocked first
# interface (ext0): the verdict is a warning that names node2's ext0 and the fix, and the
# doctor exits 1; run again with that fix, the verdict is OK and it exits 0.
. "$(dirname "$0")/lib.sh"
require_cluster
cd "$work"
doctor=("$BRAID_DOCTOR" --timeout 60 --attempt-timeout 2)
timeout 150 srun -N 2 --ntasks-per-node 2 --time 3 "${doctor[@]}" >blocked 2>&1
status=$?
[ $status = 1 ] || fail "braid-doctor with a blocked interface exited $status, not 1 (warnings): $(tail -40 blocked)"
expect_in blocked "communicator: 4 rank(s) on 2 host(s)" "the doctor's report"
expect_in blocked "ext0 203.0.113.2:" "the doctor's reachability section (node2's blocked interface)"
expect_in blocked "WARN [reachability]" "the doctor's findings"
expect_in blocked "NCCL_SOCKET_IFNAME=^ext0" "the fix the doctor names"
expect_in blocked "Verdict: WARN" "the verdict"
# The fix, as a job script would carry it: srun passes the environment on to the tasks.
NCCL_SOCKET_IFNAME=^ext0 timeout 150 srun -N 2 --ntasks-per-node 2 --time 3 "${doctor[@]}" >fixed 2>&1 ||
  fail "braid-doctor with NCCL_SOCKET_IFNAME=^ext0 exited $?: $(tail -40 fixed)"
expect_in fixed "Verdict: OK" "the verdict after the fix"
expect_in fixed "ext0       203.0.113.2" "the blocked interface, shown"
grep "ext0       203.0.113.2" fixed | grep -q excluded || fail "ext0 not shown as excluded: $(grep ext0 fixed)"
grep -q "FAILED\|WARN \[reachability\]" fixed && fail "a connection still fails after the fix: $(grep -A3 FAILED fixed)"
pass "names node2's ext0 and NCCL_SOCKET_IFNAME=^ext0; OK with it"
