#!/usr/bin/env bash
# Open MPI's mpirun across the hosts, started on node1 as a user would from the first node
# of an allocation (the rsh agent enters node2 as ssh would log in): braid-hello and
# all_reduce_perf -c 1 on 2 hosts x 2 ranks with MASTER_ADDR=node1, then the digits
# example the same way (skipped, saying so, without torch).
. "$(dirname "$0")/lib.sh"
require_cluster
cd "$work"
port=$((29000 + $$ % 500))
mpirun=(timeout 150 "$cluster" exec node1 mpirun --allow-run-as-root --mca plm_rsh_agent "$agent" -H node1:2,node2:2 -np 4
  --map-by ppr:2:node -x MASTER_ADDR=node1 -x MASTER_PORT=$port -x NCCL_SOCKET_IFNAME=^ext0)
"${mpirun[@]}" "$BRAID_HELLO" >hello 2>&1 || fail "mpirun braid-hello exited $?: $(tail -20 hello)"
for r in 0 1; do expect_in hello "hello from rank $r/4 (local rank $r/2) on node1" "braid-hello"; done
for r in 2 3; do expect_in hello "hello from rank $r/4 (local rank $((r - 2))/2) on node2" "braid-hello"; done
expect_in hello "launcher openmpi" "braid-hello"
"${mpirun[@]}" "$BRAID_ALL_REDUCE_PERF" -b 8 -e 1M -f 8 -n 2 -w 1 -c 1 >perf 2>&1 ||
  fail "mpirun all_reduce_perf exited $?: $(tail -20 perf)"
expect_in perf "# Out of bounds values : 0 OK" "all_reduce_perf"
python=$(torch_python)
[ -n "$python" ] || skip "braid-hello and all_reduce_perf passed; ddp_digits needs torch and scikit-learn in the venv"
backend=$(ddp_backend "$python")
"${mpirun[@]}" -x OMP_NUM_THREADS=1 -x PYTHONPATH="$BRAID_TORCH_PYTHONPATH" "$python" "$repo/examples/ddp_digits.py" \
  --backend "$backend" --epochs 2 --quiet --metrics "$work/metrics.json" >ddp 2>&1 ||
  fail "mpirun ddp_digits exited $?: $(tail -30 ddp)"
check_digits ddp metrics.json 4 "$python"
pass "ddp_digits on $backend: $(grep 'test accuracy' ddp | tail -1)"
