#!/usr/bin/env bash
# The main job: build the library, braidrun and the benchmark, then run the all-reduce
# benchmark (nccl-tests' all_reduce_perf, host mode) across 4 local ranks from 8 B to
# 64 MiB, checking every result.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BRAID_TARGETS="nccl braidrun all_reduce_perf" bash "$root/scripts/build.sh" "$root/build"
"$root/build/tools/braidrun/braidrun" -n 4 "$root/build/bench/all_reduce_perf" -b 8 -e 64M -f 2 -c 1
