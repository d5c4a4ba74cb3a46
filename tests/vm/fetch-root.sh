#!/bin/sh
# Fetch Debian's user space for guests of another architecture (VM_ARCH,
# e.g. s390x) through a private apt configuration (apt-private.sh) and
# unpack it to $VMDIR/root: what the guest runs (busybox, bash,
# iproute2, rdma-core's libibverbs with rxe's provider) and what the
# project's cross build links against (the -dev packages of DEBIAN_PKGS and
# libc's).  Nothing is installed on the machine; the closure of their
# dependencies comes from $SUITE (default bookworm, the machine's release).
# Prints the root on stdout.  Idempotent: the root is made again only for
# another suite or package list, or with REFRESH=1.
set -eu
VMDIR=${VMDIR:-build/vm}
SUITE=${SUITE:-bookworm}
ARCH=${VM_ARCH:?VM_ARCH names the guests architecture}
mkdir -p "$VMDIR"
VMDIR=$(cd "$VMDIR" && pwd)
APTDIR=$VMDIR/apt-root
ROOT=$VMDIR/root
PKGS="busybox-static bash iproute2 libibverbs1 ibverbs-providers ibverbs-utils
      libc6-dev linux-libc-dev libnl-3-dev libnl-genl-3-dev libmnl-dev liburing-dev libibverbs-dev"

log() { echo "fetch-root: $*" >&2; }
. "$(dirname "$0")/apt-private.sh"

want="$SUITE: $(echo $PKGS)"
stamp=$ROOT/.unpacked
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ "${REFRESH:-0}" != 1 ]; then
	echo "$ROOT"
	exit 0
fi
priv_setup
log "apt-get update ($MIRROR $SUITE $ARCH)"
priv apt-get update >&2
# An empty private status: apt takes nothing as installed and fetches every
# dependency, down to libc6; into an empty cache, so that no older version
# of a package is unpacked beside (or over) the current one.
rm -f "$APTDIR"/cache/archives/*.deb
# shellcheck disable=SC2086 # the package names
priv apt-get install -y --download-only --no-install-recommends $PKGS >&2 ||
	{ log "cannot resolve $want for $ARCH in $SUITE"; exit 1; }
rm -rf "$ROOT"
mkdir -p "$ROOT"
for d in "$APTDIR"/cache/archives/*.deb; do
	dpkg-deb -x "$d" "$ROOT" || { log "cannot unpack $d"; rm -rf "$ROOT"; exit 1; }
done
[ -x "$ROOT/bin/busybox" ] || { log "no busybox in $ROOT"; rm -rf "$ROOT"; exit 1; }
echo "$want" > "$stamp"
echo "$ROOT"
