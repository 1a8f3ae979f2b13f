#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run). docs/testing.md says what runs where and
# why, and keeps the time budget (30 minutes on a fresh 2-core machine) with the latest
# figures.
#   1. formatting check (clang-format, the committed .clang-format) and the include-layer
#      check (scripts/check-layers.sh: dependencies point down, docs/design.md);
#   2. AddressSanitizer + UndefinedBehaviorSanitizer build: every host test (the collective
#      matrix in its quick form, without the multi-GiB test), the tools and benchmarks;
#   3. ThreadSanitizer build: every test that shares memory or threads (binaries marked
#      PURE compute in one thread and are not built there);
#   4. the Python venv and NVIDIA's headers, which `install-deps.sh --python-in-background`
#      has been downloading meanwhile (waits for it; does what is left when run alone);
#   5. the normal build (warnings are errors, CUDA kernels for one architecture when nvcc
#      exists, the PyTorch backend against the venv's torch) and every test but the soak;
#   6. libFuzzer targets (clang) for every parser of outside input, each for a bounded time.
# The sanitizer builds come first because they need neither the venv nor the headers.
# Sanitizer builds leave CUDA out: they check host code, which is all that runs here.
#
# Tests run with more ctest slots than cores (BRAID_TEST_JOBS, default 8): most cases spend
# their time waiting for other processes, sockets and timeouts, not computing; binaries
# whose cases keep the cores busy claim several slots (PROCESSORS in tests/CMakeLists.txt).
# Every step's wall and CPU time is printed at the end, in one table, also after a failure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# Host mode for every suite, also on a machine with GPUs (the suites pass host memory); the
# GPU suite (tests/gpu, label gpu) sets BRAID_DEVICE=auto for itself.
export BRAID_DEVICE=cpu
jobs=${BRAID_TEST_JOBS:-8}

# --- step timing ---------------------------------------------------------------------
run_start=$(date +%s)
step_names=()
step_walls=()
step_cpus=()
current=""
current_start=0
current_cpu=0

# CPU seconds (user + system) of every finished child of this shell so far, in $cpu_total.
# The builtin `times` must run in this shell (a command substitution would report its own
# subshell), so it writes to a file.
times_file=$(mktemp)
cpu_total=0
read_children_cpu() {
  times >"$times_file"
  cpu_total=$(tail -n 1 "$times_file" | awk '{
    total = 0
    for (i = 1; i <= 2; i++) { split($i, p, "m"); sub("s", "", p[2]); total += p[1] * 60 + p[2] }
    printf "%d", total }')
}
close_step() {
  [ -n "$current" ] || return 0
  step_names+=("$current")
  step_walls+=($(($(date +%s) - current_start)))
  read_children_cpu
  step_cpus+=($((cpu_total - current_cpu)))
  current=""
}
step() {
  close_step
  current=$1
  current_start=$(date +%s)
  read_children_cpu
  current_cpu=$cpu_total
  printf '\n=== %s (at %ds) ===\n' "$1" "$((current_start - run_start))"
}
print_table() {
  local status=$?
  close_step
  printf '\n%-58s %8s %8s\n' "step" "wall s" "CPU s"
  for i in "${!step_names[@]}"; do
    printf '%-58s %8d %8d\n' "${step_names[$i]}" "${step_walls[$i]}" "${step_cpus[$i]}"
  done
  local total=$(($(date +%s) - run_start))
  printf '%-58s %8d   (%dm%02ds)\n' "total" "$total" $((total / 60)) $((total % 60))
  [ "$status" -eq 0 ] && echo "all passed" || echo "FAILED (exit $status) in the step above the table's end"
  rm -f "$times_file"
}
trap print_table EXIT

# --- the suite -------------------------------------------------------------------------
step "format and include-layer checks"
bash scripts/check-format.sh
bash scripts/check-layers.sh

step "build with AddressSanitizer + UndefinedBehaviorSanitizer"
bash scripts/build.sh build-asan -DBRAID_SANITIZE=address,undefined -DBRAID_CUDA=OFF -DBRAID_BUILD_TOOLS=ON
step "tests under ASan + UBSan"
# LeakSanitizer's own tracer crashes at about one process exit in several hundred; a test
# that failed by that alone runs once more (scripts/ctest-lsan-retry.sh says exactly when).
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  BRAID_TEST_MATRIX=quick BRAID_TEST_INIT_CYCLES=100 BRAID_TEST_ABORT_CYCLES=20 \
  bash ../scripts/ctest-lsan-retry.sh --output-on-failure -j"$jobs" --timeout 900 -LE "abi|install|large|soak|rxe")

step "build with ThreadSanitizer"
bash scripts/build.sh build-tsan -DBRAID_SANITIZE=thread -DBRAID_CUDA=OFF -DBRAID_BUILD_TOOLS=OFF
step "tests under TSan (threads and shared memory)"
(cd build-tsan && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  BRAID_TEST_MATRIX=quick BRAID_TEST_INIT_CYCLES=100 BRAID_TEST_ABORT_CYCLES=20 \
  ctest --output-on-failure -j"$jobs" --timeout 900 -L "unit|multiproc" -LE "large|soak")

step "Python venv and NVIDIA's headers (set up by install-deps in the background)"
bash scripts/python-venv.sh
bash scripts/fetch-nccl-headers.sh || echo "test-all: NVIDIA's headers not fetched; tests/abi skips them"

step "build"
# The developers' default configuration (RelWithDebInfo with line tables, CMakeLists.txt), so
# that a developer's build on this machine has filled the compiler cache for it.
bash scripts/build.sh build
step "tests"
(cd build && ctest --output-on-failure -j"$jobs" --timeout 1200 -LE soak)

step "fuzz targets (clang + libFuzzer, ${BRAID_FUZZ_SECONDS:-20} s each)"
CC=clang CXX=clang++ BRAID_TARGETS=braid_fuzzers bash scripts/build.sh build-fuzz -DBRAID_FUZZ=ON \
  -DBRAID_BUILD_TESTS=OFF -DBRAID_BUILD_TOOLS=OFF -DBRAID_CUDA=OFF -DBRAID_FUZZ_SECONDS="${BRAID_FUZZ_SECONDS:-20}"
(cd build-fuzz && ctest --output-on-failure -j2 -L fuzz)
close_step
