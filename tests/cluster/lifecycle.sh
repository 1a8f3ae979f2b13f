#!/usr/bin/env bash
# Starting and stopping the harness when things go wrong (runs after cluster.down): a start
# that fails half way, and one interrupted, tear down what they made; a cluster left by a
# killed run (never stopped) is removed by the next start; another owner's running
# cluster is refused (exit 75) and left alone.
. "$(dirname "$0")/lib.sh"
if [ -n "${BRAID_CLUSTER_SKIP_FILE:-}" ] && [ -r "$BRAID_CLUSTER_SKIP_FILE" ]; then
  skip "$(cat "$BRAID_CLUSTER_SKIP_FILE")"
fi
owner="ctest-lifecycle:${BRAID_BUILD_DIR:-?}"
clean_or_fail() {
  "$cluster" check-clean >"$work/left" 2>&1 || fail "$1: left behind: $(cat "$work/left")"
}
trap '"$cluster" down >/dev/null 2>&1; rm -rf "$work"' EXIT
clean_or_fail "before"

# 1. A start that fails after the network (two rails: two bridges) is made.
BRAID_CLUSTER_FAIL_AFTER_NETWORK=1 "$cluster" up --hosts 2 --rails 2 --owner "$owner" >"$work/failed" 2>&1 &&
  fail "a start told to fail succeeded"
expect_in "$work/failed" "start failed: tearing down" "the failed start"
clean_or_fail "after a failed start"

# 2. A start interrupted (SIGTERM, as ctest's timeout or a closed terminal sends) once its
# first host exists.
"$cluster" up --hosts 2 --owner "$owner" >"$work/interrupted" 2>&1 &
up_pid=$!
for _ in $(seq 1 200); do
  ip netns list 2>/dev/null | grep -q '^braidc-node1' && break
  sleep 0.02
done
kill -TERM $up_pid
wait $up_pid && fail "an interrupted start succeeded"
clean_or_fail "after an interrupted start: $(cat "$work/interrupted")"

# 3. A cluster whose run was killed (never stopped, Slurm running), then a new start by
# the same owner: the leftovers go, the new cluster works.
"$cluster" up --hosts 2 --owner "$owner" >"$work/first" 2>&1 || fail "up: $(cat "$work/first")"
stale_pids=$("$cluster" pids)
"$cluster" up --hosts 2 --owner "$owner" >"$work/second" 2>&1 || fail "up over a stale cluster: $(cat "$work/second")"
expect_in "$work/second" "removing what is left of an earlier cluster" "the second start"
for pid in $stale_pids; do kill -0 "$pid" 2>/dev/null && fail "stale process $pid survived the new start"; done
eval "$("$cluster" env)"
timeout 60 srun -N 2 hostname >"$work/srun" 2>&1 || fail "srun on the new cluster: $(cat "$work/srun")"
[ "$(sort "$work/srun" | tr '\n' ' ')" = "node1 node2 " ] || fail "srun on the new cluster: $(cat "$work/srun")"

# 4. Another owner's start is refused while this one runs.
"$cluster" up --hosts 2 --owner someone-else >"$work/other" 2>&1
status=$?
[ $status = 75 ] || fail "another owner's start exited $status, not 75: $(cat "$work/other")"
expect_in "$work/other" "is running on this machine" "the refusal"
"$cluster" status >/dev/null || fail "the refused start harmed the running cluster"

"$cluster" down >"$work/down" 2>&1 || fail "down: $(cat "$work/down")"
clean_or_fail "after down"
pass
