#!/usr/bin/env bash
# cmake --install into a temporary prefix; `import braid_torch` works from there and
# loads the prefix's libnccl.so.2, not the build tree's.
set -euo pipefail
build=$1 python=$2 pydir=$3
"$python" -c 'import torch' 2>/dev/null || { echo "SKIP: torch is not importable"; exit 77; }
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
cd /
PYTHONPATH="$prefix/$pydir" "$python" - "$prefix" <<'PY'
import os, sys
prefix = os.path.realpath(sys.argv[1])
import braid_torch
import torch.distributed as dist
assert "BRAID" in dist.Backend._plugins, "the backend is not registered"
module = os.path.realpath(braid_torch._C.__file__)
assert module.startswith(prefix), f"braid_torch loaded from {module}, not from {prefix}"
libs = [l.split()[-1] for l in open("/proc/self/maps") if "libnccl.so" in l]
assert libs and all(os.path.realpath(l).startswith(prefix) for l in libs), f"libnccl loaded from {set(libs)}"
print(f"PASS: braid_torch from {module}, libnccl from {sorted(set(libs))[0]}, NCCL API {braid_torch.nccl_version()}")
PY
