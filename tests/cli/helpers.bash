# Shared setup of the bats suites: load with `load helpers`.
bats_require_minimum_version 1.5.0
# The tools under test are the sanitizer build of `make check` ($SMC_BIN).
SMC_TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
: "${SMC_BIN:=$SMC_TOP/build/check}"
export SMC_BIN
export PATH="$SMC_BIN:$PATH"
EXPECTED="$BATS_TEST_DIRNAME/expected"

# No backend unless a suite starts one: auto mode finds no kernel SMC here and
# no soft backend on this private path.
export SMC_BACKEND=auto
export SMC_SOFT_SOCKET="${BATS_RUN_TMPDIR:-/tmp}/smc-no-backend.sock"

# The one-line error of a machine with neither backend, for a given tool.
no_backend_msg() {
	echo "$1: no SMC backend: the kernel has no SMC support (load it with 'modprobe smc') and no soft backend answers on $SMC_SOFT_SOCKET (start 'smc_softd')"
}

# True when this kernel offers AF_SMC.
kernel_has_smc() {
	python3 -c 'import socket,sys
try: socket.socket(43, socket.SOCK_STREAM, 0)
except OSError: sys.exit(1)'
}

# Compare $output with an expected file (tests/cli/expected/NAME); show a diff.
assert_output_file() {
	diff -u "$EXPECTED/$1" <(printf '%s\n' "$output")
}

# Start a private soft backend (smc_softd) for this test file or test; extra
# arguments go to the daemon.  Sets SMC_SOFT_SOCKET (SOFTD_SOCKET when set,
# e.g. a path other users can reach) and SMC_BACKEND=soft.
softd_start() {
	SOFTD_DIR=$(mktemp -d "${BATS_RUN_TMPDIR:-/tmp}/softd.XXXXXX")
	export SMC_SOFT_SOCKET="${SOFTD_SOCKET:-$SOFTD_DIR/control}"
	export SMC_BACKEND=soft
	"$SMC_BIN/smc_softd" -f -s "$SMC_SOFT_SOCKET" "$@" 2>"$SOFTD_DIR/log" 3>&- &
	SOFTD_PID=$!
	for _ in $(seq 200); do
		[ -S "$SMC_SOFT_SOCKET" ] && return 0
		kill -0 "$SOFTD_PID" 2>/dev/null || break
		sleep 0.05
	done
	echo "smc_softd did not start:" >&2
	cat "$SOFTD_DIR/log" >&2
	return 1
}

# Stop it; fails when the daemon did not exit cleanly (sanitizer reports,
# leaks) or left its socket behind.
softd_stop() {
	local rc=0
	[ -n "${SOFTD_PID:-}" ] || return 0
	kill -TERM "$SOFTD_PID" 2>/dev/null
	wait "$SOFTD_PID" || rc=$?
	SOFTD_PID=
	[ ! -e "$SMC_SOFT_SOCKET" ] || { echo "socket left behind" >&2; rc=1; }
	[ "$rc" -eq 0 ] || cat "$SOFTD_DIR/log" >&2
	return "$rc"
}

# The daemon's open files, one "fd -> target" line each.
softd_fds() {
	local f
	for f in /proc/"$SOFTD_PID"/fd/*; do
		printf '%s -> %s\n' "${f##*/}" "$(readlink "$f")"
	done | sort -n
}

# Them once the daemon has taken in the hang-ups of processes that just
# exited: two reads 0.1 s apart agree (5 s at most).
softd_fds_settled() {
	local a b
	a=$(softd_fds)
	for _ in $(seq 50); do
		sleep 0.1
		b=$(softd_fds)
		[ "$a" = "$b" ] && break
		a=$b
	done
	echo "$a"
}

# The daemon's files are BEFORE again (within 5 s), else the difference and a failure.
assert_softd_fds_back() { # BEFORE
	for _ in $(seq 50); do
		[ "$(softd_fds)" = "$1" ] && return 0
		sleep 0.1
	done
	diff -u <(echo "$1") <(softd_fds) ||
		{ echo "the daemon's fds changed over the run (above)"; return 1; }
}

# ---- real servers under smc_run (soft_rsync.bats, soft_postgres.bats) ----

# A program the suite cannot do without is missing: a failure in CI (CI set,
# where scripts/install-deps.sh has installed it), elsewhere a skip as in
# soft_sshd.bats (which Debian 12's bats 1.8 reports from setup_file as a
# failure too).
missing_program() { # MESSAGE
	if [ -n "${CI:-}" ]; then
		echo "$1" >&2
		return 1
	fi
	skip "$1"
}

# A TCP port of 127.0.0.1 that is free now.
tcp_free_port() {
	python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# Wait (10 s at most) until something listens on TCP PORT; false when not,
# or as soon as process PID (when given) is gone.
wait_tcp_listen() { # PORT [PID]
	for _ in $(seq 200); do
		[ -n "$(ss -Hltn "sport = :$1")" ] && return 0
		[ -z "${2:-}" ] || kill -0 "$2" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# The connections of smcss -a that have PORT at one end: "INODE MODE" lines,
# MODE being SMCD, SMCR or "TCP 0x...".
port_conn_rows() { # PORT
	smcss -a | awk -v p=":$1" '$1 == "ACTIVE" && ($4 ~ p"$" || $5 ~ p"$") {
		m = $7; if (NF > 7) m = m " " $8; print $3, m }'
}

# Ring memfds the daemon holds now.
softd_ring_count() {
	softd_held_fds | grep -c 'memfd:smc-dmb' || true
}

# The daemon's sockets and memfds, one "fd -> target" a line.
softd_held_fds() {
	local f t
	for f in /proc/"$SOFTD_PID"/fd/*; do
		t=$(readlink "$f") || continue
		case $t in socket:* | /memfd:*) printf '%s -> %s\n' "${f##*/}" "$t" ;; esac
	done | sort -n
}

# While process PID runs (at most SECS seconds), take snapshots of the rows
# of PORT other than those of inodes OLD (a list taken before PID started);
# write one line per snapshot to FILE: the modes of those rows, sorted,
# joined by ",".
watch_conn_modes() { # PORT PID FILE SECS [OLD]
	local before=${5:-} end=$((SECONDS + $4))
	: >"$3"
	while kill -0 "$2" 2>/dev/null && [ "$SECONDS" -lt "$end" ]; do
		port_conn_rows "$1" | awk -v old="$before" '
			BEGIN { n = split(old, o, "\n"); for (i = 1; i <= n; i++) seen[o[i]] = 1 }
			!($1 in seen) { sub(/^[^ ]+ /, ""); print }' | sort | paste -sd, - >>"$3"
	done
}

# Wait (2 s at most) until smcss -a has no row of PORT and the daemon holds
# no ring; true when both are so.
settle_conn_rows() { # PORT
	for _ in $(seq 40); do
		[ -z "$(port_conn_rows "$1")" ] && [ "$(softd_ring_count)" -eq 0 ] && return 0
		sleep 0.05
	done
	return 1
}

# Seconds since START (a `date +%s.%N`), two decimals.
secs_since() { # START
	awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f\n", b - a }'
}

# Once the clients of a server on PORT are done: no row of PORT and no ring
# in the daemon while the server still runs; then STOP... stops it, and there
# is no row either, and the daemon holds the sockets and memfds FDS it held
# before the server started (softd_held_fds).  Both states are taken before
# either is judged; what is wrong is shown.
assert_nothing_left() { # PORT FDS STOP...
	local port=$1 fds=$2 live_ok=1 live_rows live_fds after_rows after_fds
	shift 2
	settle_conn_rows "$port" || live_ok=0
	live_rows=$(smcss -a)
	live_fds=$(softd_held_fds)
	"$@"
	for _ in $(seq 40); do
		[ -z "$(port_conn_rows "$port")" ] && [ "$(softd_held_fds)" = "$fds" ] && break
		sleep 0.05
	done
	after_rows=$(port_conn_rows "$port")
	after_fds=$(softd_held_fds)
	if [ -n "$after_rows" ] || [ "$after_fds" != "$fds" ]; then
		echo "server stopped: rows of port $port left (inode mode):"
		echo "$after_rows"
		echo "the daemon's sockets and memfds, before the server started and now:"
		diff -u <(echo "$fds") <(echo "$after_fds") || true
		return 1
	fi
	if [ "$live_ok" -eq 0 ]; then
		echo "server running, its clients done 2 s ago: rows of port $port or rings left"
		echo "$live_rows"
		echo "the daemon's sockets and memfds:"
		echo "$live_fds"
		return 1
	fi
}

# The snapshots of watch_conn_modes in FILE show MODES (e.g. "SMCD,SMCD")
# at least once; else they are shown.
saw_conn_modes() { # FILE MODES
	grep -qx "$2" "$1" && return 0
	echo "smcss -a never showed the connections as $2; snapshots (count, modes):"
	sort "$1" | uniq -c
	return 1
}
