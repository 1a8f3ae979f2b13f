#!/usr/bin/env bash
# Checks that every CUDA kernel GPU mode can ask for was really instantiated: for each
# generated collective_kernels_<type>.cu.o, every schedule x reduction x protocol
# (SumPostDiv for integer types only; Hier's for sum, prod, max and min only, and no
# more) and the type's one-rank kernels; the four
# byte-moving data kernels and the two point-to-point kernels. The evidence is the
# host-side launch stub nvcc emits per kernel: a kernel without one cannot be launched.
# (This toolkit has no cuobjdump; nm reads the host stubs.)
#
# usage: check_kernel_instances.sh NM TYPES OBJECT...
#   TYPES: the comma-separated BRAID_CUDA_KERNEL_TYPES the build was configured with.
set -euo pipefail
nm_tool=$1 types=$2
shift 2

schedules=4            # DeviceSchedule: RingAllReduce, TreeAllReduce, RingReduceScatter, RingReduce
hier_schedule=4        # DeviceSchedule::HierAllReduce: Sum, Prod, Max and Min only
hier_ops=(0 1 2 3)
float_ops=(0 1 2 3 4)  # RedOpKind: Sum, Prod, Max, Min, PreMulSum
int_ops=(0 1 2 3 4 5)  # ... and SumPostDiv (integer average)
protocols=(LlProtocol SimpleProtocol)

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

expected_for() {  # every "schedule op protocol" a type's object must hold (unsorted)
  local -a ops
  if [[ $1 == *int* ]]; then ops=("${int_ops[@]}"); else ops=("${float_ops[@]}"); fi
  for ((s = 0; s < schedules; ++s)); do
    for o in "${ops[@]}"; do
      for p in "${protocols[@]}"; do echo "$s $o $p"; done
    done
  done
  for o in "${hier_ops[@]}"; do
    for p in "${protocols[@]}"; do echo "$hier_schedule $o $p"; done
  done
}

found_in() {  # "schedule op protocol" of every collectiveKernel launch stub in an object
  "$nm_tool" -C "$1" | sed -n \
    's/.* [tT] void braid::collectiveKernel<(braid::DeviceSchedule)\([0-9]\), \(.*\), (braid::RedOpKind)\([0-9]\), braid::\([A-Za-z]*\)>(braid::DeviceCollArgs)$/\1 \3 \4|\2/p' |
    sort -u
}

declare -A object_of
data_object=""
for object in "$@"; do
  name=$(basename "$object")
  case $name in
    collective_kernels_*.cu.o) t=${name#collective_kernels_}; object_of[${t%.cu.o}]=$object ;;
    data_kernels.cu.o) data_object=$object ;;
  esac
done

checked=0
IFS=',' read -r -a type_list <<<"$types"
for t in "${type_list[@]}"; do
  object=${object_of[$t]:-}
  if [[ -z $object ]]; then fail "no object for element type $t"; continue; fi
  found=$(found_in "$object")
  cxx_types=$(cut -d'|' -f2 <<<"$found" | sort -u)
  if [[ $(wc -l <<<"$cxx_types") -ne 1 ]]; then fail "$t: kernels for several element types: $cxx_types"; fi
  missing=$(comm -23 <(expected_for "$t" | sort) <(cut -d'|' -f1 <<<"$found" | sort -u))
  extra=$(comm -13 <(expected_for "$t" | sort) <(cut -d'|' -f1 <<<"$found" | sort -u))
  if [[ -n $extra ]]; then fail "$t ($cxx_types): unexpected schedule/op/protocol: $(tr '\n' ',' <<<"$extra")"; fi
  if [[ -n $missing ]]; then fail "$t ($cxx_types): missing schedule/op/protocol: $(tr '\n' ',' <<<"$missing")"; fi
  # One-rank kernels: PreMulSum for every type, SumPostDiv for the integers.
  local_ops=$("$nm_tool" -C "$object" | sed -n 's/.* [tT] void braid::localKernel<.*, (braid::RedOpKind)\([0-9]\)>(braid::DeviceLocalArgs)$/\1/p' | sort -u | tr '\n' ' ')
  if [[ $t == *int* ]]; then want_local="4 5 "; else want_local="4 "; fi
  [[ $local_ops == "$want_local" ]] || fail "$t: one-rank kernels for ops '$local_ops', expected '$want_local'"
  checked=$((checked + $(wc -l <<<"$found")))
done

if [[ -z $data_object ]]; then
  fail "no data_kernels.cu.o"
else
  data=$("$nm_tool" -C "$data_object" | grep -c ' [tT] void braid::dataKernel<\(true\|false\), braid::[A-Za-z]*>(braid::DeviceCollArgs)$' || true)
  [[ $data -eq 4 ]] || fail "data kernels: $data of 4 (Broadcast and AllGather x LL and Simple)"
  p2p=$("$nm_tool" -C "$data_object" | grep -c ' [tT] void braid::p2pKernel<[0-9]*>(braid::DeviceP2pArgs<[0-9]*>)$' || true)
  [[ $p2p -eq 2 ]] || fail "point-to-point kernels: $p2p of 2 (small and large batches)"
fi

echo "checked $checked collective kernels over ${#type_list[@]} element types, their one-rank kernels, and the data and point-to-point kernels"
[[ $failures -eq 0 ]]
