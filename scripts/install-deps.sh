#!/usr/bin/env bash
# Installs what building and testing Braid needs on Debian 12 (as root, or with sudo).
# Skips apt entirely when everything is already there, so repeated runs cost nothing.
#   --rxe  also what the soft-RoCE VM of the IB tests needs (ctest -L rxe; docs/testing.md)
#   --python-in-background  do the downloads below in the background (test-all.sh waits
#          for them just before the build that needs them, so they overlap the other builds)
# Then the Python virtual environment of the PyTorch backend (scripts/python-venv.sh, about
# 2.7 GB from PyPI the first time) and NVIDIA's headers for the ABI tests.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rxe=0
background=0
for arg in "$@"; do
  case "$arg" in
    --rxe) rxe=1 ;;
    --python-in-background) background=1 ;;
    *) echo "install-deps: unknown argument $arg (--rxe, --python-in-background)" >&2; exit 2 ;;
  esac
done

packages=(
  build-essential cmake pkg-config ninja-build
  # Build speed (cmake/BraidToolchain.cmake): a compiler cache and a fast linker.
  ccache mold
  libgtest-dev libgmock-dev libbenchmark-dev
  libhwloc-dev libibverbs-dev libxml2-dev
  # TLS for Braid's TCP traffic (ncclSetEncryption); the openssl tool is not needed.
  libssl-dev
  # hwloc's plugins: full XML import (libxml2: hwloc XML files with comments, from other
  # tools) and PCI discovery (GPUs and NICs on the live machine). Debian only recommends them.
  libhwloc-plugins
  iproute2 clang-format python3-matplotlib
  clang libclang-rt-dev
  # The PyTorch backend (integrations/pytorch): a virtual environment made by Debian's
  # Python (scripts/python-venv.sh installs torch from PyPI into it) and the headers the
  # extension is compiled with.
  python3-venv python3-dev
  # The virtual cluster (scripts/cluster, ctest -L cluster): Slurm's controller, node
  # daemon and commands, munge, and Open MPI's mpirun. Their services are not started
  # here: the harness starts its own, with its own configuration and key.
  slurmd slurmctld slurm-client munge openmpi-bin
)
if [ "$rxe" = 1 ]; then
  # QEMU and an initramfs toolbox for the guest; the rxe provider of libibverbs.
  packages+=(qemu-system-x86 busybox-static cpio kmod xz-utils ibverbs-providers)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# NVIDIA's nccl.h of each level tests/abi compares against (pip download into a cache
# outside the checkout; BRAID_SKIP_NCCL_HEADERS=1 skips it, and the ABI tests then skip).
fetch_headers() {
  if [ "${BRAID_SKIP_NCCL_HEADERS:-0}" = 1 ]; then return 0; fi
  bash "$(dirname "$0")/fetch-nccl-headers.sh" || echo "install-deps: NVIDIA's headers not fetched; tests/abi skips them"
}

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
else
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  echo "install-deps: installing ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# The venv first: its pip fetches the headers too (Debian's python3 may lack pip).
python_setup() {
  bash "$here/python-venv.sh"
  fetch_headers
}
if [ "$background" = 1 ]; then
  log="${XDG_CACHE_HOME:-$HOME/.cache}/braid/python-setup.log"
  mkdir -p "$(dirname "$log")"
  # Both scripts hold a lock while they work, so a second run (test-all.sh's) waits for this
  # one and then finds everything there, or does what it left undone and shows the errors.
  (python_setup >"$log" 2>&1 &)
  echo "install-deps: the Python venv and NVIDIA's headers are being set up in the background ($log)"
else
  python_setup
fi
