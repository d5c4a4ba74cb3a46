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
	PORT=$(awk '/^port /{print $2}' "$T/srv")
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
	[ ${#PIDS[@]} -eq 0 ] || wait "${PIDS[@]}" 2>/dev/null
	[ -z "${SERVER:-}" ] || wait "$SERVER" 2>/dev/null
	softd_stop
	rm -rf "$T"
}

# Ring memfds the daemon holds now.
daemon_memfds() {
	ls -l "/proc/$SOFTD_PID/fd" 2>/dev/null | grep -c 'memfd:smc-dmb' || true
}

@test "churn: 4 clients x 2 s of short connections: no ghost row, no ring memfd left" {
	local i rows
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
	for _ in $(seq 40); do
		rows=$(smcss -a | grep -c '^ACTIVE' || true)
		[ "$rows" -eq 0 ] && [ "$(daemon_memfds)" -eq 0 ] && break
		sleep 0.05
	done
	smcss -a >&2
	[ "$rows" -eq 0 ]
	[ "$(daemon_memfds)" -eq 0 ]
	# and the server's listener is still there
	[ "$(smcss -l | grep -c "127.0.0.1:$PORT ")" -eq 1 ]
}
