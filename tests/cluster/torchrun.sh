#!/usr/bin/env bash
# torchrun multi-node as on a Slurm cluster: one srun task per node starts torchrun
# --nnodes 2 --nproc-per-node 2 --rdzv-backend c10d with the endpoint on node1 (found by
# its hostname), and torchrun starts examples/ddp_digits.py. Skipped without torch.
. "$(dirname "$0")/lib.sh"
require_cluster
cd "$work"
python=$(torch_python)
[ -n "$python" ] || skip "torchrun needs torch and scikit-learn in the venv (${BRAID_VENV:-~/.cache/braid/venv}; docs/testing.md)"
backend=$(ddp_backend "$python")
port=$((29500 + $$ % 400))
PYTHONPATH="$BRAID_TORCH_PYTHONPATH" OMP_NUM_THREADS=1 NCCL_SOCKET_IFNAME=^ext0 timeout 280 \
  srun -N 2 --ntasks-per-node 1 --time 4 "$python" -m torch.distributed.run --nnodes 2 --nproc-per-node 2 \
  --rdzv-backend c10d --rdzv-endpoint "node1:$port" --rdzv-id "braid-$$" \
  "$repo/examples/ddp_digits.py" --backend "$backend" --epochs 2 --quiet --metrics "$work/metrics.json" >out 2>&1 ||
  fail "torchrun exited $?: $(tail -40 out)"
check_digits out metrics.json 4 "$python"
pass "ddp_digits on $backend: $(grep 'test accuracy' out | tail -1)"
