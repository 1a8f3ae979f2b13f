#!/usr/bin/env bash
# The GPU check, on a machine with an NVIDIA GPU and a driver (what docs/gpu.md reports was
# run with this). Unpacks payload.tar.xz (pack.sh) beside this script and runs:
#   1. the GPU suite (gpu_mode_test: every collective on every device, four ranks per
#      device with BRAID_SHARED_GPU=1, streams, init; the abort case needs two GPUs);
#   2. PyTorch's own NCCL path with the torch wheel's libnccl.so.2 replaced by Braid's (when
#      python3 has a CUDA torch): one rank, then two processes on GPU 0 under torchrun.
#      The wheel's library is put back at the end.
# Logs go to $OUT when set (the NCCL INFO log of the suite too), else to the unpack folder.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/braid-gpu.XXXX)
tar -xJf "$here/payload.tar.xz" -C "$work" || exit 1
cd "$work" || exit 1
logs=${OUT:-$work}
export LD_LIBRARY_PATH=$work/lib
nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader
status=0

echo "=== gpu_mode_test"
timeout 260 env NCCL_DEBUG=INFO NCCL_DEBUG_FILE="$logs/nccl-debug.%p.log" ./gpu_mode_test --gtest_color=no 2>&1 |
  tee "$logs/gpu_mode_test.log" | grep -v '^\[       OK\|^\[ RUN' | tail -40
rc=${PIPESTATUS[0]}
echo "gpu_mode_test rc=$rc"
[ "$rc" -eq 0 ] || status=1

wheel=$(python3 -c 'import os, nvidia.nccl; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null)
if [ -z "$wheel" ] || [ ! -f "$wheel" ]; then
  echo "=== no torch wheel with nvidia-nccl here: torch steps skipped"
  exit $status
fi
echo "=== torch on Braid (replacing $wheel)"
cp -L "$wheel" "$work/nvidia-libnccl.so.2" && cp lib/libnccl.so.2 "$wheel"
timeout 100 env NCCL_DEBUG=INFO PYTHONUNBUFFERED=1 python3 torch_one_rank.py >"$logs/torch.log" 2>&1
rc=$?
echo "torch rc=$rc"
[ "$rc" -eq 0 ] || status=1
grep -v 'NCCL INFO' "$logs/torch.log" | tail -20
echo "=== torchrun: 2 ranks on one GPU"
timeout 90 env BRAID_SHARED_GPU=1 NCCL_DEBUG=WARN PYTHONUNBUFFERED=1 \
  python3 -m torch.distributed.run --standalone --nproc_per_node 2 torch_two_ranks.py >"$logs/torch2.log" 2>&1
rc=$?
echo "torchrun rc=$rc"
[ "$rc" -eq 0 ] || status=1
tail -15 "$logs/torch2.log"
cp "$work/nvidia-libnccl.so.2" "$wheel"
exit $status
