# Sourced by fetch-kernel.sh and fetch-root.sh: apt on a private state in
# $APTDIR for suite $SUITE and Debian architecture $ARCH, so that the
# machine's /etc/apt is only read (for its mirror), never changed.

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

# priv_setup: the private state's directories and its one source.
priv_setup() {
	MIRROR=$(mirror | head -n 1)
	[ -n "$MIRROR" ] || { log "no Debian mirror for bookworm found in /etc/apt"; exit 1; }
	mkdir -p "$APTDIR/lists/partial" "$APTDIR/cache/archives/partial" "$APTDIR/etc/preferences.d"
	touch "$APTDIR/status"
	echo "deb $MIRROR $SUITE main" > "$APTDIR/sources.list"
}

# priv apt-get|apt-cache ARGS...: the tool on the private state.
priv() {
	tool=$1
	shift
	"$tool" -o Dir::Etc::SourceList="$APTDIR/sources.list" \
		-o Dir::Etc::SourceParts=/nonexistent \
		-o Dir::Etc::Preferences="$APTDIR/etc/preferences" \
		-o Dir::Etc::PreferencesParts="$APTDIR/etc/preferences.d" \
		-o Dir::State="$APTDIR" \
		-o Dir::State::Lists="$APTDIR/lists" \
		-o Dir::State::status="$APTDIR/status" \
		-o Dir::Cache="$APTDIR/cache" \
		-o APT::Default-Release="$SUITE" \
		-o APT::Architecture="$ARCH" -o APT::Architectures="$ARCH" \
		-o Debug::NoLocking=1 -o APT::Sandbox::User=root -q "$@"
}
