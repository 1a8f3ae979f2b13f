#!/usr/bin/env bash
# Fetches NVIDIA's nccl.h of each NCCL level the ABI tests compare Braid against, from the
# nvidia-nccl-cu13 wheels on PyPI, into a cache outside the checkout:
#   ~/.cache/braid/nccl-headers/<version>/nccl.h   (BRAID_NCCL_HEADERS_CACHE overrides)
# Only the headers are kept (a wheel is a few hundred MB; it is deleted once unpacked).
# Versions already cached cost nothing. tests/abi skips a level whose header is absent.
#   scripts/fetch-nccl-headers.sh [VERSION...]     (default: the levels tests/abi checks)
set -euo pipefail
cache=${BRAID_NCCL_HEADERS_CACHE:-$HOME/.cache/braid/nccl-headers}
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(2.28.9 2.29.7 2.30.7 2.32.3)
# pip: the project's venv has it (scripts/python-venv.sh); Debian's python3 may not.
venv_python="${BRAID_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/braid/venv}/bin/python"
if [ -x "$venv_python" ]; then python=$venv_python; else python=$(command -v python3 || true); fi
[ -n "$python" ] || { echo "fetch-nccl-headers: python3 is needed (pip download)" >&2; exit 1; }
mkdir -p "$cache"
# A second run at the same time (install-deps in the background, test-all.sh) waits here.
exec 9>"$cache/.lock"
flock 9

for version in "${versions[@]}"; do
  dest=$cache/$version
  if [ -f "$dest/nccl.h" ]; then
    echo "fetch-nccl-headers: $version cached in $dest"
    continue
  fi
  work=$(mktemp -d /tmp/braid-nccl-wheel-XXXXXX)
  trap 'rm -rf "$work"' EXIT
  echo "fetch-nccl-headers: downloading nvidia-nccl-cu13==$version"
  "$python" -m pip download --quiet --no-deps --only-binary=:all: --dest "$work" "nvidia-nccl-cu13==$version"
  wheel=$(ls "$work"/*.whl | head -1)
  mkdir -p "$work/unpacked"
  "$python" -m zipfile -e "$wheel" "$work/unpacked"
  include=$work/unpacked/nvidia/nccl/include
  [ -f "$include/nccl.h" ] || { echo "fetch-nccl-headers: $wheel has no nvidia/nccl/include/nccl.h" >&2; exit 1; }
  mkdir -p "$dest.tmp"
  cp -r "$include"/. "$dest.tmp"/
  rm -rf "$dest" && mv "$dest.tmp" "$dest"
  rm -rf "$work"
  trap - EXIT
  echo "fetch-nccl-headers: $version headers in $dest"
done
