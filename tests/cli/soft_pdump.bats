#!/usr/bin/env bats
# The preload's side of the SMC dump (doc/smc-dump-header.md 9): the CDC and
# DATA records it writes into the ring of its stats memfd while the control
# line asks for them.  tests/progs/pdump_ring.py plays the daemon: it writes
# the control line and drains the ring of its own process.

load helpers

setup() {
	softd_start
}

teardown() {
	softd_stop
}

@test "soft dump: sends, receives, peeks, shutdown and close leave their records" {
	run "$SMC_BIN/smc_run" python3 "$SMC_TOP/tests/progs/pdump_ring.py"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = ok ]
}

@test "soft dump: without a daemon nothing is mapped and the data path works" {
	softd_stop
	export SMC_BACKEND=auto
	run "$SMC_BIN/smc_run" python3 -c 'import socket
ls = socket.socket(); ls.bind(("127.0.0.1", 0)); ls.listen()
c = socket.create_connection(ls.getsockname()); s, _ = ls.accept()
for i in range(20):
    c.sendall(b"x"); assert s.recv(1) == b"x"
print("memfd" if "smc-soft-stats" in open("/proc/self/maps").read() else "none")'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = none ]
}
