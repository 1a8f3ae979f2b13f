#!/usr/bin/env bash
# Puts Braid's all-reduce next to an MPI's (Open MPI from Debian's openmpi-bin) in one run,
# on this host over shared memory: float sum, out of place, the same sizes and iteration
# counts, each measured REPEAT times alternately, best busbw kept (the machines here are
# shared and noisy). Prints size, MPI busbw, Braid busbw and their ratio.
#   scripts/compare-mpi.sh [RANKS=2] [MINBYTES=1M] [MAXBYTES=256M] [REPEAT=3]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# Sizes may carry K, M or G (as all_reduce_perf's do); the MPI program wants plain bytes.
bytes() {
  case $1 in
    *[kK]) echo $((${1%?} << 10)) ;;
    *[mM]) echo $((${1%?} << 20)) ;;
    *[gG]) echo $((${1%?} << 30)) ;;
    *) echo "$1" ;;
  esac
}
ranks=${1:-2}
minb=$(bytes "${2:-1M}")
maxb=$(bytes "${3:-256M}")
repeat=${4:-3}
command -v mpicc >/dev/null || { echo "compare-mpi: needs mpicc and mpirun (apt-get install openmpi-bin libopenmpi-dev)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpicc -O2 "$root/bench/compare/mpi_all_reduce.c" -o "$work/mpi_all_reduce"
[ -x "$root/build/bench/all_reduce_perf" ] || BRAID_TARGETS="nccl braidrun all_reduce_perf" bash "$root/scripts/build.sh" "$root/build"
mpirun_flags=(--oversubscribe)
[ "$(id -u)" -eq 0 ] && mpirun_flags+=(--allow-run-as-root)
for i in $(seq "$repeat"); do
  mpirun "${mpirun_flags[@]}" -np "$ranks" "$work/mpi_all_reduce" "$minb" "$maxb" 20 >> "$work/mpi.txt"
  "$root/build/tools/braidrun/braidrun" -n "$ranks" --no-prefix "$root/build/bench/all_reduce_perf" \
    -b "$minb" -e "$maxb" -f 4 -n 20 -w 2 -c 0 | awk '/^ +[0-9]/ {print $1, $8}' >> "$work/braid.txt"
done
echo "# $ranks ranks, float sum all-reduce, best busbw (GB/s) of $repeat runs each"
printf "%12s %10s %10s %8s\n" bytes mpi braid ratio
awk 'NR==FNR { if ($3 > m[$1]) m[$1] = $3; next } { if ($2 > b[$1]) b[$1] = $2 }
     END { for (s in b) printf "%12d %10.2f %10.2f %8.2f\n", s, m[s], b[s], (m[s] > 0 ? b[s] / m[s] : 0) }' \
  "$work/mpi.txt" "$work/braid.txt" | sort -n
