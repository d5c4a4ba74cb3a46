#!/usr/bin/env bats
# MariaDB under smc_run: InnoDB reads and writes its files with io_uring
# (liburing), its clients' connections are plain sockets.  A private server
# (mariadb-install-db in a temporary directory, no grant tables) on a free
# port of 127.0.0.1 and sysbench's OLTP read-write clients, both under
# smc_run with a private smc_softd: the connections must be SMCD while the
# server's io_uring instance works, sysbench must see no failure, and what
# the server answers over them must be what it answers over its UNIX socket.
# doc/soft-lifecycle.md 1.3.
load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	local p
	for p in mariadbd mariadb-install-db mariadb sysbench; do
		command -v "$p" >/dev/null ||
			missing_program "$p is not installed (scripts/install-deps.sh installs mariadb-server and sysbench)"
	done
}

setup() {
	T=$(mktemp -d "${TMPDIR:-/tmp}/smc-mdb.XXXXXX")
	AS=()
	[ "$(id -u)" -ne 0 ] || AS=(--user=root)
	softd_start
	unset SMC_DEBUG SMC_SOFT_URING
	RUN="$SMC_BIN/smc_run"
	PORT=$(tcp_free_port)
	MDB_PID=
	mariadb-install-db --no-defaults --datadir="$T/data" "${AS[@]}" --skip-test-db \
		--auth-root-authentication-method=normal >"$T/install.log" 2>&1 ||
		{ cat "$T/install.log"; false; }
}

teardown() {
	if [ -n "$MDB_PID" ]; then
		kill -TERM "$MDB_PID" 2>/dev/null
		wait "$MDB_PID" 2>/dev/null
	fi
	softd_stop
	[ -n "${BATS_TEST_COMPLETED:-}" ] || { echo "--- mariadb log" >&2; tail -20 "$T/error.log" >&2; }
	rm -rf "$T"
}

start_mariadb() {
	"$RUN" mariadbd --no-defaults --datadir="$T/data" "${AS[@]}" --port="$PORT" \
		--bind-address=127.0.0.1 --socket="$T/sock" --pid-file="$T/pid" --skip-grant-tables \
		--skip-log-bin --innodb-buffer-pool-size=64M --log-error="$T/error.log" 3>&- &
	MDB_PID=$!
	for _ in $(seq 300); do
		grep -q 'ready for connections' "$T/error.log" 2>/dev/null && return 0
		kill -0 "$MDB_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "mariadbd did not start"
	return 1
}

# A query's answer over the UNIX socket (no library) and over TCP under smc_run.
over_socket() { mariadb -S "$T/sock" -u root -N -B sbtest -e "$1"; }
over_smc() { "$RUN" mariadb -h 127.0.0.1 -P "$PORT" -u root -N -B sbtest -e "$1"; }

@test "soft_mariadb: InnoDB on io_uring, sysbench OLTP read-write under smc_run: SMCD, no failure, answers intact" {
	start_mariadb
	# where the kernel allows io_uring, InnoDB uses it (else libaio, and this proves less)
	if [ "$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0)" = 0 ]; then
		grep -q 'InnoDB: Using io_uring' "$T/error.log"
	fi
	mariadb -S "$T/sock" -u root -e 'CREATE DATABASE sbtest'
	local sb=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$PORT" --mysql-user=root
		--tables=2 --table-size=5000)
	run timeout 120 "$RUN" sysbench oltp_read_write "${sb[@]}" prepare
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	# smcss while the clients run
	(sleep 2; env -u LD_PRELOAD "$SMC_BIN/smcss" -a >"$T/rows") &
	local probe=$!
	run timeout 120 "$RUN" sysbench oltp_read_write "${sb[@]}" --threads=4 --time=4 run
	wait "$probe"
	echo "$output" | grep -E 'transactions:|ignored errors:' >&3
	# "ignored errors" are InnoDB's deadlocks between the clients, as on TCP
	[ "$status" -eq 0 ]
	! echo "$output" | grep -q FATAL
	echo "$output" | grep -q '^ *transactions: *[1-9]'
	cat "$T/rows"
	# 4 clients: both ends of each, all on shared memory
	[ "$(grep -c '^ACTIVE .* SMCD *$' "$T/rows")" -ge 8 ]
	! grep -q '^ACTIVE .* TCP' "$T/rows"
	# what sysbench left, over TCP under smc_run and over the UNIX socket
	local q='SELECT COUNT(*), SUM(k) FROM sbtest1'
	[ "$(over_smc "$q")" = "$(over_socket "$q")" ]
	q='SELECT id, k, c, pad FROM sbtest2 ORDER BY id'
	[ "$(over_smc "$q" | md5sum)" = "$(over_socket "$q" | md5sum)" ]
	[ "$(over_smc "$q" | wc -l)" -eq 5000 ]
}
