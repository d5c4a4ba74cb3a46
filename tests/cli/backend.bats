#!/usr/bin/env bats
# How the tools find their backend (lib/nl.c), as a user meets it.

load helpers

# A socket file nobody listens on (a daemon that died).
dead_socket() {
	python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.bind(sys.argv[1]); s.close()' "$1"
}

@test "SMC_SOFT_SOCKET names the soft backend's socket" {
	dead_socket "$BATS_TEST_TMPDIR/dead.sock"
	SMC_SOFT_SOCKET="$BATS_TEST_TMPDIR/dead.sock" run --separate-stderr smcss
	[ "$status" -eq 1 ]
	[ "$stderr" = "smcss: no SMC backend: the kernel has no SMC support (load it with 'modprobe smc') and no soft backend answers on $BATS_TEST_TMPDIR/dead.sock (start 'smc_softd')" ]
	SMC_BACKEND=soft SMC_SOFT_SOCKET="$BATS_TEST_TMPDIR/dead.sock" run --separate-stderr smcss
	[ "$stderr" = "smcss: SMC_BACKEND=soft: no soft backend answers on $BATS_TEST_TMPDIR/dead.sock: Connection refused (start 'smc_softd')" ]
}

@test "a user other than root finds a per-user daemon under XDG_RUNTIME_DIR" {
	command -v setpriv >/dev/null || skip "setpriv is not installed"
	[ "$(id -u)" -eq 0 ] || skip "needs root to switch users"
	kernel_has_smc && skip "this kernel has SMC"
	# somewhere the other user can reach (the bats directories are private)
	rt=$(mktemp -d /tmp/smc-rt.XXXXXX)
	mkdir -p "$rt/smc_soft"
	chmod -R 755 "$rt"
	dead_socket "$rt/smc_soft/control"
	run --separate-stderr env -u SMC_SOFT_SOCKET XDG_RUNTIME_DIR="$rt" \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$SMC_BIN/smcss"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"no soft backend answers on $rt/smc_soft/control (start 'smc_softd')" ]]
	# root keeps the system daemon's path
	run --separate-stderr env -u SMC_SOFT_SOCKET XDG_RUNTIME_DIR="$rt" "$SMC_BIN/smcss"
	[[ "$stderr" == *"no soft backend answers on /run/smc_soft/control (start 'smc_softd')" ]]
	rm -rf "$rt"
}
