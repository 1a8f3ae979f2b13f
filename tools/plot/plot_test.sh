#!/usr/bin/env bash
# CTest driver of braid_plot.py on a real run: all_reduce_perf (1 process, -t 2, tiny sizes)
# writes -J into a temporary directory, then the plot tool reads it.
#   plot_test.sh csv PYTHON PLOT PERF   CSV output and the error paths (no matplotlib needed)
#   plot_test.sh png PYTHON PLOT PERF   a PNG; exit 77 (CTest's SKIP) when PYTHON lacks matplotlib
set -euo pipefail
mode=$1 python=$2 plot=$3 perf=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$perf" -t 2 -b 8 -e 64K -f 4 -n 2 -w 1 -c 1 -J "$work/run.json" > "$work/perf.txt" || fail "all_reduce_perf exited $?"
rows=$(grep -c '^ *[0-9]' "$work/perf.txt")
[ "$rows" -eq 7 ] || fail "expected 7 rows from all_reduce_perf, got $rows"

# Exit status of a command that is expected to fail, without tripping set -e.
status() { local rc=0; "$@" > "$work/out.txt" 2>&1 || rc=$?; echo "$rc"; }

case "$mode" in
  csv)
    "$python" "$plot" --csv "$work/run.csv" --placement both "$work/run.json" || fail "braid_plot --csv exited $?"
    head -n 1 "$work/run.csv" | grep -q '^label,file,library,program,type,redop,root,placement,size,' ||
      fail "bad CSV header: $(head -n 1 "$work/run.csv")"
    # 7 sizes x 2 placements, every bus bandwidth a number.
    data=$(tail -n +2 "$work/run.csv")
    [ "$(wc -l <<< "$data")" -eq 14 ] || fail "expected 14 CSV rows, got: $data"
    awk -F, '$9 == 32768 && $7 == -1 && $13 + 0 == $13 { ok++ } END { exit ok == 2 ? 0 : 1 }' <<< "$data" ||
      fail "no numeric bus bandwidth for 32K in: $data"
    # Errors: a usage error is 2, an unusable file 1, each with a reason.
    [ "$(status "$python" "$plot" "$work/run.json")" = 2 ] || fail "no output asked: expected exit 2"
    [ "$(status "$python" "$plot" --csv - --reference fast "$work/run.json")" = 2 ] ||
      fail "--reference without a number: expected exit 2"
    [ "$(status "$python" "$plot" --csv - --label a --label b "$work/run.json")" = 2 ] || fail "label count: expected 2"
    [ "$(status "$python" "$plot" --csv - "$work/missing.json")" = 1 ] || fail "missing file: expected 1"
    [ "$(status "$python" "$plot" --csv - --type half "$work/run.json")" = 1 ] || fail "empty filter: expected 1"
    grep -q 'nothing matches the filters (the file has: float/sum/root -1)' "$work/out.txt" ||
      fail "empty filter message: $(cat "$work/out.txt")"
    # Without matplotlib (-S hides site and dist-packages) a PNG is refused in one line, status 2.
    if ! "$python" -S -c 'import matplotlib' 2> /dev/null; then
      [ "$(status "$python" -S "$plot" -o "$work/x.png" "$work/run.json")" = 2 ] || fail "no matplotlib: expected 2"
      [ "$(wc -l < "$work/out.txt")" -eq 1 ] && grep -q matplotlib "$work/out.txt" ||
        fail "no matplotlib: expected one line naming it, got: $(cat "$work/out.txt")"
    fi
    echo "PASS: CSV of $(wc -l <<< "$data") points and the error paths"
    ;;
  png)
    if ! "$python" -c 'import matplotlib' 2> /dev/null; then
      echo "SKIP: matplotlib is not importable by $python (apt-get install python3-matplotlib)"
      exit 77
    fi
    "$python" "$plot" -o "$work/busbw.png" --label "2 threads" --reference "1.25:link rate" "$work/run.json" ||
      fail "braid_plot -o exited $?"
    [ -s "$work/busbw.png" ] || fail "no PNG written"
    signature=$(head -c 8 "$work/busbw.png" | od -An -tx1 | tr -d ' \n')
    [ "$signature" = 89504e470d0a1a0a ] || fail "not a PNG (starts with $signature)"
    echo "PASS: $(wc -c < "$work/busbw.png") bytes of PNG"
    ;;
  *)
    fail "unknown mode $mode"
    ;;
esac
