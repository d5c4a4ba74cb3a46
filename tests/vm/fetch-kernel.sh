#!/bin/sh
# Fetch the current bookworm-backports linux-image-*-amd64 package through a
# private apt configuration (the machine's /etc/apt is never touched), cache
# the .deb in $VMDIR (default build/vm) and unpack it to $VMDIR/kernel.
# Prints the unpacked root directory on stdout. Idempotent: a second run with
# a cached .deb downloads nothing.
set -eu
VMDIR=${VMDIR:-build/vm}
SUITE=${SUITE:-bookworm-backports}
mkdir -p "$VMDIR"
VMDIR=$(cd "$VMDIR" && pwd)
APTDIR=$VMDIR/apt

log() { echo "fetch-kernel: $*" >&2; }

# The Debian archive this machine already uses (the one serving "bookworm").
mirror() {
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		awk '$1=="deb" { for (i=2;i<=NF;i++) if ($i !~ /^\[/ && $i !~ /\]$/) { u=$i; s=$(i+1); break }
		      if (s=="bookworm" || s=="bookworm-updates") { print u; exit } }' "$f"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		awk 'BEGIN{RS=""; FS="\n"}
		     { u=""; s=""; en=1
		       for (i=1;i<=NF;i++) {
		         if ($i ~ /^URIs:/) { sub(/^URIs:[ \t]*/, "", $i); split($i, a, /[ \t]+/); u=a[1] }
		         if ($i ~ /^Suites:/) s=$i
		         if ($i ~ /^Enabled:[ \t]*no/) en=0 }
		       if (en && u != "" && s ~ /[ \t]bookworm([ \t]|$)/) { print u; exit } }' "$f"
	done
}

cached=$(ls "$VMDIR"/linux-image-*-amd64_*.deb 2>/dev/null | grep -v -- '-dbg_' | grep -v unsigned | tail -n 1 || true)
if [ -z "$cached" ] || [ "${REFRESH:-0}" = 1 ]; then
	MIRROR=$(mirror | head -n 1)
	[ -n "$MIRROR" ] || { log "no Debian mirror for bookworm found in /etc/apt"; exit 1; }
	mkdir -p "$APTDIR/lists/partial" "$APTDIR/cache/archives/partial" "$APTDIR/etc/preferences.d"
	touch "$APTDIR/status"
	echo "deb $MIRROR $SUITE main" > "$APTDIR/sources.list"
	set -- -o Dir::Etc::SourceList="$APTDIR/sources.list" \
	       -o Dir::Etc::SourceParts=/nonexistent \
	       -o Dir::Etc::Preferences="$APTDIR/etc/preferences" \
	       -o Dir::Etc::PreferencesParts="$APTDIR/etc/preferences.d" \
	       -o Dir::State="$APTDIR" \
	       -o Dir::State::Lists="$APTDIR/lists" \
	       -o Dir::State::status="$APTDIR/status" \
	       -o Dir::Cache="$APTDIR/cache" \
	       -o APT::Default-Release="$SUITE" \
	       -o Debug::NoLocking=1 -o APT::Sandbox::User=root -q
	log "apt-get update ($MIRROR $SUITE)"
	apt-get "$@" update >&2
	# linux-image-amd64 Depends: linux-image-6.12.NN+bpo-amd64 (or -unsigned).
	dep=$(apt-cache "$@" show linux-image-amd64 | awk -F': ' '/^Version:/{v=$2} /^Depends:/{print v" "$2}' |
	      sort -V | tail -n 1 | sed 's/^[^ ]* //' | tr ',' '\n' | sed 's/^ *//; s/ .*//' | grep '^linux-image-' | head -n 1)
	[ -n "$dep" ] || { log "cannot resolve linux-image-amd64 in $SUITE"; exit 1; }
	case $dep in *-amd64) ;; *) log "unexpected dependency $dep"; exit 1;; esac
	log "resolved $dep"
	if ! ls "$VMDIR/${dep}"_*.deb >/dev/null 2>&1; then
		rm -f "$VMDIR"/linux-image-*.deb.part
		(cd "$VMDIR" && apt-get "$@" download "$dep" >&2)
	fi
	cached=$(ls "$VMDIR/${dep}"_*.deb | tail -n 1)
	# Drop older cached kernels.
	for d in "$VMDIR"/linux-image-*.deb; do [ "$d" = "$cached" ] || rm -f "$d"; done
fi

root=$VMDIR/kernel
stamp=$root/.unpacked
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$(basename "$cached")" ]; then
	rm -rf "$root"
	mkdir -p "$root"
	log "unpacking $(basename "$cached")"
	dpkg-deb -x "$cached" "$root"
	basename "$cached" > "$stamp"
fi
echo "$root"
