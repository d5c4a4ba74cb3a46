#!/usr/bin/env bash
# make soak [SOAK_MINUTES=60] [SOAK_SAMPLE=60]: real programs under smc_run
# against one private smc_softd for a chosen time, every byte checked, and
# every SOAK_SAMPLE seconds a sample of what must stay flat: the daemon's
# descriptors, ring memfds and RSS, each server's descriptors and RSS, and
# the ACTIVE rows of smcss -a.  Not part of make check.
#
# The mix (each a loop of clients, all under smc_run, as are the servers):
#   web     nginx (2 workers, sendfile) and wrk with 32 connections, 10 s
#           rounds: no socket error, no non-2xx answer
#   bulk    50 MB downloads from python3 -m http.server by curl: sha256 equal
#   db      redis-server: redis-benchmark -c 20 (a pool) SET/GET rounds, and
#           redis-cli writing and reading back random values
#   sql     MariaDB (InnoDB on io_uring), when installed: sysbench OLTP
#           read-write rounds of 10 s with 4 clients (no FATAL), and a table
#           read over TCP equal to the same read over its UNIX socket
#   git     git clone over git daemon (protocol v2): the tree equal
#   short   a threaded server (a thread per connection, reading a random
#           amount) and 6 client processes making short connections
#
# At the end the clients stop; within 10 s there must be no ACTIVE row and
# no ring, the daemon must hold the descriptors it held before the load,
# and one more for each server process (each opens its control connection
# at its first connection, after that count) and 4, and each server at most
# 16 more than it held before the load.  During the load a sample takes the ACTIVE rows of
# smcss -a, the kernel's connected sockets of the servers' ports, and of
# the rows those not in the kernel (ghost); the median of the last third of
# the samples of ghost rows and of every RSS may not exceed the first
# third's median by more than SOAK_SLACK (default 25%, and 16): growth that
# goes on is a leak, a busy moment is not.  The table is printed; the last
# line is "soak: ok ..." or "soak: FAILED: ...".  Exit status 0 only if ok.
set -u
cd "$(dirname "$0")/.." || exit 2
top=$PWD
: "${SOAK_MINUTES:=60}" "${SOAK_SAMPLE:=60}" "${SOAK_SLACK:=25}" "${O:=build/soak}"
bin=$top/$O
RUN="$bin/smc_run"

for p in nginx wrk redis-server redis-benchmark redis-cli curl git python3 sha256sum; do
	command -v "$p" >/dev/null || { echo "soak: $p is not installed (scripts/install-deps.sh)"; exit 2; }
done
[ -x "$RUN" ] && [ -x "$bin/smc_softd" ] && [ -x "$bin/smcss" ] || { echo "soak: build $O first (make soak builds it)"; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/smc-soak.XXXXXX") || exit 2
export SMC_SOFT_SOCKET="$work/control" SMC_BACKEND=soft
unset LD_PRELOAD SMC_DEBUG
pids=()
cleanup() {
	touch "$work/stop"
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[i]}" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "${SOAK_KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_listen() { # PORT
	for _ in $(seq 200); do
		[ -n "$(ss -Hltn "sport = :$1")" ] && return 0
		sleep 0.05
	done
	echo "soak: nothing listens on port $1" >&2
	return 1
}
bgrun() { # NAME COMMAND...: in the background, output to $work/NAME.log
	local name=$1
	shift
	"$@" >"$work/$name.log" 2>&1 &
	pids+=($!)
}
fail() { echo "$*" >>"$work/failures"; }

"$bin/smc_softd" -f -s "$SMC_SOFT_SOCKET" 2>"$work/softd.log" &
softd=$!
pids+=("$softd")
for _ in $(seq 200); do [ -S "$SMC_SOFT_SOCKET" ] && break; sleep 0.05; done
[ -S "$SMC_SOFT_SOCKET" ] || { echo "soak: smc_softd did not start"; cat "$work/softd.log"; exit 1; }
daemon_fds() { ls "/proc/$softd/fd" 2>/dev/null | wc -l; }
daemon_rings() { ls -l "/proc/$softd/fd" 2>/dev/null | grep -c 'memfd:smc-dmb'; }
rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }
fds_of() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }

# ---- servers ---------------------------------------------------------------
mkdir -p "$work/www" "$work/nginx" "$work/git"
head -c $((50 * 1024 * 1024)) /dev/urandom >"$work/www/big"
head -c 4096 /dev/urandom >"$work/www/small"
big_sum=$(sha256sum <"$work/www/big" | cut -d' ' -f1)

web_port=$(free_port)
tests/progs/nginx_conf.sh "$work/nginx" "$web_port" "$work/www" 2
bgrun nginx "$RUN" nginx -e "$work/nginx/error.log" -p "$work/nginx" -c "$work/nginx/nginx.conf"
nginx_pid=$!
bulk_port=$(free_port)
(cd "$work/www" && exec "$RUN" python3 -m http.server --bind 127.0.0.1 "$bulk_port") >"$work/bulk_srv.log" 2>&1 &
bulk_pid=$!
pids+=("$bulk_pid")
redis_port=$(free_port)
bgrun redis "$RUN" redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no
redis_pid=$!
sql=
if command -v mariadbd >/dev/null && command -v sysbench >/dev/null; then
	sql=1
	sql_port=$(free_port)
	as=()
	[ "$(id -u)" -ne 0 ] || as=(--user=root)
	mariadb-install-db --no-defaults --datadir="$work/mdb" "${as[@]}" --skip-test-db \
		--auth-root-authentication-method=normal >"$work/mdbinit.log" 2>&1 ||
		{ echo "soak: mariadb-install-db failed"; cat "$work/mdbinit.log"; exit 1; }
	bgrun mdb "$RUN" mariadbd --no-defaults --datadir="$work/mdb" "${as[@]}" --port="$sql_port" \
		--bind-address=127.0.0.1 --socket="$work/mdb.sock" --pid-file="$work/mdb.pid" \
		--skip-grant-tables --skip-log-bin --innodb-buffer-pool-size=64M
	sql_pid=$!
fi
git_port=$(free_port)
repo=$work/git/repo
git init -q "$repo"
for i in $(seq 40); do head -c 40000 /dev/urandom | base64 >"$repo/f$i"; done
git -C "$repo" add . && git -C "$repo" -c user.email=s@s -c user.name=s commit -qm soak
bgrun gitd "$RUN" git daemon --reuseaddr --export-all --base-path="$work/git" \
	--listen=127.0.0.1 --port="$git_port" "$work/git"
git_pid=$!
cat >"$work/short_cli.py" <<'EOF'
import os, socket, sys, time
port, stop, n = int(sys.argv[1]), sys.argv[2], 0
while not os.path.exists(stop):
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(30)
    s.sendall(b"s" * 2000)
    got = s.recv(1)
    s.close()
    if got != b"k":
        print("short: no answer", flush=True)
        sys.exit(1)
    n += 1
print("short: %d connections" % n, flush=True)
EOF
short_port=$(free_port)
bgrun short_srv "$RUN" python3 tests/progs/thread_server.py --port "$short_port" --most 2000 --answer
short_pid=$!
for p in "$web_port" "$bulk_port" "$redis_port" "$git_port" "$short_port" ${sql:+"$sql_port"}; do
	wait_listen "$p" || exit 1
done
SB=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-user=root --tables=2 --table-size=5000)
if [ -n "$sql" ]; then
	mariadb -S "$work/mdb.sock" -u root -e 'CREATE DATABASE sbtest' &&
		"$RUN" sysbench oltp_read_write "${SB[@]}" --mysql-port="$sql_port" prepare >"$work/sbprep.log" 2>&1 ||
		{ echo "soak: sysbench prepare failed"; cat "$work/sbprep.log"; exit 1; }
fi
# the servers are up: their control connections and counters are the base
sleep 1
base_fds=$(daemon_fds)
ports="$web_port $bulk_port $redis_port $git_port $short_port${sql:+ $sql_port}"
# the kernel's sockets of the servers' ports, both ends, not listening
kernel_conns() {
	local f="" p
	for p in $ports; do f+="${f:+ or }sport = :$p or dport = :$p"; done
	ss -Htn state connected "( $f )" 2>/dev/null | grep -vc '^TIME-WAIT' || true
}

# ---- client loops ----------------------------------------------------------
stop=$work/stop
web_loop() {
	local out
	while [ ! -e "$stop" ]; do
		out=$("$RUN" wrk -t 2 -c 32 -d 10s "http://127.0.0.1:$web_port/small" 2>&1)
		grep -q 'Socket errors\|Non-2xx' <<<"$out" && fail "web: $(grep 'Socket errors\|Non-2xx' <<<"$out")"
		grep -q 'Requests/sec' <<<"$out" || fail "web: wrk said: $(tail -n 1 <<<"$out")"
		echo "web: $(grep 'Requests/sec' <<<"$out")"
	done
}
bulk_loop() {
	local sum
	while [ ! -e "$stop" ]; do
		sum=$("$RUN" curl -sf "http://127.0.0.1:$bulk_port/big" | sha256sum | cut -d' ' -f1)
		[ "$sum" = "$big_sum" ] && echo "bulk: ok" || fail "bulk: a download's sha256 differs"
	done
}
db_loop() {
	local v got
	while [ ! -e "$stop" ]; do
		"$RUN" redis-benchmark -p "$redis_port" -c 20 -n 20000 -t set,get -q >"$work/rb.out" 2>&1 ||
			fail "db: redis-benchmark: $(tail -n 1 "$work/rb.out")"
		for i in $(seq 20); do
			v=$(head -c 600 /dev/urandom | base64 -w0)
			"$RUN" redis-cli -p "$redis_port" set "soak$i" "$v" >/dev/null
			got=$("$RUN" redis-cli -p "$redis_port" get "soak$i")
			[ "$got" = "$v" ] || fail "db: soak$i read back differs"
		done
		echo "db: round ok"
	done
}
git_loop() {
	while [ ! -e "$stop" ]; do
		rm -rf "$work/clone"
		if timeout 120 "$RUN" git clone -q "git://127.0.0.1:$git_port/repo" "$work/clone" 2>"$work/clone.err" &&
			diff -rq -x .git "$repo" "$work/clone" >/dev/null; then
			echo "git: ok"
		else
			fail "git: clone failed or differs: $(tail -n 1 "$work/clone.err")"
		fi
	done
}
sql_loop() {
	local q='SELECT id, k, c, pad FROM sbtest1 ORDER BY id' a b
	while [ ! -e "$stop" ]; do
		"$RUN" sysbench oltp_read_write "${SB[@]}" --mysql-port="$sql_port" --threads=4 --time=10 \
			run >"$work/sb.out" 2>&1 && ! grep -q FATAL "$work/sb.out" ||
			fail "sql: sysbench: $(grep -m1 -E 'FATAL|error' "$work/sb.out")"
		a=$("$RUN" mariadb -h 127.0.0.1 -P "$sql_port" -u root -N -B sbtest -e "$q" | sha256sum)
		b=$(mariadb -S "$work/mdb.sock" -u root -N -B sbtest -e "$q" | sha256sum)
		[ "$a" = "$b" ] && echo "sql: round ok" || fail "sql: a read over TCP differs from the UNIX socket's"
	done
}
bgrun web web_loop
[ -z "$sql" ] || bgrun sql sql_loop
bgrun bulk bulk_loop
bgrun db db_loop
bgrun git git_loop
for i in $(seq 6); do bgrun "short$i" "$RUN" python3 "$work/short_cli.py" "$short_port" "$stop"; done

# ---- samples ---------------------------------------------------------------
servers="nginx:$nginx_pid bulk:$bulk_pid redis:$redis_pid gitd:$git_pid short:$short_pid${sql:+ mdb:$sql_pid}"
declare -A base_srv
for s in $servers; do base_srv[${s%%:*}]=$(fds_of "${s#*:}"); done
header="min rows kernel ghost rings dfds drss_kb"
for s in $servers; do header+=" ${s%%:*}_fds ${s%%:*}_kb"; done
echo "$header" | tee "$work/samples"
sample() { # MINUTE
	local rows kern s line
	kern=$(kernel_conns)
	rows=$("$bin/smcss" -a 2>/dev/null | grep -c '^ACTIVE')
	line="$1 $rows $kern $((rows > kern ? rows - kern : 0)) $(daemon_rings) $(daemon_fds) $(rss_kb "$softd")"
	for s in $servers; do line+=" $(fds_of "${s#*:}") $(rss_kb "${s#*:}")"; done
	echo "$line" | tee -a "$work/samples"
}
end=$((SECONDS + SOAK_MINUTES * 60))
t0=$SECONDS
while [ "$SECONDS" -lt "$end" ]; do
	sleep "$SOAK_SAMPLE"
	sample "$(((SECONDS - t0) / 60))"
	for s in $servers; do
		kill -0 "${s#*:}" 2>/dev/null || fail "server ${s%%:*} died"
	done
	kill -0 "$softd" 2>/dev/null || { fail "smc_softd died"; break; }
done

# ---- the end: clients stop, nothing may stay --------------------------------
touch "$stop"
for i in $(seq 6); do grep -h 'short:' "$work/short$i.log"; done | sort | uniq -c | head -3
wait_clients() {
	for _ in $(seq 600); do
		pgrep -f "$work/short_cli.py|wrk -t 2 -c 32|redis-benchmark -p $redis_port|git clone -q git://127.0.0.1:$git_port|curl -sf http://127.0.0.1:$bulk_port|sysbench oltp_read_write|mariadb -h 127.0.0.1" >/dev/null || return 0
		sleep 0.5
	done
}
wait_clients
for _ in $(seq 100); do
	[ "$("$bin/smcss" -a | grep -c '^ACTIVE')" -eq 0 ] && [ "$(daemon_rings)" -eq 0 ] && break
	sleep 0.1
done
rows=$("$bin/smcss" -a | grep -c '^ACTIVE')
rings=$(daemon_rings)
echo "after the load: $rows ACTIVE rows, $rings rings, daemon fds $(daemon_fds) (before the load $base_fds)"
[ "$rows" -eq 0 ] || { fail "after the load: $rows ACTIVE rows left"; "$bin/smcss" -a | head -20; }
[ "$rings" -eq 0 ] || fail "after the load: $rings rings left in the daemon"
# a server process opens its control connection at its first connection,
# after the base was taken: one each (nginx's workers too), and 4 more
nserv=$(($(wc -w <<<"$servers") + $(pgrep -c -P "$nginx_pid" || true)))
[ "$(daemon_fds)" -le $((base_fds + nserv + 4)) ] ||
	fail "after the load: the daemon holds $(daemon_fds) fds, $base_fds before and $nserv server processes"
for s in $servers; do
	n=$(fds_of "${s#*:}")
	echo "after the load: ${s%%:*} holds $n fds, ${base_srv[${s%%:*}]} before"
	[ "$n" -le $((base_srv[${s%%:*}] + 16)) ] ||
		fail "after the load: ${s%%:*} holds $n fds, ${base_srv[${s%%:*}]} before"
done

# flat: the median of the last third of each column (not the minute)
# against the first third's
awk -v slack="$SOAK_SLACK" '
	function median(from, to, col,    k, m, a, t, x, y) {
		m = 0
		for (k = from; k <= to; k++) a[++m] = v[k, col]
		for (x = 2; x <= m; x++)
			for (y = x; y > 1 && a[y - 1] > a[y]; y--) { t = a[y]; a[y] = a[y - 1]; a[y - 1] = t }
		return a[int((m + 1) / 2)]
	}
	NR == 1 { for (i = 2; i <= NF; i++) name[i] = $i; next }
	{ n++; for (i = 2; i <= NF; i++) v[n, i] = $i; cols = NF }
	END {
		if (n < 3) exit 0
		third = int(n / 3)
		for (i = 2; i <= cols; i++) {
			if (name[i] != "ghost" && name[i] !~ /_kb$/)
				continue
			m1 = median(1, third, i)
			m3 = median(n - third + 1, n, i)
			if (m3 > m1 * (1 + slack / 100) + 16)
				printf "grew: %s from a median of %d (first third) to %d (last third)\n", name[i], m1, m3
		}
	}' "$work/samples" | while read -r l; do fail "$l"; echo "$l"; done
if [ -s "$work/failures" ]; then
	sort "$work/failures" | uniq -c | sort -rn | head -20
	echo "soak: FAILED: $(sort -u "$work/failures" | wc -l) kinds of failure in $SOAK_MINUTES min (see above)"
	exit 1
fi
counts="web $(grep -c '^web:' "$work/web.log") wrk rounds, bulk $(grep -c '^bulk: ok' "$work/bulk.log") x 50 MB,"
counts+=" db $(grep -c '^db: round ok' "$work/db.log") rounds, git $(grep -c '^git: ok' "$work/git.log") clones"
[ -z "$sql" ] || counts+=", sql $(grep -c '^sql: round ok' "$work/sql.log") rounds"
echo "soak: ok: $SOAK_MINUTES min, $counts, every byte checked, everything flat"
