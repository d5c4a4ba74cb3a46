#!/usr/bin/env bats
# smc_softd is only the broker: killed, it takes no established connection
# with it (their data moves through memory the two ends already share), and
# new connections fall back to plain TCP and still work.

load helpers
bats_require_minimum_version 1.5.0

RUN="$SMC_BIN/smc_run"
ECHO="$SMC_TOP/tests/progs/echo.py"

setup() {
	softd_start
	T=$BATS_TEST_TMPDIR
}

teardown() {
	[ -z "${SERVER:-}" ] || { kill "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null; }
	[ -z "${SOFTD_PID:-}" ] || softd_stop || true
}

start_server() {
	"$RUN" python3 "$ECHO" server --host 127.0.0.1 --port 0 >"$T/server.out" 2>&1 3>&- &
	SERVER=$!
	for _ in $(seq 200); do
		PORT=$(sed -n 's/^port //p' "$T/server.out" 2>/dev/null || true)
		[ -n "$PORT" ] && return 0
		sleep 0.05
	done
	cat "$T/server.out"
	return 1
}

# Rows of smcss -a (JSON) for connections on PORT, as "mode" lines.
modes() {
	"$SMC_BIN/smcss" -a -j | python3 -c 'import json, sys
port = int(sys.argv[1])
for s in json.load(sys.stdin)["sockets"]:
    if s["state"] == "ACTIVE" and port in (s["local_port"], s["peer_port"]):
        print(s["mode"])' "$PORT"
}

@test "daemon killed: the established connection goes on, the next one is plain TCP" {
	start_server
	"$RUN" python3 "$ECHO" client --host 127.0.0.1 --port "$PORT" --conns 2 \
		--bytes 200000000 --chunk 65536 --linger 2 >"$T/client.out" 2>&1 3>&- &
	local client=$! seen=
	for _ in $(seq 100); do
		seen=$(modes)
		[ "$(grep -c SMCD <<<"$seen")" -eq 4 ] && break
		sleep 0.05
	done
	[ "$(grep -c SMCD <<<"$seen")" -eq 4 ]
	kill -KILL "$SOFTD_PID"
	wait "$SOFTD_PID" || true
	SOFTD_PID=
	rm -f "$SMC_SOFT_SOCKET"
	wait "$client"
	run cat "$T/client.out"
	[ "$output" = "ok conns=2 bytes=200000000" ]
	# a new connection: no daemon to pair it, plain TCP, same result
	SMC_DEBUG=1 run --separate-stderr "$RUN" python3 "$ECHO" client --host 127.0.0.1 \
		--port "$PORT" --conns 1 --bytes 1000000 --chunk 1000
	[ "$status" -eq 0 ]
	[ "$output" = "ok conns=1 bytes=1000000" ]
	# nothing but, maybe, the word that the daemon is not there (a wait of
	# epoll that asks for a doorbell said so; a data call does not look
	# without the socket's file)
	! grep -v "^libsmc-preload: soft backend not reachable: .*, using TCP$" <<<"$stderr" | grep -q .
}

# A program that ran before the daemon restarted pairs its next connection
# with the new daemon (its old control connection is found broken and a new
# one opened at once); before, that connection stayed TCP while its peer
# waited for it ("pairing not asked: Broken pipe").
@test "daemon restarted: a server that ran before pairs its next connection" {
	start_server
	"$RUN" python3 "$ECHO" client --host 127.0.0.1 --port "$PORT" --conns 1 \
		--bytes 100000 --chunk 1000 >"$T/first.out" 2>&1 3>&-
	[ "$(cat "$T/first.out")" = "ok conns=1 bytes=100000" ]
	# the same socket path: the server resolved it when it started
	local path=$SMC_SOFT_SOCKET
	softd_stop
	SOFTD_SOCKET=$path softd_start
	"$RUN" python3 "$ECHO" client --host 127.0.0.1 --port "$PORT" --conns 1 \
		--bytes 1000000 --chunk 1000 --until "$T/seen" >"$T/client.out" 2>&1 3>&- &
	local client=$! seen=
	# the client holds its connection open until the rows were seen (a
	# look takes seconds on a loaded machine: a fixed linger can end first)
	for _ in $(seq 1200); do
		seen=$(modes)
		[ "$(grep -c SMCD <<<"$seen")" -eq 2 ] && break
		kill -0 "$client" 2>/dev/null || break
		sleep 0.05
	done
	touch "$T/seen"
	echo "$seen" >&2
	[ "$(grep -c SMCD <<<"$seen")" -eq 2 ]
	wait "$client"
	[ "$(cat "$T/client.out")" = "ok conns=1 bytes=1000000" ]
}

# exec_cut.py MODE up to "ready", the daemon killed (and with again, a new
# one on the same path), then the execve: the client's exit status 0 and
# its output in $T/client.out and $T/client.err.
exec_after_daemon_loss() { # MODE AGAIN
	local client status=0 path=$SMC_SOFT_SOCKET
	start_server
	"$RUN" python3 "$SMC_TOP/tests/progs/exec_cut.py" "$PORT" "$1" "$T/go" "$2" \
		>"$T/client.out" 2>"$T/client.err" 3>&- &
	client=$!
	for _ in $(seq 200); do
		grep -qx ready "$T/client.out" && break
		sleep 0.05
	done
	grep -qx ready "$T/client.out"
	kill -KILL "$SOFTD_PID"
	wait "$SOFTD_PID" || true
	SOFTD_PID=
	rm -f "$SMC_SOFT_SOCKET"
	[ "$2" != again ] || SOFTD_SOCKET=$path softd_start
	touch "$T/go"
	for _ in $(seq 200); do
		kill -0 "$client" 2>/dev/null || break
		sleep 0.05
	done
	kill -KILL "$client" 2>/dev/null || true
	wait "$client" || status=$?
	cat "$T/client.out" "$T/client.err"
	[ "$status" -eq 0 ]
}

# The connection reset, with one line naming why.
exec_reset_after_daemon_loss() { # AGAIN ERROR
	exec_after_daemon_loss keep "$1"
	[ "$(tail -n 1 "$T/client.out")" = "new image: reset" ]
	grep -qx "libsmc-preload: exec of /.*: fd 7 is on shared memory and $2: the connection is reset" "$T/client.err"
}

# A connection on shared memory that neither end wrote to yet, after the
# daemon restarted: the new image gets it as TCP for good (its region's
# daemon is gone), and both ends go on there.  Before, the hand-over hung:
# it held the control lock that ending the old row took again.
@test "daemon restarted: an execve with a connection on shared memory not cut over keeps it on TCP" {
	exec_after_daemon_loss uncut again
	[ "$(cat "$T/client.out")" = $'ready\nnew image read 1000' ]
	[ ! -s "$T/client.err" ]
	# no row is left of it in the new daemon
	[ -z "$(modes)" ]
}

# The daemon killed, an execve cannot hand a connection on shared memory to
# the new image (no daemon holds its region): it is reset at both ends,
# with one line, instead of the new image reading TCP behind the ring (it
# waited for ever before).
@test "daemon killed: an execve with a connection on shared memory resets it, with one line" {
	exec_reset_after_daemon_loss once "no daemon to hand it over"
}

# The same with a new daemon the process talks to already: it does not
# know the region either.
@test "daemon restarted: an execve with a connection on shared memory from before resets it" {
	exec_reset_after_daemon_loss again "its daemon is gone"
}
