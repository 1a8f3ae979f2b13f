#!/usr/bin/env bash
# The whole test suite, as CI runs it:
#   1. formatting check (clang-format, the committed .clang-format);
#   2. the normal build (warnings are errors, CUDA for one architecture when nvcc exists)
#      and every test;
#   3. AddressSanitizer + UndefinedBehaviorSanitizer build, every host test (the
#      collective matrix in its quick form, without the multi-GiB test);
#   4. ThreadSanitizer build, the host-path tests (likewise);
#   5. libFuzzer targets (clang) for every parser of outside input, each for a bounded time.
# Sanitizer builds leave CUDA out: they check host code, which is all that runs here. The
# TSan build leaves the tools and benchmarks out too: its labels (unit, multiproc) use neither.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
start=$(date +%s)
step() { printf '\n=== %s (%ds) ===\n' "$1" "$(( $(date +%s) - start ))"; }

# Host mode for every suite, also on a machine with GPUs (the suites pass host memory); the
# GPU suite (tests/gpu, label gpu) sets BRAID_DEVICE=auto for itself.
export BRAID_DEVICE=cpu

step "format check"
bash scripts/check-format.sh

step "build"
# Line tables only (-g1): full debug info is a fifth of the compile time and no test reads it.
bash scripts/build.sh build -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
step "tests"
(cd build && ctest --output-on-failure -j2 --timeout 1200 -LE soak)

step "build with AddressSanitizer + UndefinedBehaviorSanitizer"
bash scripts/build.sh build-asan -DBRAID_SANITIZE=address,undefined -DBRAID_CUDA=OFF -DBRAID_BUILD_TOOLS=ON
step "tests under ASan + UBSan"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  BRAID_TEST_MATRIX=quick BRAID_TEST_INIT_CYCLES=100 BRAID_TEST_ABORT_CYCLES=20 ctest --output-on-failure -j2 --timeout 900 -LE "abi|large|soak|rxe")

step "build with ThreadSanitizer"
bash scripts/build.sh build-tsan -DBRAID_SANITIZE=thread -DBRAID_CUDA=OFF -DBRAID_BUILD_TOOLS=OFF
step "host-path tests under TSan"
(cd build-tsan && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  BRAID_TEST_MATRIX=quick BRAID_TEST_INIT_CYCLES=100 BRAID_TEST_ABORT_CYCLES=20 ctest --output-on-failure -j2 --timeout 900 -L "unit|multiproc" -LE "large|soak")

step "fuzz targets (clang + libFuzzer, ${BRAID_FUZZ_SECONDS:-20} s each)"
CC=clang CXX=clang++ BRAID_TARGETS=braid_fuzzers bash scripts/build.sh build-fuzz -DBRAID_FUZZ=ON \
  -DBRAID_BUILD_TESTS=OFF -DBRAID_BUILD_TOOLS=OFF -DBRAID_CUDA=OFF -DBRAID_FUZZ_SECONDS="${BRAID_FUZZ_SECONDS:-20}"
(cd build-fuzz && ctest --output-on-failure -L fuzz)

step "all passed"
