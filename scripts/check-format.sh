#!/usr/bin/env bash
# Fails when a C/C++/CUDA source differs from clang-format's output (.clang-format).
#   scripts/check-format.sh        check
#   scripts/check-format.sh --fix  rewrite the files in place
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if ! command -v clang-format >/dev/null; then
  echo "check-format: clang-format is not installed (scripts/install-deps.sh installs it)" >&2
  exit 1
fi
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.h' '*.cc' '*.c' '*.cu' '*.cuh' 2>/dev/null || find include src tools tests bench -name '*.[ch]' -o -name '*.cc' -o -name '*.cu')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
bad=0
for f in "${files[@]}"; do
  if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
    echo "check-format: $f is not formatted (run scripts/check-format.sh --fix)"
    bad=1
  fi
done
exit $bad
