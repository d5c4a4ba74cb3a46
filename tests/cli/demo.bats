#!/usr/bin/env bats
# The README's first command, `make demo`, as a newcomer meets it: on a
# machine without the build dependencies (pkg-config finds none of them until
# apt-get has installed them), in a copy of the tree.  apt-get, dpkg-query and
# pkg-config are stand-ins that record what they were asked; everything else
# (compiler, sockperf, the soft backend) is real.
load helpers

setup_file() {
	command -v sockperf >/dev/null || skip "sockperf is not installed (scripts/install-deps.sh)"
	export DEMO_TREE="$BATS_FILE_TMPDIR/tree" FAKE="$BATS_FILE_TMPDIR/fake"
	mkdir -p "$DEMO_TREE" "$FAKE/bin"
	(cd "$SMC_TOP" && git ls-files -co --exclude-standard | grep -v '^build/' |
		tar -cf - -T -) | tar -xf - -C "$DEMO_TREE"
	local real_pc real_dq
	real_pc=$(command -v pkg-config)
	real_dq=$(command -v dpkg-query)
	# Until the stand-in apt-get ran, the three libraries are missing.
	cat >"$FAKE/bin/pkg-config" <<-EOF
	#!/bin/sh
	[ -e "$FAKE/installed" ] && exec "$real_pc" "\$@"
	exit 1
	EOF
	cat >"$FAKE/bin/dpkg-query" <<-EOF
	#!/bin/sh
	if [ ! -e "$FAKE/installed" ]; then
	  case "\$*" in *libnl-3-dev*|*libnl-genl-3-dev*|*libmnl-dev*) exit 1 ;; esac
	fi
	exec "$real_dq" "\$@"
	EOF
	cat >"$FAKE/bin/apt-get" <<-EOF
	#!/bin/sh
	echo "apt-get \$*" >>"$FAKE/apt.log"
	case "\$*" in *install*) touch "$FAKE/installed" ;; esac
	exit 0
	EOF
	printf '#!/bin/sh\nexec "$@"\n' >"$FAKE/bin/sudo"
	chmod 755 "$FAKE/bin/"*
	PATH="$FAKE/bin:$PATH" make -C "$DEMO_TREE" demo >"$BATS_FILE_TMPDIR/demo.out" 2>&1
	echo $? >"$BATS_FILE_TMPDIR/demo.rc"
}

# The lines of the demo's output between two section titles.
section() { # FROM TO
	sed -n "/== $1/,/== $2/p" "$BATS_FILE_TMPDIR/demo.out"
}

@test "make demo without the build dependencies: installs them first, then builds and runs" {
	[ "$(cat "$BATS_FILE_TMPDIR/demo.rc")" -eq 0 ] || { tail -40 "$BATS_FILE_TMPDIR/demo.out"; false; }
	! grep -q 'missing build dependencies' "$BATS_FILE_TMPDIR/demo.out"
	grep -qx 'install-deps: installing libnl-3-dev libnl-genl-3-dev libmnl-dev' \
		"$BATS_FILE_TMPDIR/demo.out"
	grep -qx 'apt-get update -qq' "$FAKE/apt.log"
	grep -q '^apt-get install .* libnl-3-dev libnl-genl-3-dev libmnl-dev$' "$FAKE/apt.log"
	[ -x "$DEMO_TREE/smcss" ] && [ -f "$DEMO_TREE/libsmc-preload.so" ]
	grep -q '^smc_softd (pid [0-9]*) listens on ' "$BATS_FILE_TMPDIR/demo.out"
}

@test "make demo: during the ping-pong the connection is ACTIVE SMCD with its SMC-D columns and link group" {
	local snap port
	snap=$(section 'The soft data path' 'Plain TCP against')
	echo "$snap"
	# smcss -a: both ends of the connection paired; the one INIT row is the
	# test client's unconnected socket of the section before
	# the port the demo chose (47100 unless in use)
	port=$(sed -n 's/^\$ smc_run sockperf sr --tcp -i 127\.0\.0\.1 -p \([0-9]*\) &$/\1/p' <<<"$snap")
	[ -n "$port" ]
	[ "$(grep -c -E "^ACTIVE +[0-9]+ [0-9]+ 127\.0\.0\.1:[0-9]+ +127\.0\.0\.1:$port +0000 SMCD \$" <<<"$snap")" -eq 1 ]
	[ "$(grep -c -E "^ACTIVE +[0-9]+ [0-9]+ 127\.0\.0\.1:$port +127\.0\.0\.1:[0-9]+ +0000 SMCD \$" <<<"$snap")" -eq 1 ]
	[ "$(grep -c '^INIT ' <<<"$snap")" -eq 1 ]
	# smcss -D: GID, token, peer GID, peer token, link id
	[ "$(grep -c -E '^ACTIVE .* SMCD [0-9a-f]{16} [0-9a-f]{16} [0-9a-f]{16} [0-9a-f]{16} [0-9a-f]{8} $' <<<"$snap")" -eq 2 ]
	# smcd linkgroup: one link group with the connection
	grep -q -E '^[0-9a-f]{8} +0 +[1-9][0-9]* ' <<<"$snap"
}

# A data path that fails must fail the demo, saying what failed: a sockperf
# that cannot start stands for it.
@test "make demo: when sockperf fails, the demo says so and exits non-zero" {
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	printf '#!/bin/sh\necho "sockperf: stand-in that fails" >&2\nexit 1\n' >"$BATS_TEST_TMPDIR/bin/sockperf"
	chmod 755 "$BATS_TEST_TMPDIR/bin/sockperf"
	run env PATH="$BATS_TEST_TMPDIR/bin:$FAKE/bin:$PATH" make -s -C "$DEMO_TREE" demo
	echo "$output" | tail -n 12
	[ "$status" -ne 0 ]
	[[ $output == *"== The demo failed"* ]]
	[[ $output == *"demo: smc_run sockperf sr does not listen on port "*": sockperf: stand-in that fails"* ]]
	[[ $output == *"demo: sockperf (plain TCP) gave no figure"* ]]
}
