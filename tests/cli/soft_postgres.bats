#!/usr/bin/env bats
# PostgreSQL under smc_run: a private cluster (initdb in a temporary
# directory, trust authentication, fsync off) on a high port of 127.0.0.1,
# run by an unprivileged user (postgres, else nobody, when the suite runs as
# root; then the preload library and the daemon's socket are in a directory
# that user can reach).  The postmaster forks a backend for each connection
# and closes its own copy at once; backends wait in epoll, pgbench in
# ppoll/select over several connections per thread.  Clients, all over TCP:
# pgbench -i (client-side generated COPY of 500,000 rows), a TPC-B-like run
# of 4 clients on 2 threads, a select-only run, and a \copy of a table of
# about 57 MB out to a file and back into a second table, both ends under
# smc_run, and one round with clients that are not preloaded.  Each checks
# the data (counts, sums, md5 of the rows and of the copied files, pgbench's
# failed transactions), smcss -a while the connections are open, and
# (its own test) that nothing of them stays: no row, no ring memfd or socket
# in the daemon, with the server running and after it stopped.  Times and
# tps go to the TAP output as "# ..." lines; the last test is the plain TCP
# reference.  A client still running after 30 s (each takes at most 6 s on
# plain TCP) is ended and fails its test.
load helpers
bats_require_minimum_version 1.5.0

# The directory with initdb, postgres, pgbench and psql: pg_config's, else
# the newest /usr/lib/postgresql/*/bin (Debian keeps them there).
pg_bindir() {
	local d
	for d in "$(pg_config --bindir 2>/dev/null)" $(printf '%s\n' /usr/lib/postgresql/*/bin | sort -rV); do
		[ -n "$d" ] && [ -x "$d/initdb" ] && [ -x "$d/postgres" ] && [ -x "$d/pgbench" ] &&
			[ -x "$d/psql" ] && { echo "$d"; return 0; }
	done
	return 1
}

setup_file() {
	PG_BIN=$(pg_bindir) ||
		missing_program "PostgreSQL (initdb, postgres, pgbench, psql) is not installed (scripts/install-deps.sh installs postgresql)"
	export PG_BIN
}

setup() {
	# a directory the server's user can reach (BATS_RUN_TMPDIR is 0700)
	T=$(mktemp -d "${TMPDIR:-/tmp}/smc-pg.XXXXXX")
	chmod 755 "$T"
	mkdir "$T/bin" "$T/sock" "$T/data"
	# the library next to smc_run, where the server's user can read both
	cp "$SMC_BIN/smc_run" "$SMC_BIN/libsmc-preload.so" "$T/bin/"
	AS_PG=()
	if [ "$(id -u)" -eq 0 ]; then
		PG_USER=postgres
		id -u "$PG_USER" >/dev/null 2>&1 || PG_USER=nobody
		chown "$PG_USER:" "$T/sock" "$T/data"
		AS_PG=(setpriv --reuid "$(id -u "$PG_USER")" --regid "$(id -g "$PG_USER")" --init-groups --)
	fi
	# the daemon's socket (mode 0666) in a directory of mode 0755
	SOFTD_SOCKET="$T/softd/control" softd_start
	unset SMC_SOFT_PAIR_AFTER SMC_DEBUG
	RUN="$T/bin/smc_run"
	FDS_BEFORE=$(softd_held_fds)
	PORT=$(tcp_free_port)
	export PGGSSENCMODE=disable PGSSLMODE=disable PGCONNECT_TIMEOUT=10
	"${AS_PG[@]}" "$PG_BIN/initdb" -D "$T/data" -U smc --auth=trust --locale=C -E UTF8 \
		--no-sync >"$T/initdb.log" 2>&1 || { cat "$T/initdb.log"; false; }
	PGPID=
}

teardown() {
	stop_postgres
	softd_stop
	if [ -z "${BATS_TEST_COMPLETED:-}" ]; then
		echo "--- postgres log" >&2
		tail -20 "$T/pg.log" >&2
	fi
	rm -rf "$T"
}

# The server as PG_USER, under the library when PRELOAD is $RUN; waits until
# it accepts connections.
start_postgres() { # [PRELOAD]
	"${AS_PG[@]}" ${1:+"$1"} "$PG_BIN/postgres" -D "$T/data" -p "$PORT" -k "$T/sock" \
		-c listen_addresses=127.0.0.1 -c fsync=off >"$T/pg.log" 2>&1 3>&- &
	PGPID=$!
	for _ in $(seq 200); do
		grep -q 'ready to accept connections' "$T/pg.log" && return 0
		kill -0 "$PGPID" 2>/dev/null || break
		sleep 0.05
	done
	cat "$T/pg.log"
	return 1
}

# Fast shutdown: the backends end, the postmaster after them.
stop_postgres() {
	[ -n "${PGPID:-}" ] || return 0
	kill -INT "$PGPID" 2>/dev/null
	wait "$PGPID" 2>/dev/null
	PGPID=
}

# psql and pgbench over TCP, under the library when PRELOAD is $RUN.
pg_sql() { # PRELOAD ARG...
	local pre=$1
	shift
	timeout -k 5 30 ${pre:+"$pre"} "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 \
		-p "$PORT" -U smc -d postgres "$@"
}
pg_bench() { # PRELOAD ARG...
	local pre=$1
	shift
	timeout -k 5 30 ${pre:+"$pre"} "$PG_BIN/pgbench" -h 127.0.0.1 -p "$PORT" -U smc "$@" postgres
}

# pgbench ARGS in the background, its output in $T/bench, watched by smcss -a
# (snapshots in $T/modes); sets BENCH_STATUS and BENCH_SECS.
bench_watched() { # PRELOAD ARG...
	local old start pid
	old=$(port_conn_rows "$PORT" | awk '{ print $1 }')
	start=$(date +%s.%N)
	pg_bench "$@" >"$T/bench" 2>&1 3>&- &
	pid=$!
	watch_conn_modes "$PORT" "$pid" "$T/modes" 70 "$old"
	BENCH_STATUS=0
	wait "$pid" || BENCH_STATUS=$?
	BENCH_SECS=$(secs_since "$start")
}

# pgbench's report in $T/bench: it ended well, ran transactions, none failed.
assert_bench_ok() {
	[ "$BENCH_STATUS" -eq 0 ] && grep -q '^number of failed transactions: 0 ' "$T/bench" &&
		grep -Eq '^number of transactions actually processed: [1-9]' "$T/bench" && return 0
	echo "pgbench: status $BENCH_STATUS after $BENCH_SECS s"
	cat "$T/bench"
	return 1
}

bench_tps() {
	sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$T/bench"
}

# A snapshot of $T/modes shows at least N connections, all of them MODE.
saw_n_modes() { # N MODE
	awk -F, -v n="$1" -v m="$2" '
		{ k = 0; for (i = 1; i <= NF; i++) if ($i == m) k++; if (k >= n && k == NF) ok = 1 }
		END { exit !ok }' "$T/modes" && return 0
	echo "smcss -a never showed $1 connections or more, all $2; snapshots (count, modes):"
	sort "$T/modes" | uniq -c
	return 1
}

# count, sum and md5 of the rows of TABLE, ordered by id.
table_sum() { # PRELOAD TABLE
	pg_sql "$1" -At -c "SELECT count(*), sum(id), md5(string_agg(t::text, ',' ORDER BY id)) FROM $2 t"
}

# \copy of big (ordered by id) out to $T/big.copy, watched by smcss -a
# (snapshots in $T/modes); sets COPY_STATUS and COPY_SECS.
copy_out_watched() { # PRELOAD
	local old start pid
	old=$(port_conn_rows "$PORT" | awk '{ print $1 }')
	start=$(date +%s.%N)
	pg_sql "$1" -c "\\copy (SELECT * FROM big ORDER BY id) TO '$T/big.copy'" 3>&- &
	pid=$!
	watch_conn_modes "$PORT" "$pid" "$T/modes" 70 "$old"
	COPY_STATUS=0
	wait "$pid" || COPY_STATUS=$?
	COPY_SECS=$(secs_since "$start")
}

BIG_ROWS=700000
make_big() { # PRELOAD
	pg_sql "$1" -c "CREATE TABLE big AS SELECT g AS id, md5(g::text) AS a, md5((g * 7)::text) AS b,
		(g * 0.37)::numeric(12,2) AS c FROM generate_series(1, $BIG_ROWS) g"
}

@test "postgres under smc_run: pgbench -i -s 5 (client-side COPY of 500,000 rows) from a preloaded client" {
	start_postgres "$RUN"
	local start
	start=$(date +%s.%N)
	run -0 pg_bench "$RUN" -i -s 5 -q
	echo "# pgbench -i -s 5, both ends preloaded: $(secs_since "$start") s" >&3
	run -0 pg_sql "$RUN" -At -c "SELECT count(*), sum(aid), sum(abalance) FROM pgbench_accounts"
	[ "$output" = "500000|125000250000|0" ]
	run -0 pg_sql "$RUN" -At -c "SELECT count(*) FROM pgbench_branches"
	[ "$output" = 5 ]
}

@test "postgres under smc_run: pgbench -c 4 -j 2 -T 5 over SMC-D, no failed transaction" {
	start_postgres "$RUN"
	run -0 pg_bench "$RUN" -i -s 2 -q
	bench_watched "$RUN" -c 4 -j 2 -T 5
	echo "# pgbench -c 4 -j 2 -T 5, both ends preloaded, watched: $(bench_tps) tps" >&3
	assert_bench_ok
	# the 4 connections, each end of each
	saw_n_modes 8 SMCD
	# the history table has a row for each transaction
	local txns
	txns=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$T/bench")
	run -0 pg_sql "$RUN" -At -c "SELECT count(*) FROM pgbench_history"
	[ "$output" = "$txns" ]
	# the balances moved by the transactions add up in every table
	run -0 pg_sql "$RUN" -At -c "SELECT (SELECT sum(abalance) FROM pgbench_accounts) =
		(SELECT sum(bbalance) FROM pgbench_branches) AND (SELECT sum(bbalance) FROM pgbench_branches) =
		(SELECT sum(tbalance) FROM pgbench_tellers) AND (SELECT sum(delta) FROM pgbench_history) =
		(SELECT sum(tbalance) FROM pgbench_tellers)"
	[ "$output" = t ]
}

@test "postgres under smc_run: pgbench -S -c 4 -j 2 -T 3 (select only) over SMC-D, no failed transaction" {
	start_postgres "$RUN"
	run -0 pg_bench "$RUN" -i -s 2 -q
	bench_watched "$RUN" -S -c 4 -j 2 -T 3
	echo "# pgbench -S -c 4 -j 2 -T 3, both ends preloaded, watched: $(bench_tps) tps" >&3
	assert_bench_ok
	saw_n_modes 8 SMCD
}

@test "postgres under smc_run: \\copy of a 57 MB table out and back into another, preloaded psql, checksums equal" {
	local start want
	start_postgres "$RUN"
	make_big "$RUN"
	copy_out_watched "$RUN"
	echo "# \\copy out of $(stat -c %s "$T/big.copy") bytes, both ends preloaded, watched: $COPY_SECS s" >&3
	[ "$COPY_STATUS" -eq 0 ]
	[ "$(stat -c %s "$T/big.copy")" -ge 50000000 ]
	[ "$(wc -l <"$T/big.copy")" -eq "$BIG_ROWS" ]
	saw_conn_modes "$T/modes" "SMCD,SMCD"
	start=$(date +%s.%N)
	pg_sql "$RUN" -c "CREATE TABLE big2 (LIKE big)" -c "\\copy big2 FROM '$T/big.copy'"
	echo "# \\copy in, both ends preloaded: $(secs_since "$start") s" >&3
	pg_sql "$RUN" -c "\\copy (SELECT * FROM big2 ORDER BY id) TO '$T/big2.copy'"
	[ "$(md5sum <"$T/big2.copy")" = "$(md5sum <"$T/big.copy")" ]
	want=$(table_sum "$RUN" big)
	[[ $want == "$BIG_ROWS|$((BIG_ROWS * (BIG_ROWS + 1) / 2))|"* ]]
	[ "$(table_sum "$RUN" big2)" = "$want" ]
}

@test "postgres under smc_run: clients without the library (TCP 0x03010000): pgbench and \\copy, data intact" {
	start_postgres "$RUN"
	run -0 pg_bench "" -i -s 2 -q
	bench_watched "" -c 2 -j 1 -T 3
	echo "# pgbench -c 2 -j 1 -T 3, client not preloaded, watched: $(bench_tps) tps" >&3
	assert_bench_ok
	saw_n_modes 2 "TCP 0x03010000"
	make_big ""
	pg_sql "" -c "\\copy (SELECT * FROM big ORDER BY id) TO '$T/big.copy'"
	pg_sql "" -c "CREATE TABLE big2 (LIKE big)" -c "\\copy big2 FROM '$T/big.copy'"
	[ "$(wc -l <"$T/big.copy")" -eq "$BIG_ROWS" ]
	[ "$(table_sum "" big2)" = "$(table_sum "" big)" ]
}

@test "postgres under smc_run: nothing is left of closed connections, server running or stopped" {
	start_postgres "$RUN"
	run -0 pg_bench "$RUN" -i -s 1 -q
	run -0 pg_bench "$RUN" -c 4 -j 2 -T 2
	run -0 pg_sql "$RUN" -At -c "SELECT count(*) FROM pgbench_accounts"
	[ "$output" = 100000 ]
	run -0 pg_sql "" -At -c "SELECT count(*) FROM pgbench_branches"
	[ "$output" = 1 ]
	assert_nothing_left "$PORT" "$FDS_BEFORE" stop_postgres
}

@test "postgres on plain TCP, the reference: the same workload, data intact" {
	start_postgres
	local start
	start=$(date +%s.%N)
	run -0 pg_bench "" -i -s 5 -q
	echo "# pgbench -i -s 5, plain TCP: $(secs_since "$start") s" >&3
	bench_watched "" -c 4 -j 2 -T 5
	echo "# pgbench -c 4 -j 2 -T 5, plain TCP, watched: $(bench_tps) tps" >&3
	assert_bench_ok
	bench_watched "" -S -c 4 -j 2 -T 3
	echo "# pgbench -S -c 4 -j 2 -T 3, plain TCP, watched: $(bench_tps) tps" >&3
	assert_bench_ok
	make_big ""
	copy_out_watched ""
	echo "# \\copy out of $(stat -c %s "$T/big.copy") bytes, plain TCP, watched: $COPY_SECS s" >&3
	[ "$COPY_STATUS" -eq 0 ]
	start=$(date +%s.%N)
	pg_sql "" -c "CREATE TABLE big2 (LIKE big)" -c "\\copy big2 FROM '$T/big.copy'"
	echo "# \\copy in, plain TCP: $(secs_since "$start") s" >&3
	[ "$(table_sum "" big2)" = "$(table_sum "" big)" ]
}
