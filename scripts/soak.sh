#!/usr/bin/env bash
# The soak test, not part of CI: 100,000 verified collectives on 4 ranks with steady
# memory (BRAID_SOAK_OPERATIONS to change the count). Builds first if needed.
#   scripts/soak.sh [build-dir]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/build}
BRAID_TARGETS=soak_multiproc_tests bash "$root/scripts/build.sh" "$dir"
cd "$dir" && ctest --output-on-failure -L soak --timeout 7200
