#!/usr/bin/env bash
# Configures and builds one build directory.
#   scripts/build.sh DIR [extra cmake arguments...]
# CUDA kernels are compiled for one architecture unless BRAID_CUDA_ARCHITECTURES says
# otherwise; 2 parallel jobs unless BRAID_JOBS says otherwise.
set -euo pipefail
dir=$1
shift
root=$(cd "$(dirname "$0")/.." && pwd)
cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE="${BRAID_BUILD_TYPE:-RelWithDebInfo}" -DBRAID_WERROR=ON \
  -DBRAID_CUDA_ARCHITECTURES="${BRAID_CUDA_ARCHITECTURES:-80}" "$@" >/dev/null
cmake --build "$dir" -j"${BRAID_JOBS:-2}"
