#!/usr/bin/env bats
# Many short connections against one preloaded server: once they are closed,
# neither smcss nor the daemon keeps anything of them (no ghost row, no ring
# memfd), while the processes that made them still run.
load helpers

setup() {
	T=$(mktemp -d "${BATS_RUN_TMPDIR:-/tmp}/churn.XXXXXX")
	PIDS=()
	softd_start
	unset SMC_SOFT_PAIR_AFTER SMC_DEBUG
	RUN="$SMC_BIN/smc_run"
	"$RUN" python3 "$SMC_TOP/tests/progs/echo.py" server --host 127.0.0.1 >"$T/srv" 2>&1 3>&- &
	SERVER=$!
	for _ in $(seq 200); do grep -q '^port ' "$T/srv" && break; sleep 0.05; done
	PORT=$(awk '/^port /{print $2}' "$T/srv" 2>/dev/null || true)
	[ -n "$PORT" ]
	# Each client: connections with one exchange for SECS seconds, then one
	# closed right after connect; it stays alive until $T/stop exists.
	cat >"$T/client.py" <<-EOF
	import os, socket, sys, time
	end = time.time() + float(sys.argv[1])
	n = 0
	while time.time() < end:
	    s = socket.create_connection(("127.0.0.1", $PORT))
	    s.sendall(b"x" * 100)
	    got = b""
	    while len(got) < 100:
	        got += s.recv(100 - len(got))
	    s.close()
	    n += 1
	socket.create_connection(("127.0.0.1", $PORT)).close()
	print("done", n, flush=True)
	while not os.path.exists("$T/stop"):
	    time.sleep(0.05)
	EOF
}

teardown() {
	touch "$T/stop"
	[ -z "${SERVER:-}" ] || kill "$SERVER" 2>/dev/null
	[ -z "${SERVER2:-}" ] || kill "$SERVER2" 2>/dev/null
	[ ${#PIDS[@]} -eq 0 ] || wait "${PIDS[@]}" 2>/dev/null
	[ -z "${SERVER:-}" ] || wait "$SERVER" 2>/dev/null
	[ -z "${SERVER2:-}" ] || wait "$SERVER2" 2>/dev/null
	softd_stop
	rm -rf "$T"
}

# The port a second server announced in OUT ("port N"): PORT2; fails
# without one.
server2_port() { # OUT
	for _ in $(seq 200); do grep -q '^port ' "$1" && break; sleep 0.05; done
	PORT2=$(awk '/^port /{print $2}' "$1" 2>/dev/null || true)
	[ -n "$PORT2" ]
}

# A second server: COMMAND... in the background (SERVER2), its output in OUT.
server2_start() { # OUT COMMAND...
	local out=$1
	shift
	"$@" >"$out" 2>&1 3>&- &
	SERVER2=$!
	server2_port "$out"
}

# Ring memfds the daemon holds now.
daemon_memfds() {
	ls -l "/proc/$SOFTD_PID/fd" 2>/dev/null | grep -c 'memfd:smc-dmb' || true
}

# No ACTIVE row in smcss and no ring memfd in the daemon, within 5 s; else
# show both and fail.
assert_no_ghost() {
	local rows
	for _ in $(seq 100); do
		rows=$(smcss -a | grep -c '^ACTIVE' || true)
		[ "$rows" -eq 0 ] && [ "$(daemon_memfds)" -eq 0 ] && return 0
		sleep 0.05
	done
	smcss -a >&2
	ls -l "/proc/$SOFTD_PID/fd" >&2
	return 1
}

@test "churn: 4 clients x 2 s of short connections: no ghost row, no ring memfd left" {
	local i
	PIDS=()
	for i in 1 2 3 4; do
		"$RUN" python3 "$T/client.py" 2 >"$T/c$i.out" 2>"$T/c$i.err" 3>&- &
		PIDS+=($!)
	done
	for i in 1 2 3 4; do
		for _ in $(seq 200); do grep -q '^done' "$T/c$i.out" && break; sleep 0.05; done
		grep -q '^done [1-9]' "$T/c$i.out" || { cat "$T/c$i.err"; false; }
	done
	# the clients still run: what they closed must be gone already
	assert_no_ghost
	# and the server's listener is still there
	[ "$(smcss -l | grep -c "127.0.0.1:$PORT ")" -eq 1 ]
}

# A thread per connection that reads a random amount and closes, while the
# main thread's blocking accept() offers the young connections it sweeps:
# a thread's close between the sweep's look and its PAIR left a
# registration nobody ended (6 to 14 ghost rows after 50 clients for 5 s).
@test "churn: a threaded server whose threads close while accept() offers: no ghost row" {
	local i port2
	cat >"$T/thr_cli.py" <<-'EOF'
	import socket, sys, time
	port, end, n = int(sys.argv[1]), time.time() + float(sys.argv[2]), 0
	while time.time() < end:
	    s = socket.create_connection(("127.0.0.1", port))
	    s.sendall(b"y" * 300)
	    s.close()
	    n += 1
	print("done", n, flush=True)
	EOF
	server2_start "$T/srv2" "$RUN" python3 "$SMC_TOP/tests/progs/thread_server.py"
	port2=$PORT2
	PIDS=()
	for i in $(seq 12); do
		"$RUN" python3 "$T/thr_cli.py" "$port2" 3 >"$T/t$i.out" 2>"$T/t$i.err" 3>&- &
		PIDS+=($!)
	done
	for i in $(seq 12); do
		wait "${PIDS[i-1]}" || { cat "$T/t$i.err"; false; }
		grep -q '^done [1-9]' "$T/t$i.out"
	done
	PIDS=()
	# the server still runs: what its threads closed must be gone already
	assert_no_ghost
}

@test "churn: a server whose fd table is full keeps no registration it could not take" {
	local port2
	# a second server that can open only 64 files: some PAIR replies find
	# no room for the region's fd, so those connections stay TCP
	( ulimit -n 64; exec "$RUN" python3 "$SMC_TOP/tests/progs/echo.py" server --host 127.0.0.1 ) \
		>"$T/srv2" 2>&1 3>&- &
	SERVER2=$!
	server2_port "$T/srv2"
	port2=$PORT2
	for round in 1 2 3; do
		run "$RUN" python3 "$SMC_TOP/tests/progs/echo.py" client --host 127.0.0.1 --port "$port2" \
			--conns 100 --bytes 20000
		echo "round $round: $output" >&2
		[ "$status" -eq 0 ]
		[ "$output" = "ok conns=100 bytes=20000" ]
	done
	assert_no_ghost
}

@test "churn: registrations closed while the daemon stands still end with the next request" {
	cat >"$T/hold.py" <<-EOF
	import os, socket, time
	conns = [socket.create_connection(("127.0.0.1", $PORT)) for _ in range(400)]
	for s in conns:
	    s.sendall(b"y" * 10)
	    assert s.recv(10) == b"y" * 10
	print("open", flush=True)
	while not os.path.exists("$T/close"):
	    time.sleep(0.02)
	for s in conns:
	    s.close()
	print("closed", flush=True)
	while not os.path.exists("$T/again"):
	    time.sleep(0.02)
	s = socket.create_connection(("127.0.0.1", $PORT))
	s.sendall(b"z")
	assert s.recv(1) == b"z"
	s.close()
	print("again", flush=True)
	while not os.path.exists("$T/stop"):
	    time.sleep(0.05)
	EOF
	# more closes than the daemon's socket buffer holds requests
	SMC_SNDBUF=16384 SMC_RCVBUF=16384 "$RUN" python3 "$T/hold.py" >"$T/hold.out" 2>&1 3>&- &
	PIDS+=($!)
	for _ in $(seq 1200); do grep -q '^open' "$T/hold.out" && break; sleep 0.05; done
	grep -q '^open' "$T/hold.out"
	# the last offers may still wait in the daemon's queue: their rows follow
	for _ in $(seq 200); do [ "$(smcss -a | grep -c 'SMCD')" -eq 800 ] && break; sleep 0.05; done
	[ "$(smcss -a | grep -c 'SMCD')" -eq 800 ]
	# the daemon stands still: its queue of requests from the server fills
	kill -STOP "$SOFTD_PID"
	touch "$T/close"
	for _ in $(seq 1200); do grep -q '^closed' "$T/hold.out" && break; sleep 0.05; done
	sleep 1
	kill -CONT "$SOFTD_PID"
	# what could not go goes with each process's next request to the daemon
	touch "$T/again"
	for _ in $(seq 1200); do grep -q '^again' "$T/hold.out" && break; sleep 0.05; done
	grep -q '^again' "$T/hold.out"
	assert_no_ghost
}

# A forking server (rsync, PostgreSQL): the parent closes its copy at once,
# the child serves and ends without closing; its registration goes with it.
@test "churn: a fork-per-connection server whose children exit without closing leaves nothing" {
	local port
	cat >"$T/forksrv.py" <<-'EOF2'
	import os, signal, socket, sys
	l = socket.socket()
	l.bind(("127.0.0.1", 0))
	l.listen(8)
	print("port", l.getsockname()[1], flush=True)
	for i in range(4):
	    c, _ = l.accept()
	    if os.fork() == 0:
	        c.sendall(b"x" * 100000)
	        c.recv(1)
	        if i % 2:
	            os._exit(0)
	        sys.exit(0)
	    c.close()
	    os.wait()
	print("served", flush=True)
	while True:
	    signal.pause()
	EOF2
	server2_start "$T/forksrv.out" "$RUN" python3 "$T/forksrv.py"
	port=$PORT2
	cat >"$T/fetch.py" <<-EOF2
	import socket
	s = socket.create_connection(("127.0.0.1", $port))
	got = b""
	while len(got) < 100000:
	    got += s.recv(100000 - len(got))
	assert got == b"x" * 100000
	s.send(b"k")
	s.recv(1)
	s.close()
	EOF2
	for _ in 1 2 3 4; do
		"$RUN" python3 "$T/fetch.py"
	done
	for _ in $(seq 200); do grep -q '^served' "$T/forksrv.out" && break; sleep 0.05; done
	grep -q '^served' "$T/forksrv.out"
	# the server still runs: its children's connections must be gone
	assert_no_ghost
}
