#!/usr/bin/env bash
# Compares Braid's host-mode all-reduce across element types in one run: all_reduce_perf
# under braidrun on this host (sum, out of place, the same sizes and iteration counts), each
# type measured REPEAT times, the types alternating, best busbw kept (the machines here are
# shared and noisy). Prints size, each type's busbw and its ratio to the first type's.
#   scripts/bench-dtypes.sh [RANKS=2] [MINBYTES=1M] [MAXBYTES=256M] [REPEAT=5] [TYPES="float bfloat16 half"]
# The environment passes through to the ranks: BRAID_SIMD=none measures the portable
# reduction loops (docs/environment.md); PERF=/path/to/all_reduce_perf another build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ranks=${1:-2}
minb=${2:-1M}
maxb=${3:-256M}
repeat=${4:-5}
read -r -a types <<< "${5:-float bfloat16 half}"
perf=${PERF:-$root/build/bench/all_reduce_perf}
braidrun=$root/build/tools/braidrun/braidrun
[ -x "$perf" ] && [ -x "$braidrun" ] || BRAID_TARGETS="nccl braidrun all_reduce_perf" bash "$root/scripts/build.sh" "$root/build"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for i in $(seq "$repeat"); do
  for t in "${types[@]}"; do
    "$braidrun" -n "$ranks" --no-prefix "$perf" -b "$minb" -e "$maxb" -f 4 -n 20 -w 2 -c 0 -d "$t" |
      awk -v t="$t" '/^ +[0-9]/ {print t, $1, $8}' >> "$work/runs.txt"
  done
done
echo "# $ranks ranks, sum all-reduce, out of place, best busbw (GB/s) of $repeat runs each; ratio to ${types[0]}"
awk -v list="${types[*]}" '
  { if ($3 > best[$1, $2]) best[$1, $2] = $3; sizes[$2] = 1 }
  END {
    n = split(list, t, " ")
    printf "%12s", "bytes"
    for (i = 1; i <= n; i++) printf " %10s", t[i]
    for (i = 2; i <= n; i++) printf " %10s", t[i] "/" t[1]
    printf "\n"
    for (s in sizes) {
      line = sprintf("%12d", s)
      for (i = 1; i <= n; i++) line = line sprintf(" %10.2f", best[t[i], s])
      for (i = 2; i <= n; i++) line = line sprintf(" %10.2f", best[t[1], s] > 0 ? best[t[i], s] / best[t[1], s] : 0)
      print line
    }
  }' "$work/runs.txt" | sort -n
