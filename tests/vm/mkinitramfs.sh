#!/bin/sh
# mkinitramfs.sh KERNEL_ROOT BUILD_DIR OUT
# Build the guest initramfs (gzipped cpio) at OUT from busybox-static, the
# project's binaries in BUILD_DIR (a normal `make` build) with the shared
# libraries ldd lists, ip and rdma from the host's iproute2, bash (smc_run is
# a bash script), the SMC/rxe modules of the unpacked kernel package at
# KERNEL_ROOT (modules.dep by depmod -b), tests/vm/guest/* as /tests and the
# test programs of tests/vm.
set -eu
KROOT=$1
BUILD=$2
OUT=$3
HERE=$(cd "$(dirname "$0")" && pwd)
# Modules in load order (each after the modules it needs).
MODULES="failover net_failover virtio_net crc32_generic ib_core ib_uverbs ip6_udp_tunnel udp_tunnel rdma_rxe smc smc_diag"
TOOLS="smc_pnet smcss smcd smcr smc_run smc_softd smc_rnics"
LIBDIR=/usr/lib/x86_64-linux-gnu

KVER=$(ls "$KROOT/lib/modules" | head -n 1)
[ -n "$KVER" ] || { echo "mkinitramfs: no modules in $KROOT" >&2; exit 1; }
STAGE=$(mktemp -d "${OUT%/*}/initramfs.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT

mkdir -p "$STAGE"/bin "$STAGE"/sbin "$STAGE"/usr/bin "$STAGE"/usr/sbin "$STAGE"/lib64 \
	"$STAGE$LIBDIR" "$STAGE"/lib/x86_64-linux-gnu "$STAGE"/proc "$STAGE"/sys "$STAGE"/dev \
	"$STAGE"/tmp "$STAGE"/run "$STAGE"/etc "$STAGE"/tests "$STAGE"/root

cp /bin/busybox "$STAGE/bin/busybox"
for a in $(/bin/busybox --list); do
	[ -e "$STAGE/bin/$a" ] || ln -s busybox "$STAGE/bin/$a"
done

# copy_elf FILE DESTDIR: the file and every library ldd lists, at the same paths.
copy_libs() {
	ldd "$1" 2>/dev/null | awk '/=> \//{print $3} /^\t\/[^ ]*ld-linux/{print $1}' | while read -r lib; do
		[ -e "$STAGE$lib" ] && continue
		mkdir -p "$STAGE$(dirname "$lib")"
		cp -L "$lib" "$STAGE$lib"
	done
}
for t in $TOOLS; do
	[ -e "$BUILD/$t" ] || { echo "mkinitramfs: $BUILD/$t missing (run make)" >&2; exit 1; }
	install -m 755 "$BUILD/$t" "$STAGE/usr/sbin/$t"
	copy_libs "$BUILD/$t"
done
install -m 644 "$BUILD/libsmc-preload.so" "$STAGE$LIBDIR/libsmc-preload.so"
copy_libs "$BUILD/libsmc-preload.so"
rm -f "$STAGE/bin/bash" "$STAGE/bin/sh"
cp /bin/bash "$STAGE/bin/bash"; copy_libs /bin/bash
ln -s busybox "$STAGE/bin/sh"
for t in ip rdma; do
	p=$(command -v $t || ls /sbin/$t /usr/sbin/$t /usr/bin/$t 2>/dev/null | head -n 1)
	cp "$p" "$STAGE/usr/sbin/$t"; copy_libs "$p"
done

# Test programs: AF_SMC socket holder (static), netlink dumper (static) and a
# TCP echo (dynamic, for smc_run).
cc -O2 -Wall -static -o "$STAGE/usr/bin/smc_sock" "$HERE/smc_sock.c"
# The netlink reply recorder of the kernel fixtures (static, no libraries).
cc -O2 -Wall -static -o "$STAGE/usr/bin/nldump" "$HERE/nldump.c"
cc -O2 -Wall -o "$STAGE/usr/bin/tcpecho" "$HERE/tcpecho.c"
copy_libs "$STAGE/usr/bin/tcpecho"

# Modules, uncompressed, and their modules.dep.
MDIR=lib/modules/$KVER
mkdir -p "$STAGE/$MDIR/kernel"
for m in $MODULES; do
	f=$(find "$KROOT/$MDIR/kernel" -name "$m.ko*" | head -n 1)
	[ -n "$f" ] || { echo "mkinitramfs: module $m not in $KROOT" >&2; exit 1; }
	case $f in
	*.xz) xz -dc "$f" > "$STAGE/$MDIR/kernel/$m.ko" ;;
	*.zst) zstd -qdc "$f" > "$STAGE/$MDIR/kernel/$m.ko" ;;
	*) cp "$f" "$STAGE/$MDIR/kernel/$m.ko" ;;
	esac
done
cp "$KROOT/$MDIR/modules.order" "$KROOT/$MDIR/modules.builtin" "$KROOT/$MDIR/modules.builtin.modinfo" "$STAGE/$MDIR/" 2>/dev/null || true
depmod -b "$STAGE" "$KVER"
echo "$MODULES" > "$STAGE/etc/modules"

cp "$HERE/guest/init" "$STAGE/init"
chmod 755 "$STAGE/init"
cp -R "$HERE/guest/." "$STAGE/tests/"
rm -f "$STAGE/tests/init"

(cd "$STAGE" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet -R 0:0) | gzip -1 > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
