#!/usr/bin/env bash
# sbatch of a user's job script (train_job.sbatch): braid-doctor, then examples/ddp_digits.py
# on 2 nodes x 2 tasks, MASTER_ADDR from `scontrol show hostnames`. Without torch the job
# runs the doctor alone and the test skips, saying so.
. "$(dirname "$0")/lib.sh"
require_cluster
cd "$work"
python=$(torch_python)
export PATH="$(dirname "$BRAID_DOCTOR"):$PATH"
export TRAIN_PYTHON=$python TRAIN_SCRIPT="$repo/examples/ddp_digits.py" TRAIN_METRICS="$work/metrics.json"
export TRAIN_BACKEND=gloo
[ -n "$python" ] && TRAIN_BACKEND=$(ddp_backend "$python") && export PYTHONPATH="$BRAID_TORCH_PYTHONPATH"
timeout 280 sbatch --wait --output="$work/job.out" "$repo/tests/cluster/train_job.sbatch" >submit 2>&1 ||
  fail "the job failed ($?): $(cat submit; tail -60 job.out)"
expect_in job.out "MASTER_ADDR=node1 MASTER_PORT=" "the job script"
expect_in job.out "Verdict: OK" "the job's braid-doctor step"
[ -n "$python" ] || skip "the job ran braid-doctor; its training step needs torch and scikit-learn in the venv (scripts/python-venv.sh)"
check_digits job.out metrics.json 4 "$python"
pass "ddp_digits on $TRAIN_BACKEND: $(grep 'test accuracy' job.out | tail -1)"
