#!/usr/bin/env bash
# Fails when a layer of src/ includes a higher one, or a layer beside it: dependencies point
# down only (docs/design.md, "Layers"). A folder of src/ that the list below does not name
# fails too, so that the list stays complete.
#   scripts/check-layers.sh          check, print the violations
#   scripts/check-layers.sh --list   print the layers, top first
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root/src"

# Top first. Folders on one line are one layer: neither may include the other.
layers=(
  "api"
  "core"
  "exec"
  "transport topology"
  "planning"
  "kernels bootstrap"
  "platform"
  "util"
)

layer_list() { printf '%s\n' "${layers[@]}" | sed 's/ /, /g' | paste -sd'>' | sed 's/>/ -> /g'; }
if [ "${1:-}" = "--list" ]; then
  layer_list
  exit 0
fi

declare -A rank
for i in "${!layers[@]}"; do
  for folder in ${layers[$i]}; do rank[$folder]=$i; done
done

status=0
for dir in */; do
  dir=${dir%/}
  if [ -z "${rank[$dir]+set}" ]; then
    echo "check-layers: src/$dir is in no layer (add it to scripts/check-layers.sh and docs/design.md)"
    status=1
  fi
done

# file:line:#include "folder/...": project headers only (nccl.h and braid/ are the public API).
while IFS= read -r hit; do
  file=${hit%%:*}
  rest=${hit#*:}
  line=${rest%%:*}
  target=$(sed -E 's/.*#include "([^"]+)".*/\1/' <<<"$rest")
  [[ $target == */* ]] || continue
  from=${file%%/*}
  to=${target%%/*}
  [ "$from" = "$to" ] && continue
  [ -n "${rank[$to]+set}" ] || continue  # braid/..., generated headers
  [ -n "${rank[$from]+set}" ] || continue  # reported above
  if [ "${rank[$to]}" -le "${rank[$from]}" ]; then
    if [ "${rank[$to]}" -eq "${rank[$from]}" ]; then how="beside it"; else how="above it"; fi
    echo "check-layers: src/$file:$line: $from includes $target ($to is $how)"
    status=1
  fi
done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' --include='*.h' --include='*.cc' \
           --include='*.cu' --include='*.cuh' --include='*.in' . | sed 's|^\./||')

if [ "$status" -eq 0 ]; then
  echo "check-layers: every include points down ($(layer_list))"
fi
exit $status
