#!/bin/sh
# Fetch the system emulator for guests of another architecture (VM_ARCH,
# e.g. s390x) from bookworm-backports through a private apt configuration
# (apt-private.sh), unpacked to $VMDIR/qemu; nothing is installed.
# bookworm's own QEMU 7.2 is not enough for IBM Z: two s390x guests of it
# answer each other's ARP but count every ping they receive as a checksum
# error (InCsumErrors of /proc/net/snmp; the s390 kernel sums with the CKSM
# instruction, which 7.2 emulates), so they never talk; with QEMU 10 they do.  Its libraries are those of the machine's
# qemu-system-x86 (tests/vm/deps.sh): a missing one fails here.
# Prints "BINARY -L DATADIR" on stdout.  Idempotent; REFRESH=1 fetches
# again (a newer QEMU of the suite).
set -eu
VMDIR=${VMDIR:-build/vm}
SUITE=${QEMU_SUITE:-bookworm-backports}
ARCH=$(dpkg --print-architecture)
GUEST=${VM_ARCH:?VM_ARCH names the guests architecture}
mkdir -p "$VMDIR"
VMDIR=$(cd "$VMDIR" && pwd)
APTDIR=$VMDIR/apt-qemu
QROOT=$VMDIR/qemu
BIN=$QROOT/usr/bin/qemu-system-$GUEST

log() { echo "fetch-qemu: $*" >&2; }
. "$(dirname "$0")/apt-private.sh"

stamp=$QROOT/.suite
if [ ! -x "$BIN" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$SUITE" ] || [ "${REFRESH:-0}" = 1 ]; then
	priv_setup
	log "apt-get update ($MIRROR $SUITE)"
	priv apt-get update >&2
	rm -rf "$APTDIR/debs"
	mkdir -p "$APTDIR/debs"
	(cd "$APTDIR/debs" && priv apt-get download "qemu-system-$GUEST" qemu-system-data >&2) ||
		{ log "cannot fetch qemu-system-$GUEST from $SUITE"; exit 1; }
	rm -rf "$QROOT"
	for d in "$APTDIR"/debs/*.deb; do
		dpkg-deb -x "$d" "$QROOT"
	done
	rm -rf "$APTDIR/debs"
	[ -x "$BIN" ] || { log "no $BIN in the packages"; exit 1; }
	echo "$SUITE" > "$stamp"
fi
missing=$(ldd "$BIN" | awk '/not found/ { print $1 }' | tr '\n' ' ')
[ -z "$missing" ] || { log "$BIN needs libraries this machine lacks: $missing"; exit 1; }
echo "$BIN -L $QROOT/usr/share/qemu"
