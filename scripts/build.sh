#!/usr/bin/env bash
# Configures and builds one build directory.
#   scripts/build.sh DIR [extra cmake arguments...]
#   BRAID_TARGETS="a b" scripts/build.sh DIR    (only those targets)
# CUDA kernels are compiled for one architecture unless BRAID_CUDA_ARCHITECTURES says
# otherwise; 2 parallel jobs unless BRAID_JOBS says otherwise.
set -euo pipefail
dir=$1
shift
root=$(cd "$(dirname "$0")/.." && pwd)
cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE="${BRAID_BUILD_TYPE:-RelWithDebInfo}" -DBRAID_WERROR=ON \
  -DBRAID_CUDA_ARCHITECTURES="${BRAID_CUDA_ARCHITECTURES:-80}" "$@" >/dev/null
# BRAID_TARGETS (space-separated) builds only those targets.
targets=()
for t in ${BRAID_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$dir" -j"${BRAID_JOBS:-2}" "${targets[@]}"
