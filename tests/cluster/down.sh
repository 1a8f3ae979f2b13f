#!/usr/bin/env bash
# The cluster tests' cleanup (CTest fixture "cluster"): `cluster.sh down`, then nothing of
# the cluster may be left: no network namespace, no bridge, no state directory (spool,
# logs, keys), and none of the processes it ran (daemons, holders, job steps).
. "$(dirname "$0")/lib.sh"
if [ -n "${BRAID_CLUSTER_SKIP_FILE:-}" ] && [ -r "$BRAID_CLUSTER_SKIP_FILE" ]; then
  skip "$(cat "$BRAID_CLUSTER_SKIP_FILE")"
fi
"$cluster" pids >"$work/pids" 2>/dev/null
"$cluster" down >"$work/down" 2>&1 || fail "down failed: $(cat "$work/down")"
"$cluster" check-clean >"$work/left" 2>&1 || fail "left behind: $(cat "$work/left")"
for pid in $(cat "$work/pids"); do
  kill -0 "$pid" 2>/dev/null && fail "process $pid of the cluster still runs: $(tr '\0' ' ' </proc/$pid/cmdline)"
done
pass "$(wc -l <"$work/pids") processes stopped, nothing left"
