# Shared by the cluster tests (sourced). CTest passes the programs' paths and where the
# setup test records why the cluster cannot run here (BRAID_CLUSTER_SKIP_FILE).
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cluster="$repo/scripts/cluster/cluster.sh"
agent="$repo/scripts/cluster/rsh-agent.sh"
test_name=$(basename "$0" .sh)
test_start=$(date +%s%N)
work=$(mktemp -d "/tmp/braid-cluster-test-$test_name.XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() {
  echo "FAIL: $test_name: $*"
  exit 1
}
skip() {
  echo "SKIP: $test_name: $*"
  exit 77
}
elapsed() {
  local ms=$((($(date +%s%N) - test_start) / 1000000))
  printf '%d.%d' $((ms / 1000)) $((ms % 1000 / 100))
}
pass() {
  echo "PASS: $test_name in $(elapsed) s${1:+: $1}"
  exit 0
}

# The cluster the setup test (cluster.up) started, or a skip with its reason.
require_cluster() {
  if [ -n "${BRAID_CLUSTER_SKIP_FILE:-}" ] && [ -r "$BRAID_CLUSTER_SKIP_FILE" ]; then
    skip "$(cat "$BRAID_CLUSTER_SKIP_FILE")"
  fi
  "$cluster" status >"$work/status" 2>&1 || fail "no cluster is up (cluster.up starts it): $(cat "$work/status")"
  eval "$("$cluster" env)"
}

# expect_in FILE TEXT WHAT: the file holds the text (fixed string), else fail showing it.
expect_in() {
  grep -qF -- "$2" "$1" || {
    echo "--- $1:"
    tail -60 "$1"
    fail "$3: '$2' not found"
  }
}

# count_in FILE TEXT: how many lines hold the text.
count_in() { grep -cF -- "$2" "$1" || true; }

# The Python of the PyTorch virtual environment (scripts/python-venv.sh,
# or made by hand: docs/testing.md) when torch and scikit-learn import there; empty if not.
torch_python() {
  local python="${BRAID_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/braid/venv}/bin/python"
  [ -x "$python" ] && "$python" -c 'import torch, sklearn' 2>/dev/null && echo "$python"
  return 0
}

# The torch.distributed backend examples/ddp_digits.py can use here: braid when the
# braid_torch module of this build imports in that Python, else gloo (the launch is what
# the cluster tests check; integrations/pytorch's own tests check the backend).
ddp_backend() {
  if PYTHONPATH="$BRAID_TORCH_PYTHONPATH" "$1" -c 'import braid_torch' 2>/dev/null; then echo braid; else echo gloo; fi
}

# Checks a digits run: a hello from every rank, and rank 0's metrics showing it learned.
check_digits() {
  local log=$1 metrics=$2 world=$3 r
  for r in $(seq 0 $((world - 1))); do expect_in "$log" "hello from rank $r/$world on " "ddp_digits"; done
  "$4" - "$metrics" <<'PY' >>"$log" 2>&1 || { tail -40 "$log"; fail "ddp_digits did not learn (metrics: $metrics)"; }
import json, sys
history = json.load(open(sys.argv[1]))["history"]
print(f"test accuracy {history[-1]['accuracy']:.3f} after {len(history)} epochs")
sys.exit(0 if history[-1]["accuracy"] >= 0.7 else 1)
PY
}
