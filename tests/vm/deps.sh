#!/bin/sh
# Install what the VM tests need on the host (Debian), idempotently.
set -eu
need=
command -v qemu-system-x86_64 >/dev/null 2>&1 || need="$need qemu-system-x86"
[ -x /bin/busybox ] && /bin/busybox --list 2>/dev/null | grep -qx ash &&
	file_static=$(ldd /bin/busybox 2>&1 | grep -c 'not a dynamic') && [ "$file_static" -gt 0 ] ||
	need="$need busybox-static"
command -v cpio >/dev/null 2>&1 || need="$need cpio"
command -v depmod >/dev/null 2>&1 || [ -x /sbin/depmod ] || need="$need kmod"
command -v rdma >/dev/null 2>&1 || [ -x /sbin/ip ] || need="$need iproute2"
command -v xz >/dev/null 2>&1 || need="$need xz-utils"
command -v cc >/dev/null 2>&1 || need="$need gcc libc6-dev"
[ -e /usr/lib/x86_64-linux-gnu/libc.a ] || need="$need libc6-dev"
[ -z "$need" ] && exit 0
echo "vm deps: installing$need" >&2
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >&2
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $need >&2
