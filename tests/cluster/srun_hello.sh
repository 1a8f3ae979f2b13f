#!/usr/bin/env bash
# srun -N 2 --ntasks-per-node 2 braid-hello: four ranks on two hosts, ranks and local ranks
# from Slurm, rank 0's host from SLURM_JOB_NODELIST, one communicator.
. "$(dirname "$0")/lib.sh"
require_cluster
cd "$work"
timeout 120 srun -N 2 --ntasks-per-node 2 --time 2 "$BRAID_HELLO" >"$work/out" 2>&1 || fail "srun exited $?: $(tail -20 "$work/out")"
for r in 0 1; do expect_in out "hello from rank $r/4 (local rank $r/2) on node1" "braid-hello"; done
for r in 2 3; do expect_in out "hello from rank $r/4 (local rank $((r - 2))/2) on node2" "braid-hello"; done
expect_in out "launcher slurm" "braid-hello"
pass
