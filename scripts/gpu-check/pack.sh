#!/usr/bin/env bash
# Packs what the GPU check (run.sh) needs into one folder that can travel to a GPU machine
# whose image is not Debian 12 (docs/gpu.md, "Running the GPU tests"):
#   scripts/gpu-check/pack.sh BUILD_DIR [OUT_DIR]      (OUT_DIR default: .gpu in the checkout)
# With NCCL_TESTS_BIN set to a folder of nccl-tests programs built for that GPU (MPI=0,
# libnccl.so.2 linked dynamically), they travel too and run.sh runs them (docs/gpu.md).
# BUILD_DIR is a CUDA build with kernels for that machine's GPU, e.g.
#   BRAID_CUDA_ARCHITECTURES=90 BRAID_TARGETS="nccl gpu_mode_test" scripts/build.sh build-sm90
# Besides Braid's library and the GPU suite it takes the Debian libraries they link that
# another distribution may lack or have at another version (hwloc, libxml2 with its ICU, the
# CUDA runtime the test links); xz keeps it small enough to carry (about 25 MB).
set -euo pipefail
build=${1:?usage: pack.sh BUILD_DIR [OUT_DIR]}
here=$(cd "$(dirname "$0")" && pwd)
out=${2:-$here/../../.gpu}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/lib" "$out"
cp -L "$build/src/libnccl.so.2" "$stage/lib/"
cp "$build/tests/gpu/gpu_mode_test" "$stage/"
strip --strip-debug "$stage/gpu_mode_test" "$stage/lib/libnccl.so.2"
for lib in libhwloc.so.15 libxml2.so.2 libicuuc.so.72 libicudata.so.72; do
  cp -L "/lib/x86_64-linux-gnu/$lib" "$stage/lib/"
done
cp -L "$(ldd "$build/tests/gpu/gpu_mode_test" | awk '/libcudart/ {print $3}')" "$stage/lib/"
cp "$here"/run.sh "$here"/*.py "$stage/"
if [ -n "${NCCL_TESTS_BIN:-}" ]; then
  mkdir -p "$stage/nccl-tests"
  cp "$NCCL_TESTS_BIN"/*_perf "$stage/nccl-tests/"
  strip --strip-debug "$stage"/nccl-tests/*_perf
fi
tar -C "$stage" -cf - . | xz -T2 -6 >"$out/payload.tar.xz"
cp "$here/run.sh" "$out/run.sh"
echo "pack.sh: $(du -h "$out/payload.tar.xz" | cut -f1) in $out; on the GPU machine: bash $(basename "$out")/run.sh"
