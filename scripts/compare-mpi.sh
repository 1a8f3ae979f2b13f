#!/usr/bin/env bash
# Puts Braid's all-reduce next to an MPI's (Open MPI from Debian's openmpi-bin) and Gloo's
# (torch.distributed, from the project's venv) in one run, on this host over shared memory:
# float sum, the same sizes and iteration counts, each program run REPEAT times in turn
# (MPI, Gloo, Braid, MPI, ...), the best of each kept (the machines here are shared and
# noisy). Prints, per size, the time below 64 KiB and busbw from there for the three,
# Braid's ratio to each (Braid's speed / theirs: above 1, Braid is faster), and the
# single-thread memcpy rate measured in the same run (what a copy of one buffer costs).
# Braid's in-place figures get a column of their own (MPI_IN_PLACE is not timed).
#   scripts/compare-mpi.sh [RANKS=2] [MINBYTES=8] [MAXBYTES=256M] [REPEAT=3]
# Iterations per size, for all three: BRAID_COMPARE_SMALL_ITERS (default 20000; Gloo, whose
# small all-reduce takes 200-400 us, at most 500) below 64 KiB, BRAID_COMPARE_MID_ITERS
# (default 200) below 4 MiB, each after 100 warm-up iterations; BRAID_COMPARE_ITERS (default
# 20) after BRAID_COMPARE_WARMUP (default 2) from 4 MiB. A size must run for tens of
# milliseconds, longer than the scheduler's slices, or a busy machine's measurement is
# whichever slice it happened to fit in (20 iterations of an 8-byte all-reduce took 0.45 us
# with a competitor on the machine, Open MPI's steady rate there being 0.92). BRAID_COMPARE_FLAGS adds flags to all_reduce_perf: "-R 2" makes its buffers windows
# (ncclMemAlloc memory registered with ncclCommWindowRegister: single-copy collectives).
# Gloo is left out (with a note) when the venv has no torch (bash scripts/python-venv.sh) or
# BRAID_COMPARE_GLOO=0 (its 8-byte all-reduce takes 400 us: long runs of small sizes).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/compare-common.sh
. "$root/scripts/compare-common.sh"
ranks=${1:-2}
minb=$(bytes "${2:-8}")
maxb=$(bytes "${3:-256M}")
repeat=${4:-3}
iters=${BRAID_COMPARE_ITERS:-20}
warmup=${BRAID_COMPARE_WARMUP:-2}
small_iters=${BRAID_COMPARE_SMALL_ITERS:-20000}
mid_iters=${BRAID_COMPARE_MID_ITERS:-200}
gloo_small_iters=$((small_iters < 500 ? small_iters : 500))
ensure_mpicc
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpicc -O2 "$root/bench/compare/mpi_all_reduce.c" -o "$work/mpi_all_reduce"
# shellcheck disable=SC2015  # build when either program is missing
[ -x "$root/build/bench/all_reduce_perf" ] && [ -x "$root/build/bench/micro/braid_micro_bench" ] ||
  BRAID_TARGETS="nccl braidrun all_reduce_perf braid_micro_bench" bash "$root/scripts/build.sh" "$root/build"
find_gloo
mpirun_flags=(--oversubscribe)
[ "$(id -u)" -eq 0 ] && mpirun_flags+=(--allow-run-as-root)
# The sizes (MIN, 4 MIN, ...) in three ranges, each run by every program: below 64 KiB,
# below 4 MiB, and from there. Each range: first size, last size, iterations, warm-up,
# Gloo's iterations.
ranges=()
lo=$minb
while read -r bound n w gloo_n; do
  { [ "$lo" -le "$maxb" ] && [ "$lo" -lt "$bound" ]; } || continue
  hi=$lo
  while [ $((hi * 4)) -lt "$bound" ] && [ $((hi * 4)) -le "$maxb" ]; do hi=$((hi * 4)); done
  ranges+=("$lo $hi $n $w $gloo_n")
  lo=$((hi * 4))
done <<RANGES
65536 $small_iters 100 $gloo_small_iters
$((4 << 20)) $mid_iters 100 $mid_iters
$((maxb + 1)) $iters $warmup $iters
RANGES
for _ in $(seq "$repeat"); do
  for range in "${ranges[@]}"; do
    read -r lo hi n w gloo_n <<< "$range"
    mpirun "${mpirun_flags[@]}" -np "$ranks" "$work/mpi_all_reduce" "$lo" "$hi" "$n" "$w" >> "$work/mpi.txt"
    if [ "$gloo" = 1 ]; then
      OMP_NUM_THREADS=1 "$venv_python" -m torch.distributed.run --standalone --nproc_per_node "$ranks" \
        "$root/bench/compare/gloo_all_reduce.py" "$lo" "$hi" "$gloo_n" "$w" 2>/dev/null >> "$work/gloo.txt"
    fi
    # shellcheck disable=SC2086  # BRAID_COMPARE_FLAGS holds several flags
    "$root/build/tools/braidrun/braidrun" -n "$ranks" --no-prefix "$root/build/bench/all_reduce_perf" \
      -b "$lo" -e "$hi" -f 4 -n "$n" -w "$w" -c 0 ${BRAID_COMPARE_FLAGS:-} |
      awk -v ip="$work/braid-ip.txt" '/^ +[0-9]/ {print $1, $6, $8; print $1, $10, $12 >> ip}' >> "$work/braid.txt"
  done
done
[ -z "${BRAID_COMPARE_FLAGS:-}" ] || echo "# all_reduce_perf flags added: $BRAID_COMPARE_FLAGS"
# Single-thread memcpy of the largest size (GB/s), on the same machine in the same run.
memcpy_gbs=$("$root/build/bench/micro/braid_micro_bench" --benchmark_filter="^memcpy/aligned/$maxb\$" \
  --benchmark_format=csv 2>/dev/null |
  awk -F, '/^name,/ { for (i = 1; i <= NF; i++) if ($i == "bytes_per_second") col = i } /memcpy/ && col { v = $col } END { print v }' ||
  true)  # no memcpy benchmark of that size: the line is left out
echo "# $ranks ranks, float sum all-reduce, best of $repeat runs each (iterations: $small_iters below 64 KiB, Gloo $gloo_small_iters; $mid_iters below 4 MiB; $iters from there); time (us) below 64 KiB, busbw (GB/s) from 64 KiB"
echo "# ratio: Braid's speed / theirs (> 1: Braid faster)"
[ "$gloo" = 1 ] || : > "$work/gloo.txt"
# Each file: bytes time busbw. Keep the best: the smallest time, the largest busbw.
printf "%12s %10s %10s %10s %10s %10s %10s\n" bytes mpi gloo braid "braid-ip" "vs mpi" "vs gloo"
awk -v gloo="$gloo" '
  FILENAME ~ /mpi/   { f = "m" } FILENAME ~ /gloo/ { f = "g" } FILENAME ~ /braid.txt/ { f = "b" }
  FILENAME ~ /braid-ip/ { f = "i" }
  { s = $1; t = $2; bw = $3; sizes[s] = 1
    if (!((f, s) in T) || t < T[f, s]) T[f, s] = t
    if (!((f, s) in B) || bw > B[f, s]) B[f, s] = bw }
  END {
    for (s in sizes) {
      small = (s + 0 < 65536)  # busbw with two decimals says nothing about small sizes
      m = small ? T["m", s] : B["m", s]; g = small ? T["g", s] : B["g", s]; b = small ? T["b", s] : B["b", s]
      i = small ? T["i", s] : B["i", s]
      rm = small ? (b > 0 ? m / b : 0) : (m > 0 ? b / m : 0)
      rg = gloo ? (small ? (b > 0 ? g / b : 0) : (g > 0 ? b / g : 0)) : 0
      printf "%12d %10.2f %10s %10.2f %10.2f %10.3g %10s\n", s, m, gloo ? sprintf("%.2f", g) : "-", b, i, rm,
             gloo ? sprintf("%.3g", rg) : "-"
    }
  }' "$work/mpi.txt" "$work/gloo.txt" "$work/braid.txt" "$work/braid-ip.txt" | sort -n
[ -n "$memcpy_gbs" ] && awk -v v="$memcpy_gbs" -v s="$maxb" 'BEGIN { printf "# memcpy, one thread, %d bytes: %.1f GB/s\n", s, v / 1e9 }'
exit 0
