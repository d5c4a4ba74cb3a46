#!/bin/sh
# Install what the VM tests need on the host (Debian), idempotently: nothing
# is fetched when every package is already installed.
set -eu
need=
# IBM Z guests (VM_ARCH=s390x): the cross compiler (their QEMU: fetch-qemu.sh)
arch_pkgs=
[ "${VM_ARCH:-amd64}" = amd64 ] || arch_pkgs="crossbuild-essential-$VM_ARCH"
for p in qemu-system-x86 busybox-static cpio kmod iproute2 xz-utils gcc libc6-dev bash \
	libibverbs1 ibverbs-providers ibverbs-utils socat redis-server redis-tools rsync $arch_pkgs; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q ' installed$' || need="$need $p"
done
[ -z "$need" ] && exit 0
echo "vm deps: installing$need" >&2
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >&2
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $need >&2
