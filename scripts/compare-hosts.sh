#!/usr/bin/env bash
# Braid's all-reduce across hosts next to Open MPI's and Gloo's, on the virtual cluster
# (scripts/cluster/cluster.sh: network namespaces with their own hostnames, each host's link
# shaped to RATE both ways with tc): the same ranks on the same hosts, float sum, the same
# sizes and iterations, each program run REPEAT times in turn (MPI, Gloo, Braid, Braid with
# NCCL_ALGO=ring, MPI, ...), the best busbw of each kept. busbw is counted as nccl-tests
# counts it (algbw * 2(n-1)/n), and shown also as a share of the per-host link rate.
# Open MPI runs with mpi_yield_when_idle (more ranks than cores: its polling ranks would
# otherwise starve the ones they wait for) over TCP on the cluster link.
#   sudo scripts/compare-hosts.sh [HOSTS=2] [PER_HOST=2] [RATE=10gbit] [MIN=64K] [MAX=256M] [REPEAT=2]
# BRAID_COMPARE_ITERS (default 5) iterations per size from 4 MiB, BRAID_COMPARE_SMALL_ITERS
# (default 100) below it: a few iterations of a small size measure where the scheduler and
# the shaper's bucket happened to be (with 5, Braid looked ahead of Open MPI from 64 KiB at
# 10 Gbit/s; with 100 it is behind up to 4 MiB). BRAID_COMPARE_PLOT=FILE.png draws
# busbw against size for the programs (tools/plot/braid_plot.py); BRAID_COMPARE_DATA=FILE
# keeps the table's numbers (one line per size). BRAID_COMPARE_RAILS=R (default 1) gives
# every host R links shaped to RATE each (eth0, eth1, ...: a multi-rail cluster), and every
# program is told to use them all (Open MPI's btl_tcp_if_include, GLOO_SOCKET_IFNAME,
# NCCL_SOCKET_IFNAME); link% is then of the host's R links together. Starts its own cluster
# (--no-slurm) and tears it down; refuses to run while another owner's cluster is up.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/compare-common.sh
. "$root/scripts/compare-common.sh"
hosts=${1:-2}
per_host=${2:-2}
rate=${3:-10gbit}
minb=$(bytes "${4:-64K}")
maxb=$(bytes "${5:-256M}")
repeat=${6:-2}
iters=${BRAID_COMPARE_ITERS:-5}
small_iters=${BRAID_COMPARE_SMALL_ITERS:-100}
rails=${BRAID_COMPARE_RAILS:-1}
[[ "$rails" =~ ^[1-3]$ ]] || { echo "compare-hosts: BRAID_COMPARE_RAILS takes 1 to 3, not $rails" >&2; exit 2; }
ifaces=$(for k in $(seq 0 $((rails - 1))); do printf "eth%d," "$k"; done)
ifaces=${ifaces%,}
nranks=$((hosts * per_host))
# The host's link rate in GB/s, all rails together (tc's units: kbit, mbit, gbit).
link_gbs=$(awk -v r="$rate" -v rails="$rails" 'BEGIN {
  n = r + 0; u = tolower(substr(r, length(n "") + 1))
  f = u == "gbit" ? 1e9 : u == "mbit" ? 1e6 : u == "kbit" ? 1e3 : 1
  printf "%.4f", rails * n * f / 8 / 1e9 }')
[ "$(id -u)" -eq 0 ] || { echo "compare-hosts: needs root (the virtual cluster)" >&2; exit 1; }
ensure_mpicc
[ -x "$root/build/bench/all_reduce_perf" ] ||
  BRAID_TARGETS="nccl braidrun all_reduce_perf" bash "$root/scripts/build.sh" "$root/build"
find_gloo

cluster="$root/scripts/cluster/cluster.sh"
work=$(mktemp -d -t braid-compare-hosts.XXXXXX)
cleanup() {
  "$cluster" down >/dev/null 2>&1 || true
  [ -n "${BRAID_COMPARE_KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
"$cluster" up --hosts "$hosts" --rate "$rate" --rails "$rails" --no-slurm --owner compare-hosts >/dev/null
mpicc -O2 "$root/bench/compare/mpi_all_reduce.c" -o "$work/mpi_all_reduce"
host_list=$(for k in $(seq "$hosts"); do printf "node%d:%d," "$k" "$per_host"; done)
host_list=${host_list%,}

# Starts one process per rank, rank r on host r / PER_HOST, and waits for all of them.
# Rank 0's output goes to stdout. CMD gets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and
# MASTER_PORT in its environment, and whatever "$@" puts before the program.
run_ranks() {
  local port=$1 r pids=()
  shift
  for r in $(seq 0 $((nranks - 1))); do
    local node=node$((r / per_host + 1))
    "$cluster" exec "$node" env RANK="$r" WORLD_SIZE="$nranks" LOCAL_RANK=$((r % per_host)) \
      LOCAL_WORLD_SIZE="$per_host" MASTER_ADDR=node1 MASTER_PORT="$port" "$@" \
      >"$work/rank$r.out" 2>&1 &
    pids+=($!)
  done
  local failed=0
  for r in "${!pids[@]}"; do wait "${pids[$r]}" || { failed=1; echo "# rank $r failed:" >&2; tail -5 "$work/rank$r.out" >&2; }; done
  awk '/^ +[0-9]/' "$work/rank0.out"  # the table's lines, without the programs' warnings
  return $failed
}

# The sizes (MIN, 4 MIN, ...) in two ranges: below 4 MiB with small_iters, from there with
# iters. Each is "first last iterations", the last a size of the sequence.
ranges=()
split=$minb
while [ "$split" -lt $((4 << 20)) ] && [ "$split" -le "$maxb" ]; do split=$((split * 4)); done
if [ "$split" -gt "$minb" ]; then
  last=$((split / 4))
  [ "$last" -le "$maxb" ] || last=$maxb
  ranges+=("$minb $last $small_iters")
fi
[ "$split" -le "$maxb" ] && ranges+=("$split $maxb $iters")

port=29600
for _ in $(seq "$repeat"); do
  for range in "${ranges[@]}"; do
    read -r first last n <<<"$range"
    "$cluster" exec node1 mpirun --allow-run-as-root --oversubscribe --mca plm_rsh_agent "$root/scripts/cluster/rsh-agent.sh" \
      --mca btl_tcp_if_include "$ifaces" --mca oob_tcp_if_include eth0 --mca mpi_yield_when_idle 1 -H "$host_list" \
      -np "$nranks" "$work/mpi_all_reduce" "$first" "$last" "$n" >>"$work/mpi.txt"
    if [ "$gloo" = 1 ]; then
      port=$((port + 1))
      run_ranks "$port" OMP_NUM_THREADS=1 GLOO_SOCKET_IFNAME="$ifaces" "$venv_python" \
        "$root/bench/compare/gloo_all_reduce.py" "$first" "$last" "$n" >>"$work/gloo.txt"
    fi
    for algo in default ring; do
      port=$((port + 1))
      settings=(BRAID_RENDEZVOUS="file://$work/rendezvous-$port" BRAID_JOB_TOKEN="compare-$port" NCCL_SOCKET_IFNAME="$ifaces")
      [ "$algo" = ring ] && settings+=(NCCL_ALGO=ring)
      run_ranks "$port" "${settings[@]}" "$root/build/bench/all_reduce_perf" -b "$first" -e "$last" -f 4 \
        -n "$n" -w 2 -c 0 | awk '/^ +[0-9]/ {print $1, $6, $8}' >>"$work/braid-$algo.txt"
    done
  done
done

echo "# $hosts hosts x $per_host ranks, each host's $rails link(s) ($ifaces) shaped to $rate ($link_gbs GB/s each way in all)"
echo "# float sum all-reduce, busbw (GB/s, as nccl-tests counts it), best of $repeat runs, $small_iters iterations below 4 MiB, $iters from there"
echo "# braid: the tuning model's choice; braid-ring: NCCL_ALGO=ring; link%: braid's busbw / the link rate"
[ "$gloo" = 1 ] || : >"$work/gloo.txt"
table=$(awk -v gloo="$gloo" -v link="$link_gbs" '
  FILENAME ~ /mpi/ { f = "m" } FILENAME ~ /gloo/ { f = "g" }
  FILENAME ~ /braid-default/ { f = "b" } FILENAME ~ /braid-ring/ { f = "r" }
  { s = $1; sizes[s] = 1; if (!((f, s) in B) || $3 > B[f, s]) B[f, s] = $3 }
  END {
    for (s in sizes) {
      m = B["m", s]; g = B["g", s]; b = B["b", s]; r = B["r", s]
      printf "%12d %8.3f %8s %8.3f %8.3f %7.0f%% %8.2f %8s\n", s, m, gloo ? sprintf("%.3f", g) : "-", b, r,
             100 * b / link, (m > 0 ? b / m : 0), ((gloo && g > 0) ? sprintf("%.2f", b / g) : "-")
    }
  }' "$work/mpi.txt" "$work/gloo.txt" "$work/braid-default.txt" "$work/braid-ring.txt" | sort -n)
printf "%12s %8s %8s %8s %8s %8s %8s %8s\n" bytes mpi gloo braid braid-ring link% "vs mpi" "vs gloo"
echo "$table"
if [ -n "${BRAID_COMPARE_DATA:-}" ]; then
  { echo "# $hosts x $per_host, $rate; bytes mpi gloo braid braid-ring link% vs-mpi vs-gloo"; echo "$table"; } >"$BRAID_COMPARE_DATA"
fi
if [ -n "${BRAID_COMPARE_PLOT:-}" ]; then
  # One braid-bench/1 file per program, drawn by tools/plot/braid_plot.py.
  files=() labels=()
  for col in "2 Open MPI" "3 Gloo" "4 Braid" "5 Braid NCCL_ALGO=ring"; do
    c=${col%% *}
    [ "$c" = 3 ] && [ "$gloo" = 0 ] && continue
    echo "$table" | awk -v c="$c" -v name="${col#* }" 'BEGIN { printf "{\"schema\": \"braid-bench/1\", \"program\": \"all_reduce\", \"library\": {\"name\": \"%s\"}, \"results\": [", name }
      $c != "-" { printf "%s{\"size\": %d, \"count\": %d, \"type\": \"float\", \"redop\": \"sum\", \"root\": -1, \"out_of_place\": {\"bus_bw\": %s}}", n++ ? ", " : "", $1, $1 / 4, $c }
      END { print "]}" }' >"$work/plot-$c.json"
    files+=("$work/plot-$c.json")
    labels+=(--label "${col#* }")
  done
  /usr/bin/python3 "$root/tools/plot/braid_plot.py" -o "$BRAID_COMPARE_PLOT" "${labels[@]}" --reference "$link_gbs:link rate" \
    --title "all-reduce, $hosts hosts x $per_host ranks, $rails link(s) per host at $rate ($link_gbs GB/s in all)" "${files[@]}"
  echo "# plot: $BRAID_COMPARE_PLOT"
fi
