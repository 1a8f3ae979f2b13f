#!/usr/bin/env bash
# Creates (or completes) the Python virtual environment of the PyTorch backend and its
# examples, outside the checkout so that every clone on the machine shares it:
#   ${BRAID_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/braid/venv}
# made by Debian's /usr/bin/python3 -m venv, with the pins of scripts/python-requirements.txt.
# When every pinned package is there at its version it returns at once, without asking pip
# (no network); otherwise pip installs only what is missing or at another version.
# CMake finds the same path (integrations/pytorch/CMakeLists.txt), so nothing needs activating.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
requirements="$here/python-requirements.txt"
venv="${BRAID_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/braid/venv}"
python=/usr/bin/python3

mkdir -p "$(dirname "$venv")"
# Two clones installing at once would race in pip; the second waits, then finds all there.
exec 9>"$venv.lock"
flock 9

if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import sys' 2>/dev/null; then
  echo "python-venv: creating $venv"
  rm -rf "$venv"
  "$python" -m venv "$venv"
fi

# Prints the pinned requirements that are not installed at their version, one a line.
missing=$("$venv/bin/python" - "$requirements" <<'PY'
import sys
from importlib import metadata
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if not line:
        continue
    name, version = line.split("==")
    try:
        if metadata.version(name) == version:
            continue
    except metadata.PackageNotFoundError:
        pass
    print(line)
PY
)
if [ -z "$missing" ]; then
  echo "python-venv: all pinned packages present in $venv"
  exit 0
fi
echo "python-venv: installing into $venv:" $missing
pip=("$venv/bin/python" -m pip install --disable-pip-version-check --no-input -q)
first=$(grep -v '^deepspeed==' <<<"$missing" || true)
if [ -n "$first" ]; then
  # shellcheck disable=SC2086  # one argument per requirement
  "${pip[@]}" $first
fi
if grep -q '^deepspeed==' <<<"$missing"; then
  # After torch, with every pin as a constraint, so that its build cannot bring another torch.
  "${pip[@]}" -c <(grep -v '^deepspeed==' "$requirements") "$(grep '^deepspeed==' <<<"$missing")"
fi
echo "python-venv: done"
