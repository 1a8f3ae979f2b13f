#!/usr/bin/env bash
# Configures and builds one build directory.
#   scripts/build.sh DIR [extra cmake arguments...]
#   BRAID_TARGETS="a b" scripts/build.sh DIR    (only those targets)
# CUDA kernels are compiled for one architecture unless BRAID_CUDA_ARCHITECTURES says
# otherwise; 2 parallel jobs unless BRAID_JOBS says otherwise. Ninja when it is installed.
# Compiles go through ccache when it is installed (cmake/BraidToolchain.cmake): the cache
# lives outside the checkout (CCACHE_DIR, default ~/.cache/ccache) and paths are taken
# relative to the checkout, so a clean clone elsewhere on the machine hits it.
set -euo pipefail
dir=$1
shift
root=$(cd "$(dirname "$0")/.." && pwd)
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}"
# Objects do not depend on the directory they were built in (line tables name files
# relative to the base directory), so the working directory stays out of the hash.
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-8G}"
generator=()
if [ ! -f "$dir/CMakeCache.txt" ] && command -v ninja >/dev/null; then
  generator=(-G Ninja)
fi
cmake -S "$root" -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE="${BRAID_BUILD_TYPE:-RelWithDebInfo}" -DBRAID_WERROR=ON \
  -DBRAID_CUDA_ARCHITECTURES="${BRAID_CUDA_ARCHITECTURES:-80}" "$@" >/dev/null
# BRAID_TARGETS (space-separated) builds only those targets.
targets=()
for t in ${BRAID_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$dir" -j"${BRAID_JOBS:-2}" "${targets[@]}"
