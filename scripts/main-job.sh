#!/usr/bin/env bash
# The main job: build, then run across 4 local ranks with braidrun. Until the data path
# exists this is braid-hello (every rank forms the communicator and says hello).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/build.sh" "$root/build"
"$root/build/tools/braidrun/braidrun" -n 4 "$root/build/tools/hello/braid-hello"
