#!/bin/sh
# mkinitramfs.sh KERNEL_ROOT BUILD_DIR OUT
# Build the guest initramfs (gzipped cpio) at OUT from busybox-static, the
# project's binaries in BUILD_DIR (a normal `make` build) with the shared
# libraries ldd lists, ip and rdma from the host's iproute2, bash (smc_run is
# a bash script), the SMC/rxe modules of the unpacked kernel package at
# KERNEL_ROOT and what they need (modules.dep by depmod -b), tests/vm/guest/* as /tests and the
# test programs of tests/vm.
# VM_ARCH=s390x (default amd64: the machine's own): the guest's user space
# comes from VM_SYSROOT (tests/vm/fetch-root.sh), its libraries found there
# by readelf instead of ldd, and the test programs built by the cross
# compiler against it; BUILD_DIR is then the project's cross build.
set -eu
KROOT=$1
BUILD=$2
OUT=$3
HERE=$(cd "$(dirname "$0")" && pwd)
# Modules the guest loads, with what each depends on in the kernel's own
# modules.dep (modprobe --show-depends), in load order.  The optional ones
# only where the kernel has them: 6.12's rxe computes its ICRC through the
# crypto API's crc32 (a run-time need, not a symbol), and kernels from 6.18
# on have no SMC at all; tun for dumprec's capture device (s9); 6.1 builds
# the PCI transport of virtio as a module (no eth0 without it), later ones
# build it in.
WANT="virtio_net ib_uverbs rdma_rxe"
OPTIONAL="virtio_pci crc32_generic smc smc_diag tun"
TOOLS="smc_pnet smcss smcd smcr smc_run smc_softd smc_rnics"
ARCH=${VM_ARCH:-amd64}
case $ARCH in
amd64) TRIPLET=x86_64-linux-gnu SYSROOT= CC_GUEST=cc ;;
s390x) TRIPLET=s390x-linux-gnu SYSROOT=${VM_SYSROOT:?VM_SYSROOT: the s390x root} ;;
*) echo "mkinitramfs: no guest architecture $ARCH" >&2; exit 1 ;;
esac
[ -z "$SYSROOT" ] || CC_GUEST="$TRIPLET-gcc --sysroot=$SYSROOT"
LIBDIR=/usr/lib/$TRIPLET

# from 6.18 on the package keeps its modules under usr/lib (merged /usr)
MROOT=$KROOT
[ -d "$KROOT/lib/modules" ] || MROOT=$KROOT/usr
KVER=$(ls "$MROOT/lib/modules" 2>/dev/null | head -n 1)
[ -n "$KVER" ] || { echo "mkinitramfs: no modules in $KROOT" >&2; exit 1; }
depmod -b "$MROOT" "$KVER"
# deps NAME: the .ko paths NAME needs and itself, in load order; fails when the kernel lacks it
deps() {
	modprobe -d "$MROOT" -S "$KVER" --show-depends "$1" 2>/dev/null | awk '$1 == "insmod" { print $2 }'
	modprobe -d "$MROOT" -S "$KVER" --show-depends "$1" >/dev/null 2>&1
}
KOS=
for m in $WANT $OPTIONAL; do
	if ! list=$(deps "$m"); then
		case " $OPTIONAL " in *" $m "*) continue ;; esac
		echo "mkinitramfs: module $m not in $KROOT" >&2
		exit 1
	fi
	for k in $list; do
		case " $KOS " in *" $k "*) ;; *) KOS="$KOS $k" ;; esac
	done
done
MODULES=
for k in $KOS; do
	n=${k##*/}
	MODULES="$MODULES ${n%%.ko*}"
done
STAGE=$(mktemp -d "${OUT%/*}/initramfs.XXXXXX")
chmod 755 "$STAGE"     # the guest's /: mktemp's 0700 would lock out other users
trap 'rm -rf "$STAGE"' EXIT

mkdir -p "$STAGE"/bin "$STAGE"/sbin "$STAGE"/usr/bin "$STAGE"/usr/sbin "$STAGE"/lib64 \
	"$STAGE$LIBDIR" "$STAGE"/lib/$TRIPLET "$STAGE"/proc "$STAGE"/sys "$STAGE"/dev \
	"$STAGE"/tmp "$STAGE"/run "$STAGE"/etc "$STAGE"/tests "$STAGE"/root

# the applets of the machine's busybox (Debian's, the same build on every architecture)
cp "$SYSROOT/bin/busybox" "$STAGE/bin/busybox"
for a in $(/bin/busybox --list); do
	[ -e "$STAGE/bin/$a" ] || ln -s busybox "$STAGE/bin/$a"
done

# root_libs FILE: its interpreter and the libraries it needs, and theirs,
# from SYSROOT into the stage at the same paths.
root_libs() {
	local lib dir
	for lib in $(readelf -l "$1" 2>/dev/null | sed -n 's/.*interpreter: \(.*\)]/\1/p'); do
		[ -e "$STAGE$lib" ] && continue
		mkdir -p "$STAGE$(dirname "$lib")"
		cp -L "$SYSROOT$lib" "$STAGE$lib"
	done
	for lib in $(readelf -d "$1" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		dir=
		[ ! -e "$SYSROOT/lib/$TRIPLET/$lib" ] || dir=/lib/$TRIPLET
		[ -n "$dir" ] || [ ! -e "$SYSROOT/usr/lib/$TRIPLET/$lib" ] || dir=/usr/lib/$TRIPLET
		[ -n "$dir" ] || { echo "mkinitramfs: $lib, needed by $1, not in $SYSROOT" >&2; exit 1; }
		[ ! -e "$STAGE$dir/$lib" ] || continue
		mkdir -p "$STAGE$dir"
		cp -L "$SYSROOT$dir/$lib" "$STAGE$dir/$lib"
		root_libs "$SYSROOT$dir/$lib"
	done
}

# copy_libs FILE: every library FILE needs (ldd's list), at the same paths.
copy_libs() {
	if [ -n "$SYSROOT" ]; then
		root_libs "$1"
		return
	fi
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
cp "$SYSROOT/bin/bash" "$STAGE/bin/bash"; copy_libs "$SYSROOT/bin/bash"
ln -s busybox "$STAGE/bin/sh"
for t in ip rdma; do
	if [ -n "$SYSROOT" ]; then
		p=$(ls "$SYSROOT"/bin/$t "$SYSROOT"/sbin/$t "$SYSROOT"/usr/sbin/$t "$SYSROOT"/usr/bin/$t 2>/dev/null | head -n 1)
	else
		p=$(command -v $t || ls /sbin/$t /usr/sbin/$t /usr/bin/$t 2>/dev/null | head -n 1)
	fi
	cp "$p" "$STAGE/usr/sbin/$t"; copy_libs "$p"
done

# rdma-core's user space, where the host has it (tests/vm/deps.sh installs
# it): libibverbs, rxe's provider and ibv_devinfo.
devinfo=$(if [ -n "$SYSROOT" ]; then ls "$SYSROOT/usr/bin/ibv_devinfo" 2>/dev/null; else command -v ibv_devinfo; fi || true)
if [ -e "$SYSROOT/etc/libibverbs.d/rxe.driver" ] && [ -n "$devinfo" ]; then
	prov=$(ls "$SYSROOT$LIBDIR"/libibverbs/librxe-rdmav*.so 2>/dev/null | head -n 1)
	if [ -n "$prov" ]; then
		mkdir -p "$STAGE/etc/libibverbs.d" "$STAGE$LIBDIR/libibverbs"
		cp "$SYSROOT/etc/libibverbs.d/rxe.driver" "$STAGE/etc/libibverbs.d/"
		cp "$prov" "$STAGE$LIBDIR/libibverbs/"
		copy_libs "$prov"
		cp "$devinfo" "$STAGE/usr/bin/ibv_devinfo"
		copy_libs "$devinfo"
	fi
fi

# Test programs: AF_SMC socket holder (static), netlink dumper (static) and a
# TCP echo (dynamic, for smc_run).
$CC_GUEST -O2 -Wall -static -o "$STAGE/usr/bin/smc_sock" "$HERE/smc_sock.c"
$CC_GUEST -O2 -Wall -static -o "$STAGE/usr/bin/asuser" "$HERE/asuser.c"
# The netlink reply recorder of the kernel fixtures (static, no libraries).
$CC_GUEST -O2 -Wall -static -o "$STAGE/usr/bin/nldump" "$HERE/nldump.c"
$CC_GUEST -O2 -Wall -o "$STAGE/usr/bin/tcpecho" "$HERE/tcpecho.c"
copy_libs "$STAGE/usr/bin/tcpecho"
# what a copied byte costs in user space and in the kernel (b1's INFO line)
$CC_GUEST -O2 -Wall -o "$STAGE/usr/bin/copyrate" "$HERE/../../bench/copyrate.c"
# unmodified programs: socat for soft SMC-R (s9, deps.sh installs it), redis
# (s21, deps.sh too), rsync (s23, deps.sh too), socat's forking server (s24), sockperf for bench/softroce.sh
# (b1), where the host has them
for p in socat sockperf redis-server redis-cli redis-benchmark rsync; do
	[ -z "$SYSROOT" ] && command -v $p >/dev/null || continue
	cp "$(command -v $p)" "$STAGE/usr/bin/$p"
	copy_libs "$STAGE/usr/bin/$p"
done
# PostgreSQL for bench/softroce_pg.sh (b2), only when asked (VM_POSTGRES=1):
# the server, initdb, pg_ctl, pgbench and psql of the host's newest major,
# its share directory, the two modules initdb loads (no JIT), UTC, and the
# user it runs as (it refuses root)
if [ "${VM_POSTGRES:-0}" = 1 ] && [ -z "$SYSROOT" ]; then
	pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
	[ -n "$pgbin" ] || { echo "mkinitramfs: VM_POSTGRES=1 but no /usr/lib/postgresql/N/bin (apt-get install postgresql)" >&2; exit 1; }
	pgmajor=$(basename "$(dirname "$pgbin")")
	mkdir -p "$STAGE$pgbin" "$STAGE/usr/lib/postgresql/$pgmajor/lib" "$STAGE/usr/share/postgresql" \
		"$STAGE/usr/share/zoneinfo/Etc"
	for p in postgres initdb pg_ctl pgbench psql; do
		cp "$pgbin/$p" "$STAGE$pgbin/$p"
		copy_libs "$pgbin/$p"
	done
	for m in plpgsql dict_snowball; do
		cp "/usr/lib/postgresql/$pgmajor/lib/$m.so" "$STAGE/usr/lib/postgresql/$pgmajor/lib/"
		copy_libs "/usr/lib/postgresql/$pgmajor/lib/$m.so"
	done
	cp -R "/usr/share/postgresql/$pgmajor" "$STAGE/usr/share/postgresql/"
	cp /usr/share/zoneinfo/UTC "$STAGE/usr/share/zoneinfo/UTC"
	cp /usr/share/zoneinfo/UTC "$STAGE/usr/share/zoneinfo/Etc/UTC"
	printf 'root:x:0:0:root:/root:/bin/sh\npostgres:x:1000:1000:postgres:/tmp/pg:/bin/sh\n' > "$STAGE/etc/passwd"
	printf 'root:x:0:\npostgres:x:1000:\n' > "$STAGE/etc/group"
	ln -s "$pgbin/pgbench" "$STAGE/usr/bin/pgbench"
	ln -s "$pgbin/psql" "$STAGE/usr/bin/psql"
fi
# perf for bench/softroce.sh's profiles (PERF=1 or PERF=trace: VM_PERF), only when asked:
# it is 9 MB and 28 libraries that every other boot would unpack
if [ "${VM_PERF:-0}" != 0 ] && [ -z "$SYSROOT" ] && command -v perf >/dev/null; then
	cp "$(command -v perf)" "$STAGE/usr/bin/perf"
	copy_libs "$STAGE/usr/bin/perf"
fi
# The soft backend's dump records off a TUN device (s9): no tcpdump, no Python here.
ROOT=$(cd "$HERE/../.." && pwd)
$CC_GUEST -O2 -Wall -Werror -std=gnu11 -D_GNU_SOURCE -I"$ROOT" -I"$ROOT/lib" -I"$ROOT/wire" -static \
	-o "$STAGE/usr/bin/dumprec" "$HERE/dumprec.c" "$ROOT/wire/reg_client.c" "$ROOT/lib/soft_socket.c"
# The socket-semantics cases (s8), dynamic, for smc_run.
$CC_GUEST -O2 -Wall -std=gnu11 -D_GNU_SOURCE -o "$STAGE/usr/bin/sockcheck" "$HERE/../progs/sockcheck.c" -ldl
copy_libs "$STAGE/usr/bin/sockcheck"
# soft SMC-R's building blocks between two hosts (s5): the preload's rdma/
# layer and the wire formats, with libibverbs opened at run time.
ROOT=$(cd "$HERE/../.." && pwd)
$CC_GUEST -O2 -Wall -Werror -std=c11 -D_GNU_SOURCE -I"$ROOT/wire" -I"$ROOT/preload/base" -I"$ROOT/preload/rdma" \
	-o "$STAGE/usr/bin/smcr_stream" "$ROOT"/tests/progs/smcr/*.c "$ROOT"/preload/base/thread.c \
	"$ROOT"/preload/rdma/*.c "$ROOT"/wire/clc*.c "$ROOT"/wire/smcr_*.c -ldl -lpthread
copy_libs "$STAGE/usr/bin/smcr_stream"
# the preload's soft SMC-R layer (s6): rdma/ and smcr/ with a link group
$CC_GUEST -O2 -Wall -Werror -std=c11 -D_GNU_SOURCE -I"$ROOT/wire" -I"$ROOT/preload/base" -I"$ROOT/preload/rdma" \
	-I"$ROOT/preload/smcr" -I"$ROOT/tests/progs/smcr" -o "$STAGE/usr/bin/smcr_conns" \
	"$ROOT"/tests/progs/smcr_conns/*.c "$ROOT"/tests/progs/smcr/smcr_handshake.c \
	"$ROOT"/preload/base/thread.c "$ROOT"/preload/rdma/*.c "$ROOT"/preload/smcr/*.c \
	"$ROOT"/wire/clc*.c "$ROOT"/wire/smcr_*.c -ldl -lpthread
copy_libs "$STAGE/usr/bin/smcr_conns"

# The unit tests of a cross build, with the files they read (scenario u1:
# on IBM Z they meet a big-endian kernel's netlink, /proc and vfork).
if [ -n "$SYSROOT" ] && [ -x "$BUILD/tests/unit_tests" ]; then
	mkdir -p "$STAGE/unit/tests" "$STAGE/unit/doc"
	install -m 755 "$BUILD/tests/unit_tests" "$STAGE/usr/bin/unit_tests"
	copy_libs "$BUILD/tests/unit_tests"
	cp -R "$ROOT/tests/fixtures" "$STAGE/unit/tests/"
	cp -R "$ROOT/doc/json-schema" "$STAGE/unit/doc/"
fi

# Modules, uncompressed, and their modules.dep.
MDIR=lib/modules/$KVER
mkdir -p "$STAGE/$MDIR/kernel"
for f in $KOS; do
	n=${f##*/}
	m=${n%%.ko*}
	case $f in
	*.xz) xz -dc "$f" > "$STAGE/$MDIR/kernel/$m.ko" ;;
	*.zst) zstd -qdc "$f" > "$STAGE/$MDIR/kernel/$m.ko" ;;
	*) cp "$f" "$STAGE/$MDIR/kernel/$m.ko" ;;
	esac
done
cp "$MROOT/$MDIR/modules.order" "$MROOT/$MDIR/modules.builtin" "$MROOT/$MDIR/modules.builtin.modinfo" "$STAGE/$MDIR/" 2>/dev/null || true
depmod -b "$STAGE" "$KVER"
echo "$MODULES" > "$STAGE/etc/modules"

cp "$HERE/guest/init" "$STAGE/init"
chmod 755 "$STAGE/init"
cp -R "$HERE/guest/." "$STAGE/tests/"
rm -f "$STAGE/tests/init"

(cd "$STAGE" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet -R 0:0) | gzip -1 > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
