#!/usr/bin/env bash
# scripts/compare-mpi.sh with a CPU-bound competitor on the machine: one process per
# COMPETITORS (default 1) spinning on a core for the whole run, as a data loader or another
# job would, so that a change that only wins on an idle machine shows. Same arguments as
# compare-mpi.sh; the competitors end with the script (also on failure or Ctrl-C).
#   scripts/bench-busy.sh [RANKS=2] [MINBYTES=8] [MAXBYTES=256M] [REPEAT=3]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
competitors=${COMPETITORS:-1}
pids=()
stop() { [ ${#pids[@]} -eq 0 ] || kill "${pids[@]}" 2>/dev/null || true; }
trap stop EXIT
for _ in $(seq "$competitors"); do
  bash -c 'while :; do :; done' &
  pids+=($!)
done
echo "# with $competitors CPU-bound competitor process(es) running (pids ${pids[*]})"
bash "$here/compare-mpi.sh" "$@"
