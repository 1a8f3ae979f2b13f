#!/usr/bin/env bash
# The GPU check, on a machine with an NVIDIA GPU and a driver (what docs/gpu.md reports was
# run with this). Unpacks payload.tar.xz (pack.sh) beside this script and runs:
#   1. the GPU suite (gpu_mode_test: every collective on every device, four ranks per
#      device with BRAID_SHARED_GPU=1, streams, init; the abort case needs two GPUs);
#   2. nccl-tests, when carried, on Braid and then on the wheel's NCCL (one GPU, -c 1);
#   3. PyTorch's own NCCL path with the torch wheel's libnccl.so.2 replaced by Braid's (when
#      python3 has a CUDA torch): one rank, then two processes on GPU 0 under torchrun.
#      The wheel's library is put back at the end;
#   4. compute-sanitizer memcheck over part of the suite, with the time that is left.
# Logs (the NCCL INFO log of the suite too) are kept in the unpack folder's logs/.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/braid-gpu.XXXX)
tar -xJf "$here/payload.tar.xz" -C "$work" || exit 1
cd "$work" || exit 1
# Logs go to one folder; with $OUT set (the device tool) it travels back as one archive,
# since only a few files come back from there.
logs=$work/logs
mkdir -p "$logs"
[ -n "${OUT:-}" ] && trap 'tar -C "$work" -cJf "$OUT/gpu-logs.tar.xz" logs' EXIT
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

# nccl-tests (when pack.sh carried them): each program on one GPU, first on Braid, then on
# NVIDIA's NCCL from the torch wheel in the same run, so that the figures compare. -c 1
# checks every result. The summary lines and any failure are printed; full logs go to $logs.
if [ -d nccl-tests ]; then
  mkdir -p "$work/nvidia"
  [ -n "$wheel" ] && [ -f "$wheel" ] && cp -L "$wheel" "$work/nvidia/libnccl.so.2"
  for prog in nccl-tests/*_perf; do
    name=$(basename "$prog")
    for lib in braid nvidia; do
      dir=$work/lib
      [ "$lib" = nvidia ] && dir=$work/nvidia
      [ -f "$dir/libnccl.so.2" ] || continue
      timeout 90 env LD_LIBRARY_PATH="$dir" NCCL_DEBUG=WARN "$prog" -b 8 -e 128M -f 8 -g 1 -c 1 -w 5 -n 20 \
        >"$logs/nccltests-$name-$lib.log" 2>&1
      rc=$?
      # The #wrong columns counted from the end of the row: hypercube_perf has no redop
      # column, so counting from the start read a time as a count of wrong values.
      wrong=$(awk '$1 ~ /^[0-9]+$/ && ($(NF-4) + 0 != 0 || $NF != "N/A" && $NF + 0 != 0) {n++} END {print n+0}' \
        "$logs/nccltests-$name-$lib.log")
      echo "=== nccl-tests $name on $lib: rc=$rc, sizes with wrong results: $wrong"
      grep -E '^ +(8|32768|134217728) |Avg bus|Out of bounds|NCCL WARN|error|Error' "$logs/nccltests-$name-$lib.log" | head -8
      { [ "$rc" -eq 0 ] && [ "$wrong" -eq 0 ]; } || { [ "$lib" = braid ] && status=1; }
    done
  done
  # Every type and reduction (mulsum, avg included), in place and not, and buffers
  # registered with ncclCommRegister (-R 1): results checked, on Braid only.
  for extra in "-d all -o all" "-R 1"; do
    echo "=== all_reduce_perf $extra on braid"
    # shellcheck disable=SC2086
    timeout 120 env LD_LIBRARY_PATH="$work/lib" NCCL_DEBUG=WARN nccl-tests/all_reduce_perf -b 8 -e 1M -f 128 -g 1 \
      -c 1 -w 1 -n 2 $extra >"$logs/allreduce-${extra//[ -]/}.log" 2>&1
    rc=$?
    wrong=$(awk '$1 ~ /^[0-9]+$/ && ($(NF-4) + 0 != 0 || $NF + 0 != 0) {n++} END {print n+0}' \
      "$logs/allreduce-${extra//[ -]/}.log")
    rows=$(grep -cE '^ +[0-9]+ ' "$logs/allreduce-${extra//[ -]/}.log")
    echo "rc=$rc, rows $rows, rows with wrong results: $wrong"
    grep -E 'Out of bounds|NCCL WARN' "$logs/allreduce-${extra//[ -]/}.log" | head -5
    { [ "$rc" -eq 0 ] && [ "$wrong" -eq 0 ] && [ "$rows" -gt 0 ]; } || status=1
  done
  # Small sizes: the time of a call (-C 1: the host's time per call) and, captured in a CUDA
  # graph (-G), the time of the work without the calls.
  for mode in "-C 1" "-G 20"; do
    for lib in braid nvidia; do
      dir=$work/lib
      [ "$lib" = nvidia ] && dir=$work/nvidia
      [ -f "$dir/libnccl.so.2" ] || continue
      echo "=== all_reduce_perf $mode, small sizes, on $lib"
      # shellcheck disable=SC2086
      timeout 60 env LD_LIBRARY_PATH="$dir" NCCL_DEBUG=WARN nccl-tests/all_reduce_perf -b 8 -e 32K -f 64 -g 1 -c 1 \
        -w 50 -n 2000 $mode >"$logs/latency-${mode//[ -]/}-$lib.log" 2>&1
      rc=$?
      grep -E '^ +[0-9]+ |Out of bounds' "$logs/latency-${mode//[ -]/}-$lib.log"
      [ "$rc" -eq 0 ] || { echo "rc=$rc"; [ "$lib" = braid ] && status=1; }
    done
  done
fi
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

# 4. With time left (GPU_CHECK_BUDGET seconds in all, default 480): compute-sanitizer's
#    memcheck over the four-ranks-per-GPU float cases and the stream cases.
left=$((${GPU_CHECK_BUDGET:-480} - SECONDS))
if command -v compute-sanitizer >/dev/null && [ "$left" -gt 60 ]; then
  echo "=== memcheck (${left}s left)"
  timeout "$left" compute-sanitizer --tool memcheck --error-exitcode 9 ./gpu_mode_test --gtest_color=no \
    --gtest_filter='SharedGpu/GpuCollective.*float_*:GpuStream.*' >"$logs/memcheck.log" 2>&1
  rc=$?
  echo "memcheck rc=$rc (124: out of time)"
  grep -E 'ERROR SUMMARY|PASSED|FAILED|Invalid|========= [A-Z]' "$logs/memcheck.log" | head -15
  [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ] || status=1
fi
exit $status
