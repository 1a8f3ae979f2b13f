#!/usr/bin/env bash
# cmake --install into a temporary prefix; `import braid_torch` works from there and
# opens the prefix's libnccl.so.2, not the build tree's (torch's own libnccl.so.2, the
# wheel's, is mapped too: it serves the "nccl" backend). The module itself asks the dynamic
# linker for no nccl* symbol: those would bind to torch's library.
set -euo pipefail
build=$1 python=$2 pydir=$3
"$python" -c 'import torch' 2>/dev/null || { echo "SKIP: torch is not importable"; exit 77; }
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
cd /
PYTHONPATH="$prefix/$pydir" "$python" - "$prefix" "$build" <<'PY'
import os, sys
prefix, build = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
import braid_torch
import torch.distributed as dist
assert "BRAID" in dist.Backend._plugins, "the backend is not registered"
module = os.path.realpath(braid_torch._C.__file__)
assert module.startswith(prefix), f"braid_torch loaded from {module}, not from {prefix}"
assert os.path.realpath(braid_torch.LIBRARY).startswith(prefix), f"Braid's library is {braid_torch.LIBRARY}"
libs = {os.path.realpath(l.split()[-1]) for l in open("/proc/self/maps") if "libnccl.so" in l}
ours = [l for l in libs if l.startswith(prefix)]
assert ours, f"no libnccl.so.2 of {prefix} is mapped: {libs}"
assert not [l for l in libs if l.startswith(build + "/")], f"the build tree's is mapped: {libs}"
print(f"PASS: braid_torch from {module}, Braid from {ours[0]}, NCCL API {braid_torch.nccl_version()}")
PY
undefined=$(nm -D --undefined-only "$prefix/$pydir"/braid_torch/_C*.so | grep -E ' (nccl|braid)' || true)
[ -z "$undefined" ] || { echo "FAIL: the module asks the dynamic linker for: $undefined"; exit 1; }
