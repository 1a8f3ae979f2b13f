#!/usr/bin/env bash
# Installs a build into a temporary prefix and checks what issue #2 promises: headers,
# libnccl.so -> libnccl.so.2 -> libnccl.so.2.<minor>.<patch> with SONAME libnccl.so.2,
# libnccl_static.a, the CMake package (find_package(Braid) -> Braid::nccl) and braid.pc.
#   check_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
source=$2
work=$(mktemp -d /tmp/braid-install-XXXXXX)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(ls -d "$prefix"/lib* | head -1)
fail() { echo "check_install: $*" >&2; exit 1; }

[ -f "$prefix/include/nccl.h" ] || fail "include/nccl.h missing"
[ -f "$prefix/include/braid/launch.h" ] || fail "include/braid/launch.h missing"
[ -f "$prefix/include/braid/version.h" ] || fail "include/braid/version.h missing"
[ -f "$prefix/include/braid/host_mode.h" ] || fail "include/braid/host_mode.h missing"
[ -f "$prefix/include/braid/nccl/nccl_types.h" ] || fail "include/braid/nccl/nccl_types.h (a piece of nccl.h) missing"
[ -f "$libdir/libnccl_static.a" ] || fail "libnccl_static.a missing"
[ "$(readlink "$libdir/libnccl.so")" = "libnccl.so.2" ] || fail "libnccl.so does not point to libnccl.so.2"
real=$(readlink "$libdir/libnccl.so.2")
[[ "$real" =~ ^libnccl\.so\.2\.[0-9]+\.[0-9]+$ ]] || fail "libnccl.so.2 points to '$real'"
soname=$(readelf -d "$libdir/$real" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = "libnccl.so.2" ] || fail "SONAME is '$soname'"
# Only the API is exported.
leaked=$(nm -D --defined-only "$libdir/$real" | awk '{print $3}' | grep -v -E '^(p?nccl|braid)' || true)
[ -z "$leaked" ] || fail "symbols exported beyond nccl*/pnccl*/braid*: $(echo $leaked | head -c 300)"
[ -x "$prefix/bin/braidrun" ] || fail "bin/braidrun missing"

# find_package(Braid), shared and static.
cmake -S "$source/tests/install/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/consumer" >/dev/null
"$work/consumer/consumer"
"$work/consumer/consumer_static"

# pkg-config.
export PKG_CONFIG_PATH=$libdir/pkgconfig
cc "$source/tests/install/consumer/main.c" -o "$work/pc_consumer" $(pkg-config --cflags --libs braid) \
  -Wl,-rpath,"$libdir"
"$work/pc_consumer"
echo "check_install: all installed pieces present and usable"
