#!/usr/bin/env bash
# torchrun across two "hosts": network namespaces joined by a veth pair (198.51.100.0/24,
# as tests/multiproc/netns_hosts.h makes them), each with its own NCCL_HOSTID. One torchrun
# agent per host (--nnodes 2 --nproc_per_node 1), c10d rendezvous on host a, and
# examples/ddp_digits.py on "braid": both ranks say hello, rank 0 reaches the accuracy.
# Skipped (77) where namespaces cannot be made (not root, no ip).
#   test_torchrun_netns.sh PYTHON
set -uo pipefail
python=$1
root=$(cd "$(dirname "$0")/../../.." && pwd)
"$python" -c 'import torch, sklearn' 2>/dev/null || { echo "SKIP: torch or sklearn is not importable"; exit 77; }
tag=$(($$ % 100000))
a="braidt${tag}a" b="braidt${tag}b"
tmp=$(mktemp -d)
cleanup() {
  for p in $(jobs -p); do kill "$p" 2>/dev/null; done
  ip netns del "$a" 2>/dev/null
  ip netns del "$b" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
if ! { ip netns add "$a" && ip netns add "$b" &&
  ip link add "bt${tag}a" type veth peer name "bt${tag}b" &&
  ip link set "bt${tag}a" netns "$a" && ip link set "bt${tag}b" netns "$b" &&
  ip -n "$a" addr add 198.51.100.1/24 dev "bt${tag}a" && ip -n "$b" addr add 198.51.100.2/24 dev "bt${tag}b" &&
  ip -n "$a" link set lo up && ip -n "$b" link set lo up &&
  ip -n "$a" link set "bt${tag}a" up && ip -n "$b" link set "bt${tag}b" up; } 2>"$tmp/ip.err"; then
  echo "SKIP: cannot make network namespaces: $(cat "$tmp/ip.err")"
  exit 77
fi

start=$(date +%s.%N)
for host in a b; do
  # The hosts share the machine's hostname, which names neither veth address: is_host
  # says which agent serves the rendezvous store, --local-addr what the workers connect to.
  ns=$a is_host=true addr=198.51.100.1
  [ "$host" = b ] && ns=$b is_host=false addr=198.51.100.2
  ip netns exec "$ns" env NCCL_HOSTID="host-$host" OMP_NUM_THREADS=1 BRAID_EXAMPLE_EPOCHS=2 \
    "$python" -m torch.distributed.run --nnodes 2 --nproc_per_node 1 --rdzv-backend c10d \
    --rdzv-endpoint 198.51.100.1:29400 --rdzv-id "braid-$tag" --rdzv-conf "timeout=60,is_host=$is_host" --local-addr "$addr" \
    "$root/examples/ddp_digits.py" --metrics "$tmp/metrics.json" >"$tmp/$host.log" 2>&1 &
done
status=0
for p in $(jobs -p); do
  wait "$p" || status=1
done
took=$(echo "$(date +%s.%N) - $start" | bc)
fail() {
  echo "FAIL: $1"
  for host in a b; do echo "--- host $host:"; tail -40 "$tmp/$host.log"; done
  exit 1
}
[ "$status" = 0 ] || fail "a torchrun exited with an error"
for r in 0 1; do
  grep -q "hello from rank $r/2 on " "$tmp/a.log" "$tmp/b.log" || fail "no hello from rank $r"
done
"$python" - "$tmp/metrics.json" <<'PY' || fail "did not learn"
import json, sys
history = json.load(open(sys.argv[1]))["history"]
print(f"test accuracy {history[-1]['accuracy']:.3f} after {len(history)} epochs")
sys.exit(0 if history[-1]["accuracy"] >= 0.7 else 1)
PY
echo "PASS: torchrun --nnodes 2 across two network namespaces in ${took} s"
