#!/usr/bin/env bash
# run-in-rxe-vm.sh - run a command inside a throwaway QEMU guest that has a real
# Soft-RoCE (rdma_rxe) device "rxe0", using the host's own userspace. Uses KVM where the
# host has real VT-x/AMD-V, otherwise TCG (software emulation; the case on PVM hosts).
#
#   run-in-rxe-vm.sh setup            apt-get install the host packages it needs
#   run-in-rxe-vm.sh check            exit 0 when the VM can run here, 77 (and why) when not
#   run-in-rxe-vm.sh build            download the Debian kernel, build the initramfs (cached)
#   run-in-rxe-vm.sh [--] CMD ARGS... boot the guest, create rxe0, run CMD, power off,
#                                     print its output, exit with its exit code
#
# Exit codes of its own: 77 the VM cannot run here (a host package or the kernel package
# is unavailable: CTest's SKIP_RETURN_CODE), 124 timeout, 125 the VM itself failed.
#
# Braid's copy of the runner first written in shared/rxe-vm (see docs/testing.md, "IB
# tests in the soft-RoCE VM"). CTest runs it as the `rxe` test (tests/rxe).
#
# The guest kernel is Debian's generic linux-image-amd64 (the -cloud flavour has no
# rdma_rxe.ko). Its initramfs only holds busybox + the needed modules; the guest then
# mounts the HOST's root filesystem read-only over virtio-9p and chroots into it, so
# ibverbs-utils, rdma-core providers, perftest and your freshly built test binaries are
# all used straight from the host. The guest has no network card at all (-nic none).
#
# Environment:
#   RXE_VM_TIMEOUT   wall-clock limit for the whole VM run, seconds (default 600)
#   RXE_VM_MEM       guest memory in MiB (default 2048)
#   RXE_VM_CPUS      guest vCPUs (default: host's nproc)
#   RXE_VM_SHARE     host dir mounted WRITABLE at the same path in the guest (default $PWD;
#                    empty = none; everything else of / is visible read-only)
#   RXE_VM_NETDEV    dummy (default) | lo | none   (see guest-rxe-setup.sh)
#   RXE_VM_ACCEL     auto (default) | kvm | tcg
#   RXE_VM_PASSENV   space-separated names of host env vars to export into the guest
#   RXE_VM_CACHE     cache dir (default: build/rxe-vm-cache under the repository)
#   RXE_VM_KERNEL_PKG  kernel meta package (default linux-image-amd64)
#   RXE_VM_KBOOT     pvh (default: boot the uncompressed vmlinux) | bzimage
#   RXE_VM_MACHINE   q35 (default) | pc
#   RXE_VM_TCG_CPU   CPU model under TCG (default max)
#   RXE_VM_VERBOSE=1 also print the guest console (kernel log) afterwards
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${RXE_VM_CACHE:-$(cd "$HERE/../.." && pwd)/build/rxe-vm-cache}
TIMEOUT=${RXE_VM_TIMEOUT:-600}
MEM=${RXE_VM_MEM:-2048}
CPUS=${RXE_VM_CPUS:-$(nproc)}
SHARE=${RXE_VM_SHARE-$PWD}
NETDEV=${RXE_VM_NETDEV:-dummy}
ACCEL=${RXE_VM_ACCEL:-auto}
KPKG=${RXE_VM_KERNEL_PKG:-linux-image-amd64}
MACHINE=${RXE_VM_MACHINE:-q35}
KBOOT=${RXE_VM_KBOOT:-pvh}          # pvh: boot the uncompressed vmlinux (skips the slow xz
                                    # decompression under TCG); bzimage: the packaged vmlinuz
TCG_CPU=${RXE_VM_TCG_CPU:-max}
# modules to load in the guest (dependencies are resolved with modprobe --show-depends)
MODULES="virtio_pci 9pnet_virtio 9p crc32_generic crc32_pclmul rdma_rxe ib_uverbs rdma_ucm ib_umad dummy veth"
HOST_PKGS="qemu-system-x86 busybox-static cpio kmod xz-utils iproute2 rdma-core ibverbs-providers ibverbs-utils perftest rdmacm-utils"

say() { echo "rxe-vm: $*" >&2; }
die() { say "ERROR: $*"; exit 125; }
skip() { say "SKIP: $*"; exit 77; }

cmd_setup() {
    [ "$(id -u)" = 0 ] || die "setup needs root (apt-get)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $HOST_PKGS
}

check_host() {
    local missing=""
    command -v qemu-system-x86_64 >/dev/null || missing+=" qemu-system-x86"
    { [ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1; } || missing+=" busybox-static"
    command -v cpio >/dev/null || missing+=" cpio"
    command -v depmod >/dev/null || missing+=" kmod"
    command -v xz >/dev/null || missing+=" xz-utils"
    command -v rdma >/dev/null || missing+=" iproute2"
    [ -e /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so ] || ls /usr/lib/*/libibverbs/librxe-*.so >/dev/null 2>&1 || missing+=" ibverbs-providers"
    [ -z "$missing" ] || skip "missing host packages:$missing (run: $0 setup, or scripts/install-deps.sh --rxe)"
}

# ---- kernel: cache/kernel/{vmlinuz,VERSION,modules/...,modules.list} ----
build_kernel() {
    local kdir=$CACHE/kernel
    [ -f "$kdir/DONE" ] && return 0
    mkdir -p "$CACHE"
    local pkg
    pkg=$(apt-cache depends "$KPKG" 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}' || true)
    [ -n "$pkg" ] || skip "cannot resolve the kernel package $KPKG (run apt-get update; offline?)"
    say "downloading $pkg ..."
    local tmp; tmp=$(mktemp -d "$CACHE/ktmp.XXXXXX")
    ( cd "$tmp" && apt-get download -q "$pkg" 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2 ) || { rm -rf "$tmp"; skip "apt-get download $pkg failed (offline?)"; }
    ls "$tmp"/*.deb >/dev/null 2>&1 || { rm -rf "$tmp"; skip "apt-get download $pkg gave no package (offline?)"; }
    local deb; deb=$(ls "$tmp"/*.deb)
    say "$(basename "$deb"): $(du -m "$deb" | cut -f1) MB; extracting"
    mkdir "$tmp/x" && dpkg-deb -x "$deb" "$tmp/x"
    local kv; kv=$(ls "$tmp/x/lib/modules")
    depmod -b "$tmp/x" "$kv"
    rm -rf "$kdir.new"; mkdir -p "$kdir.new/modules"
    cp "$tmp/x/boot/vmlinuz-$kv" "$kdir.new/vmlinuz"
    # uncompressed ELF vmlinux (has a PVH note) for direct boot: Debian compresses with xz
    local off; off=$(LC_ALL=C grep -obUaP '\xFD7zXZ\x00' "$kdir.new/vmlinuz" | head -1 | cut -d: -f1)
    if [ -n "$off" ]; then
        tail -c +$((off + 1)) "$kdir.new/vmlinuz" > "$tmp/vmlinux.xz"
        xz -dc --single-stream "$tmp/vmlinux.xz" > "$kdir.new/vmlinux" 2>/dev/null || rm -f "$kdir.new/vmlinux"
    fi
    echo "$kv" > "$kdir.new/VERSION"
    local m line path params seen=" "
    : > "$kdir.new/modules.list"
    for m in $MODULES; do
        while read -r line; do
            case "$line" in insmod\ *) ;; *) continue ;; esac
            line=${line#insmod }
            path=${line%% *}; params=""
            [ "$path" != "$line" ] && params=${line#* }
            path=${path#"$tmp/x/lib/modules/$kv/"}
            case "$seen" in *" $path "*) continue ;; esac
            seen+="$path "
            mkdir -p "$kdir.new/modules/$(dirname "$path")"
            cp "$tmp/x/lib/modules/$kv/$path" "$kdir.new/modules/$path"
            echo "$path $params" >> "$kdir.new/modules.list"
        done < <(modprobe -d "$tmp/x" -S "$kv" -C /dev/null --show-depends "$m")
    done
    grep -q rdma_rxe.ko "$kdir.new/modules.list" || die "rdma_rxe.ko not in $pkg"
    rm -rf "$tmp" "$kdir"; mv "$kdir.new" "$kdir"; touch "$kdir/DONE"
    say "kernel $kv cached ($(du -sh "$kdir" | cut -f1))"
}

build_initramfs() {
    local kdir=$CACHE/kernel key
    key=$(cat "$kdir/VERSION" "$kdir/modules.list" "$HERE/guest-init.sh" /bin/busybox | sha256sum | cut -c1-12)
    INITRD=$CACHE/initramfs-$key.cpio.gz
    [ -f "$INITRD" ] && return 0
    local st; st=$(mktemp -d "$CACHE/initrd.XXXXXX")
    mkdir -p "$st/bin" "$st/lib"
    cp /bin/busybox "$st/bin/busybox"
    cp "$HERE/guest-init.sh" "$st/init"; chmod 755 "$st/init"
    cp -r "$kdir/modules" "$st/lib/modules"
    cp "$kdir/modules.list" "$st/modules.list"
    ( cd "$st" && find . | cpio -o -H newc --quiet | gzip -1 ) > "$INITRD.tmp"
    find "$CACHE" -maxdepth 1 -name 'initramfs-*.cpio.gz' ! -name "$(basename "$INITRD").tmp" -delete
    mv "$INITRD.tmp" "$INITRD"; rm -rf "$st"
    say "initramfs $(basename "$INITRD") ($(du -k "$INITRD" | cut -f1) KiB)"
}

pick_accel() {
    case "$ACCEL" in
        kvm) echo "-accel kvm -cpu host" ;;
        tcg) echo "-accel tcg,thread=multi -cpu $TCG_CPU" ;;
        auto)
            # Use KVM only with real VT-x/AMD-V. On hosts whose /dev/kvm is backed by PVM
            # (kvm_pvm module, no vmx/svm cpu flag) a stock kernel boots >100x slower than
            # under TCG (it needs a PVM-enabled guest kernel), so TCG is the right choice there.
            if grep -qwE 'vmx|svm' /proc/cpuinfo && [ -r /dev/kvm ] && [ -w /dev/kvm ] &&
               echo quit | timeout 20 qemu-system-x86_64 -accel kvm -M none -display none \
                   -nodefaults -no-user-config -monitor stdio >/dev/null 2>&1; then
                echo "-accel kvm -cpu host"
            else
                [ -d /sys/module/kvm_pvm ] && say "/dev/kvm is PVM-backed (no vmx/svm): using TCG"
                echo "-accel tcg,thread=multi -cpu $TCG_CPU"
            fi ;;
        *) die "RXE_VM_ACCEL must be auto|kvm|tcg" ;;
    esac
}

cmd_run() {
    [ $# -gt 0 ] || die "no command given"
    check_host
    build_kernel
    build_initramfs
    local run; run=$(mktemp -d "${TMPDIR:-/tmp}/rxe-vm.XXXXXX")
    trap 'rm -rf "$run"' EXIT
    if [ -n "$SHARE" ]; then
        SHARE=$(cd "$SHARE" && pwd -P)
        [ "$SHARE" != / ] || die "RXE_VM_SHARE=/ is not allowed"
    fi
    printf 'RXE_VM_SHARE=%q\n' "$SHARE" > "$run/config.env"
    cp "$HERE/guest-rxe-setup.sh" "$run/rxe-setup.sh"
    {
        echo '#!/bin/bash'
        # HOME on a tmpfs: the host's / (and so /root) is read-only in the guest
        echo 'export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp LANG=C.UTF-8 TERM=dumb'
        printf 'export RXE_VM_NETDEV=%q IN_RXE_VM=1\n' "$NETDEV"
        local v
        for v in ${RXE_VM_PASSENV:-}; do
            [ -n "${!v+x}" ] && printf 'export %s=%q\n' "$v" "${!v}"
        done
        echo '. /run/rxe-vm/rxe-setup.sh'
        echo 'rxe_vm_setup || { echo "rxe-vm: rxe setup failed" >&2; exit 126; }'
        printf 'cd %q || exit 126\n' "$PWD"
        printf '%q ' "$@"; echo
    } > "$run/job.sh"

    local accel; accel=$(pick_accel)
    : > "$run/output.log"
    local t0 rc=0; t0=$(date +%s%N)
    # shellcheck disable=SC2086
    local kimg=$CACHE/kernel/vmlinuz
    [ "$KBOOT" = pvh ] && [ -f "$CACHE/kernel/vmlinux" ] && kimg=$CACHE/kernel/vmlinux
    timeout -k 10 "$TIMEOUT" qemu-system-x86_64 $accel -M "$MACHINE" -m "$MEM" -smp "$CPUS" \
        -nodefaults -no-user-config -display none -nic none -no-reboot \
        -kernel "$kimg" -initrd "$INITRD" \
        -append "console=ttyS0 quiet loglevel=4 panic=-1 rdinit=/init" \
        -serial "file:$run/console.log" -serial "file:$run/output.log" \
        -virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
        -virtfs "local,path=$run,mount_tag=rxeout,security_model=none" \
        ${SHARE:+-virtfs "local,path=$SHARE,mount_tag=share,security_model=none,multidevs=remap"} \
        </dev/null >"$run/qemu.log" 2>&1 &
    local qpid=$!
    tail -s 0.2 -n +1 -f --pid=$qpid "$run/output.log" &
    local tpid=$!
    wait $qpid || rc=$?
    wait $tpid 2>/dev/null || true
    local wall_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    local wall; wall=$(printf '%d.%03d' $((wall_ms / 1000)) $((wall_ms % 1000)))
    if [ "${RXE_VM_VERBOSE:-0}" = 1 ]; then
        say "---- guest console ----"; cat "$run/console.log" >&2; cat "$run/qemu.log" >&2
    fi
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        say "TIMEOUT after ${TIMEOUT}s; guest console tail:"; tail -n 30 "$run/console.log" >&2
        exit 124
    fi
    if [ ! -f "$run/rc" ]; then
        say "guest did not report an exit code (qemu rc=$rc); console tail:"
        tail -n 30 "$run/console.log" >&2; tail -n 10 "$run/qemu.log" >&2
        exit 125
    fi
    local grc; grc=$(cat "$run/rc")
    say "exit code $grc (VM wall ${wall}s; guest uptime at job start $(cat "$run/uptime-at-job-start" 2>/dev/null)s, at job end $(cat "$run/uptime-at-job-end" 2>/dev/null)s)"
    exit "$grc"
}

case "${1:-}" in
    setup) cmd_setup ;;
    check) check_host; build_kernel; build_initramfs; say "can run" ;;
    build) check_host; build_kernel; build_initramfs; say "ready: $CACHE" ;;
    -h|--help|"") sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    --) shift; cmd_run "$@" ;;
    *) cmd_run "$@" ;;
esac
