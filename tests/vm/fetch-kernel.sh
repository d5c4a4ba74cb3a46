#!/bin/sh
# Fetch the current linux-image-$ARCH kernel of $SUITE (default
# bookworm-backports: Debian's 6.12) through a private apt configuration
# (the machine's /etc/apt is never touched), cache the .debs in $VMDIR
# (default build/vm; a suite other than the default in $VMDIR/$SUITE) and
# unpack them to its kernel/ directory.  VM_ARCH (default amd64; s390x for
# IBM Z guests) is the Debian architecture (run.sh gives each its own
# VMDIR).  KVER (a version prefix such as 6.1 or 6.17) takes the newest
# linux-image-KVER.* of the suite instead of the one linux-image-$ARCH
# points at (the kernel matrix of run.sh's VM_KVER), cached in
# $VMDIR/$SUITE-$KVER.  Prints the unpacked root directory
# on stdout.  Idempotent: a second run with cached .debs downloads nothing.
#
# Up to 6.17 linux-image-V-$ARCH holds the kernel and its modules; from
# 6.18 on it is a meta-package that depends on linux-binary-V (the image),
# linux-modules-V and linux-base-V (the config): those are fetched then.
# A root without a kernel image or modules fails loudly.
set -eu
VMDIR=${VMDIR:-build/vm}
SUITE=${SUITE:-bookworm-backports}
ARCH=${VM_ARCH:-amd64}
KVER=${KVER:-}
case $KVER in
'') [ "$SUITE" = bookworm-backports ] || VMDIR=$VMDIR/$SUITE ;;
*[!0-9.]* | .* | *.) echo "fetch-kernel: KVER=$KVER: a version prefix such as 6.1 or 6.17" >&2; exit 1 ;;
*) VMDIR=$VMDIR/$SUITE-$KVER ;;
esac
mkdir -p "$VMDIR"
VMDIR=$(cd "$VMDIR" && pwd)
APTDIR=$VMDIR/apt

log() { echo "fetch-kernel: $*" >&2; }
# any PATH...: one of them exists (unmatched globs stay as they are)
any() { for f in "$@"; do [ -e "$f" ] && return 0; done; return 1; }
. "$(dirname "$0")/apt-private.sh"

# The cached .debs of one kernel: linux-image-V, and linux-binary-V and
# linux-modules-V where the image is a meta-package.
cached_debs() {
	ls "$VMDIR"/linux-image-*-"$ARCH"_*.deb "$VMDIR"/linux-binary-*.deb "$VMDIR"/linux-modules-*.deb \
		"$VMDIR"/linux-base-*.deb 2>/dev/null | grep -v -- '-dbg_' | grep -v unsigned || true
}

cached=$(cached_debs)
if [ -z "$cached" ] || [ "${REFRESH:-0}" = 1 ]; then
	priv_setup
	log "apt-get update ($MIRROR $SUITE)"
	priv apt-get update >&2
	if [ -n "$KVER" ]; then
		# the newest linux-image-KVER[.-]...-$ARCH, not its cloud or rt flavour
		re=$(echo "$KVER" | sed 's/\./\\./g')
		dep=$(priv apt-cache search --names-only "^linux-image-$re[.-].*-$ARCH\$" | awk '{ print $1 }' |
		      grep -v -e '-cloud-' -e '-rt-' -e '-dbg' -e '-unsigned' | sort -V | tail -n 1)
		[ -n "$dep" ] || { log "no linux-image-$KVER.*-$ARCH in $SUITE"; exit 1; }
	else
		# linux-image-$ARCH Depends: linux-image-V-$ARCH (or -unsigned).
		dep=$(priv apt-cache show linux-image-"$ARCH" | awk -F': ' '/^Version:/{v=$2} /^Depends:/{print v" "$2}' |
		      sort -V | tail -n 1 | sed 's/^[^ ]* //' | tr ',' '\n' | sed 's/^ *//; s/ .*//' | grep '^linux-image-' | head -n 1)
		[ -n "$dep" ] || { log "cannot resolve linux-image-$ARCH in $SUITE"; exit 1; }
	fi
	case $dep in *-"$ARCH") ;; *) log "unexpected dependency $dep"; exit 1;; esac
	log "resolved $dep"
	V=${dep#linux-image-}
	# from 6.18 on: the image package is a meta-package
	want=$(priv apt-cache show "$dep" | awk -F': ' '/^Depends:/{print $2}' | tr ',|' '\n\n' |
	       sed 's/^ *//; s/ .*//' | grep -F -x -e "linux-binary-$V" -e "linux-modules-$V" \
	       -e "linux-base-$V" | sort -u || true)
	[ -n "$want" ] || want=$dep
	log "fetching $(echo $want)"
	rm -f "$VMDIR"/linux-*.deb.part
	for pkg in $want; do
		ls "$VMDIR/${pkg}"_*.deb >/dev/null 2>&1 || (cd "$VMDIR" && priv apt-get download "$pkg" >&2) ||
			case $pkg in
			# only the config: the mirror has answered 404 for s390x's
			linux-base-*) log "no $pkg (the kernel's config): going on without it" ;;
			*) exit 1 ;;
			esac
	done
	keep=
	for pkg in $want; do
		d=$(ls "$VMDIR/${pkg}"_*.deb 2>/dev/null | tail -n 1)
		[ -z "$d" ] || keep="$keep $d"
	done
	# Drop other cached kernels.
	for d in $(cached_debs); do
		case " $keep " in *" $d "*) ;; *) rm -f "$d" ;; esac
	done
	cached=$(echo $keep | tr ' ' '\n')
fi

root=$VMDIR/kernel
stamp=$root/.unpacked
names=$(for d in $cached; do basename "$d"; done | sort | tr '\n' ' ')
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$names" ]; then
	rm -rf "$root"
	mkdir -p "$root"
	for d in $cached; do
		log "unpacking $(basename "$d")"
		dpkg-deb -x "$d" "$root"
	done
	# a failed root is not kept, nor what made it: the next run resolves again
	# the image: boot/vmlinuz-V up to 6.17, usr/lib/modules/V/vmlinuz after
	any "$root"/boot/vmlinuz-* "$root"/usr/lib/modules/*/vmlinuz ||
		{ log "no kernel image in $names(only a meta-package?)"; rm -rf "$root" $cached; exit 1; }
	any "$root"/lib/modules/*/modules.order "$root"/usr/lib/modules/*/modules.order ||
		{ log "no kernel modules in $names"; rm -rf "$root" $cached; exit 1; }
	echo "$names" > "$stamp"
fi
echo "$root"
