#!/usr/bin/env bats
# A server with an io_uring instance made with liburing, as MariaDB's InnoDB
# has for its data files (tests/progs/uring_conn.c), both ends under smc_run
# with a private smc_softd.  The library reads the requests liburing submits:
# an instance that only reads files leaves the connection on shared memory;
# one that names the connection keeps it on TCP (0x03060001) before the
# cut-over, and resets it after, never losing a byte silently.
# doc/soft-lifecycle.md 1.3, smc_run(8).

load helpers
bats_require_minimum_version 1.5.0

UC="$SMC_BIN/tests/uring_conn"
RUN="$SMC_BIN/smc_run"

setup() {
	unset SMC_DEBUG SMC_SNDBUF SMC_RCVBUF LD_PRELOAD SMC_SOFT_URING
	SERVER_PID=
	softd_start
}

teardown() {
	if [ -n "$SERVER_PID" ]; then
		kill -KILL "$SERVER_PID" 2>/dev/null
		wait "$SERVER_PID" 2>/dev/null
	fi
	softd_stop
}

# Server and client of MODE under smc_run; the client's smcss rows in
# $ROWS, its line in $output, the server's lines in $SERVER_OUT.
uring_pair() { # MODE
	local out="$BATS_TEST_TMPDIR/server.out"
	ROWS="$BATS_TEST_TMPDIR/rows"
	"$RUN" "$UC" server "$1" >"$out" 2>&1 3>&- &
	SERVER_PID=$!
	PORT=
	for _ in $(seq 200); do
		PORT=$(sed -n 's/^port //p' "$out" 2>/dev/null || true)
		[ -n "$PORT" ] && break
		sleep 0.05
	done
	[ -n "$PORT" ] || { echo "no port from the server:"; cat "$out"; return 1; }
	UC_PROBE="env -u LD_PRELOAD '$SMC_BIN/smcss' -a >'$ROWS'" \
		run --separate-stderr timeout 60 "$RUN" "$UC" client "$PORT" "$1"
	wait "$SERVER_PID"
	SERVER_STATUS=$?
	SERVER_PID=
	SERVER_OUT=$(grep -v '^port ' "$out")
	echo "client: status $status, '$output', stderr '$stderr'; server: $SERVER_STATUS, '$SERVER_OUT'"
	[ ! -s "$ROWS" ] || cat "$ROWS"
}

# Both ACTIVE rows of the connection read REASON, the other end PEERDECL with it.
rows_tcp() { # REASON
	[ "$(grep -c '^ACTIVE .* TCP '"$1"'$' "$ROWS")" -eq 1 ]
	[ "$(grep -c '^ACTIVE .* TCP 0x05000000/'"$1"'$' "$ROWS")" -eq 1 ]
	[ "$(grep -c '^ACTIVE' "$ROWS")" -eq 2 ]
}

@test "soft_uring: an instance that reads files only: the connection is SMCD, every reply intact" {
	uring_pair files
	[ "$status" -eq 0 ] && [ "$SERVER_STATUS" -eq 0 ]
	[ "$output" = "client: 20 replies intact, region mapped" ]
	[ "$SERVER_OUT" = "server: 20 replies sent" ]
	[ -z "$stderr" ]
	[ "$(grep -c '^ACTIVE .* SMCD *$' "$ROWS")" -eq 2 ]
}

@test "soft_uring: SMC_SOFT_URING=tcp: the same instance keeps the connection on TCP (0x03060001)" {
	export SMC_SOFT_URING=tcp
	uring_pair files
	[ "$status" -eq 0 ] && [ "$SERVER_STATUS" -eq 0 ]
	# (a client offered before the server's decline came maps a region it never uses)
	[[ "$output" =~ ^"client: 20 replies intact, " ]]
	rows_tcp 0x03060001
}

@test "soft_uring: an instance made with a raw io_uring_setup keeps the connection on TCP (0x03060001)" {
	uring_pair raw
	[ "$status" -eq 0 ] && [ "$SERVER_STATUS" -eq 0 ]
	# (a client offered before the server's decline came maps a region it never uses)
	[[ "$output" =~ ^"client: 20 replies intact, " ]]
	rows_tcp 0x03060001
}

@test "soft_uring: SMC_SOFT_URING=files: the program's word for its raw instance, the connection is SMCD" {
	export SMC_SOFT_URING=files
	uring_pair raw
	[ "$status" -eq 0 ] && [ "$SERVER_STATUS" -eq 0 ]
	[ "$output" = "client: 20 replies intact, region mapped" ]
	[ "$(grep -c '^ACTIVE .* SMCD *$' "$ROWS")" -eq 2 ]
}

@test "soft_uring: a bad SMC_SOFT_URING is named with SMC_DEBUG and watch is used" {
	SMC_DEBUG=1 SMC_SOFT_URING=never run --separate-stderr "$RUN" python3 -c 'import socket; socket.socket()'
	[ "$status" -eq 0 ]
	echo "$stderr" | grep -qx "libsmc-preload: ignoring SMC_SOFT_URING='never' (watch, tcp or files): watch is used"
}

@test "soft_uring: IORING_OP_RECV on the connection before its cut-over: TCP for good (0x03060001), every byte" {
	uring_pair recv_early
	[ "$status" -eq 0 ] && [ "$SERVER_STATUS" -eq 0 ]
	[ "$output" = "client: reply intact" ]
	[ "$SERVER_OUT" = "server: request intact" ]
	rows_tcp 0x03060001
}

@test "soft_uring: once a request named a connection, the next connection stays TCP from the start (0x03060001)" {
	uring_pair second
	[ "$status" -eq 0 ] && [ "$SERVER_STATUS" -eq 0 ]
	# the client may still map the first connection's region, offered at the server's accept
	[[ "$output" =~ ^"client: reply intact"$'\n'"client: 20 replies intact, " ]]
	[ "$SERVER_OUT" = $'server: request intact\nserver: 20 replies sent' ]
	rows_tcp 0x03060001
}

@test "soft_uring: the connection registered as a fixed file: TCP for good (0x03060001)" {
	uring_pair registered
	[ "$status" -eq 0 ] && [ "$SERVER_STATUS" -eq 0 ]
	# offered at the server's accept, the client may have mapped a region it does not use
	[[ "$output" =~ ^client:\ 20\ replies\ intact, ]]
	rows_tcp 0x03060001
}

@test "soft_uring: IORING_OP_RECV on a connection on shared memory: reset at both ends with one line, no hang" {
	uring_pair recv_late
	[ "$status" -eq 0 ] && [ "$SERVER_STATUS" -eq 0 ]
	[[ "$output" =~ ^client:\ .*:\ (Connection\ reset\ by\ peer|Broken\ pipe)$ ]]
	[[ "$SERVER_OUT" =~ ^"libsmc-preload: io_uring request on fd "[0-9]+": it is on shared memory, where io_uring cannot follow it: the connection is reset"$'\n'"server: IORING_OP_RECV: Connection reset by peer after 0 bytes"$ ]]
}

@test "soft_uring: IORING_OP_CLOSE of a connection on shared memory: every byte, then the end of stream" {
	uring_pair close_late
	[ "$status" -eq 0 ] && [ "$SERVER_STATUS" -eq 0 ]
	[ "$output" = "client: 1048576 bytes, then end of stream" ]
	[ "$SERVER_OUT" = "server: sent and closed with io_uring" ]
}
