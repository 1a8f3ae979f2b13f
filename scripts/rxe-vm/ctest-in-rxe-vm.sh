#!/usr/bin/env bash
# Runs a build's rdma-labelled tests (the IB backend over real verbs) inside the soft-RoCE
# VM, in one boot: scripts/rxe-vm/ctest-in-rxe-vm.sh BUILD_DIR [ctest args...]
# CTest runs it as the `rxe` test. Exits 77 (skip) with the reason where the VM cannot run
# (no qemu-system-x86 / busybox-static / ..., or the Debian kernel package cannot be
# fetched), else with ctest's exit code. The build tree is the VM's writable share.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR [ctest args...]" >&2; exit 2; }
build=$(cd "$1" && pwd)
shift
if [ -n "${IN_RXE_VM:-}" ]; then
  echo "rxe-vm: SKIP: already inside the VM" >&2
  exit 77
fi
export RXE_VM_CACHE=${RXE_VM_CACHE:-$build/rxe-vm-cache}
rc=0
"$here/run-in-rxe-vm.sh" check || rc=$?
[ "$rc" = 0 ] || exit "$rc"
cd "$build"
# The IbSelection tests use sockets, not verbs: they run outside the VM, not again inside.
RXE_VM_SHARE=$build RXE_VM_TIMEOUT=${RXE_VM_TIMEOUT:-420} \
  exec "$here/run-in-rxe-vm.sh" ctest --test-dir "$build" -L rdma -E '^IbSelection[.]' --output-on-failure --timeout 300 "$@"
