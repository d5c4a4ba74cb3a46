#!/usr/bin/env bash
# bench/programs.sh: programs we did not write (pgbench against PostgreSQL,
# rsync, scp, curl and wrk against nginx, redis-benchmark, sysbench against
# MariaDB, whose InnoDB reads its files with io_uring, wrk and a Node.js
# client against a Node.js server: libuv event loops), plain TCP
# against both ends under smc_run (soft backend, private daemon), in
# interleaved rounds; throughput and CPU cost of both sides, medians of the
# rounds.  Prints a table with the goals and writes
# bench/results/programs.json.  See bench/README.md for the method.
#
#   bench/programs.sh [--quick] [--rounds N] [--only LIST] [--out FILE] [--keep]
#
# --quick: short runs and small data (about 2.5 min in all); the default takes
# about 8 min.  --only: a comma-separated list of groups (pgbench, rsync,
# scp, http, redis, wrk, mariadb, node).  --keep: keep the working directory (every run's
# output, results.tsv with the values of each round) and say where it is.
# Uses the normal build in the top directory (make): ./smc_run,
# ./libsmc-preload.so, ./smc_softd, ./smcd.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
quick=0
keep=0
rounds=3
only=all
out="$top/bench/results/programs.json"
ALL_GROUPS="pgbench rsync scp http redis wrk mariadb node"
args=("$@")

usage() {
	sed -n '2,16s/^# \{0,1\}//p' "$0"
}

while [ $# -gt 0 ]; do
	case "$1" in
	--quick) quick=1 ;;
	--rounds) rounds=${2:?--rounds needs a number}; shift ;;
	--only) only=${2:?--only needs a list}; shift ;;
	--out) out=${2:?--out needs a file}; shift ;;
	--keep) keep=1 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "programs.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
	esac
	shift
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "programs.sh: --rounds: not a number" >&2; exit 2; }

# As root, everything runs in a network namespace of its own (unshare -n,
# its loopback up): no other program's traffic on its loopback, whose IP
# octet counter then tells what TCP carried in each run.
netns=0
if [ "${SMC_PROGRAMS_NETNS:-}" = 1 ]; then
	netns=1
elif [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null && command -v ip >/dev/null &&
	unshare -n true 2>/dev/null; then
	export SMC_PROGRAMS_NETNS=1
	exec unshare -n -- bash -c 'ip link set lo up && exec "$0" "$@"' "$0" "${args[@]}"
fi
unset SMC_PROGRAMS_NETNS
[ "$only" != all ] || only=${ALL_GROUPS// /,}
declare -A WANT
for g in ${only//,/ }; do
	[[ " $ALL_GROUPS " == *" $g "* ]] ||
		{ echo "programs.sh: --only: unknown group '$g' ($ALL_GROUPS)" >&2; exit 2; }
	WANT[$g]=1
done
want() { [ -n "${WANT[$1]:-}" ]; }

for f in "$top/smc_run" "$top/smc_softd" "$top/libsmc-preload.so" "$top/smcd"; do
	[ -x "$f" ] || { echo "programs.sh: $f missing: run make first" >&2; exit 1; }
done
need=(python3 ss timeout)
! want pgbench || need+=(pgbench setpriv)
! want rsync || need+=(rsync)
! want scp || need+=(/usr/sbin/sshd ssh scp ssh-keygen)
! want http || need+=(nginx curl)
! want wrk || need+=(nginx wrk)
! want redis || need+=(redis-server redis-benchmark)
! want mariadb || need+=(mariadbd mariadb-install-db mariadb sysbench)
! want node || need+=(node wrk)
for p in "${need[@]}"; do
	command -v "$p" >/dev/null ||
		{ echo "programs.sh: $p not installed (scripts/install-deps.sh)" >&2; exit 1; }
done
# PostgreSQL's programs: pg_config's directory, else the newest
# /usr/lib/postgresql/*/bin (Debian keeps initdb and postgres there).
PG_BIN=
if want pgbench; then
	for d in "$(pg_config --bindir 2>/dev/null)" $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -rV); do
		if [ -n "$d" ] && [ -x "$d/initdb" ] && [ -x "$d/postgres" ] && [ -x "$d/pgbench" ]; then
			PG_BIN=$d
			break
		fi
	done
	[ -n "$PG_BIN" ] || { echo "programs.sh: PostgreSQL (initdb, postgres, pgbench) not installed" >&2; exit 1; }
fi

# ---- parameters ----------------------------------------------------------
if [ "$quick" = 1 ]; then
	PG_SCALE=4      # pgbench -i -s: 400 000 accounts
	PG_T=3          # pgbench -T seconds
	TREE_SMALL=300 TREE_MEDIUM=8 TREE_LARGE=1 TREE_LARGE_MB=16  # ~45 MB
	BIG_MB=256      # the file of scp and the HTTP download
	REDIS_N=20000   # requests per redis-benchmark test
	REDIS_T4_N=40000
	WRK_SECS=2
	MDB_ROWS=10000  # sysbench --table-size, 4 tables
	MDB_T=3         # sysbench --time seconds
	BLOB_MB=256     # the Node.js server's blob
else
	PG_SCALE=10
	PG_T=10
	TREE_SMALL=1500 TREE_MEDIUM=24 TREE_LARGE=2 TREE_LARGE_MB=40  # ~200 MB
	BIG_MB=1024
	REDIS_N=200000
	REDIS_T4_N=400000
	WRK_SECS=8
	MDB_ROWS=50000
	MDB_T=8
	BLOB_MB=1024
fi
BIG_BYTES=$((BIG_MB * 1024 * 1024))

# ---- working directory, daemon, cleanup ------------------------------------
# tmpfs when there is room: the transfers write their copies into it, and
# disk write-back would only add noise.  Mode 0755: the PostgreSQL server's
# user reaches the library and the daemon's socket in it.
base=${TMPDIR:-/tmp}
if [ -d /dev/shm ] && [ -w /dev/shm ] &&
	[ "$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')" -gt $((6 * 1024 * 1024)) ]; then
	base=/dev/shm
fi
tmp=$(mktemp -d "$base/smc-programs.XXXXXX") || exit 1
chmod 755 "$tmp"
SOFTD_PID=
SERVER_PIDS=()
cleanup() {
	local pid
	for pid in "${SERVER_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null
	done
	for pid in "${SERVER_PIDS[@]}"; do
		wait "$pid" 2>/dev/null
	done
	if [ -n "$SOFTD_PID" ]; then
		kill -TERM "$SOFTD_PID" 2>/dev/null
		wait "$SOFTD_PID" 2>/dev/null
	fi
	if [ "$keep" = 1 ]; then
		log "programs.sh: kept $tmp"
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { printf '%s\n' "$*" >&2; }

free_port() {
	python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

wait_listen() { # PORT PID
	for _ in $(seq 400); do
		[ -n "$(ss -Hltn "sport = :$1")" ] && return 0
		kill -0 "$2" 2>/dev/null || break
		sleep 0.05
	done
	log "programs.sh: nothing listens on port $1"
	return 1
}

# The library and smc_run where every server's user can read them.
mkdir "$tmp/bin"
cp "$top/smc_run" "$top/libsmc-preload.so" "$tmp/bin/"
chmod 755 "$tmp/bin" "$tmp/bin/smc_run"
SMC_RUN="$tmp/bin/smc_run"
SMCD="$top/smcd"

# Helpers in one python3 script:
#   cpuwrap OUT CMD...  runs CMD, writes "wall utime stime" (seconds) of CMD
#                       and every descendant it waited for (wait4's rusage)
#                       to OUT, exits with CMD's status
#   tree PID...         for each PID: CPU seconds (utime+stime+cutime+cstime)
#                       of the process and all its live descendants
#   stats FILE          the daemon's counters (smcd -j stats) in FILE as
#                       "smc total fallback handshake_errors rx_bytes"
cat >"$tmp/helper.py" <<'EOF'
import json, os, sys, time
from collections import defaultdict

def cpuwrap(out, argv):
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(argv[0], argv)
        except OSError as e:
            sys.stderr.write("cpuwrap: %s: %s\n" % (argv[0], e))
        os._exit(127)
    while True:
        try:
            _, status, ru = os.wait4(pid, 0)
            break
        except InterruptedError:
            continue
    wall = time.monotonic() - t0
    with open(out, "w") as f:
        f.write("%.6f %.6f %.6f\n" % (wall, ru.ru_utime, ru.ru_stime))
    if os.WIFSIGNALED(status):
        sys.exit(128 + os.WTERMSIG(status))
    sys.exit(os.WEXITSTATUS(status))

def tree(roots):
    tck = os.sysconf("SC_CLK_TCK")
    cpu, kids = {}, defaultdict(list)
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                s = f.read()
        except OSError:
            continue
        fl = s[s.rfind(")") + 2:].split()
        # fields 4 (ppid) and 14-17 (utime stime cutime cstime)
        kids[int(fl[1])].append(int(d))
        cpu[int(d)] = sum(int(x) for x in fl[11:15])
    res = []
    for r in roots:
        total, todo = 0, [int(r)]
        while todo:
            p = todo.pop()
            total += cpu.get(p, 0)
            todo.extend(kids.get(p, ()))
        res.append("%.2f" % (total / tck))
    print(" ".join(res))

def stats(path):
    try:
        d = json.load(open(path))
        c = d["connections"]
        print(c["smc"], c["total"], d["fallback"]["client"] + d["fallback"]["server"],
              d["handshake_errors"]["client"] + d["handshake_errors"]["server"], d["rx"]["bytes"])
    except Exception as e:
        print("bad")

cmd = sys.argv[1]
if cmd == "cpuwrap":
    cpuwrap(sys.argv[2], sys.argv[3:])
elif cmd == "tree":
    tree(sys.argv[2:])
elif cmd == "stats":
    stats(sys.argv[2])
EOF
helper() { python3 "$tmp/helper.py" "$@"; }

# IP octets received on the loopback so far (IpExt InOctets).
lo_octets() {
	awk '$1 == "IpExt:" { if (n++) { print $(c) } else { for (i = 2; i <= NF; i++) if ($i == "InOctets") c = i } }' \
		/proc/net/netstat
}

mkdir "$tmp/softd"
chmod 755 "$tmp/softd"
"$top/smc_softd" -f -s "$tmp/softd/control" 2>"$tmp/softd.log" &
SOFTD_PID=$!
for _ in $(seq 200); do
	[ -S "$tmp/softd/control" ] && break
	sleep 0.05
done
[ -S "$tmp/softd/control" ] || { log "programs.sh: smc_softd did not start"; cat "$tmp/softd.log" >&2; exit 1; }
export SMC_BACKEND=soft SMC_SOFT_SOCKET="$tmp/softd/control"
unset SMC_SPIN_USEC SMC_DEBUG SMC_SOFT_PAIR_AFTER

# Start a server in the background: NAME COMMAND... (stdout and stderr in
# $tmp/NAME.log); its pid in SRV_PID.
server() {
	local name=$1
	shift
	"$@" >"$tmp/$name.log" 2>&1 </dev/null &
	SRV_PID=$!
	SERVER_PIDS+=("$SRV_PID")
}

declare -A PORT ROOT
pre_of() { # MODE: the preload prefix, in the array PRE
	PRE=()
	[ "$1" != smc ] || PRE=("$SMC_RUN")
}

# ---- data ------------------------------------------------------------------
if want http || want scp; then
	mkdir -p "$tmp/www"
	head -c "$BIG_BYTES" /dev/urandom >"$tmp/www/big.bin" || exit 1
	head -c 1024 /dev/urandom >"$tmp/www/small.bin"
fi
TREE_BYTES=0 TREE_FILES=0
if want rsync; then
	# sizes from a seeded generator, contents random
	read -r TREE_FILES TREE_BYTES < <(python3 - "$tmp/tree" "$TREE_SMALL" "$TREE_MEDIUM" \
		"$TREE_LARGE" "$TREE_LARGE_MB" <<'EOF'
import os, random, sys
root, ns, nm, nl, lmb = sys.argv[1], *map(int, sys.argv[2:])
rnd, total, files = random.Random(7), 0, 0
def put(path, n):
    global total, files
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(os.urandom(n))
    total += n
    files += 1
for i in range(ns):
    put(f"{root}/small/d{i % 20:02d}/s{i:04d}", rnd.randint(0, 48 << 10))
for i in range(nm):
    put(f"{root}/medium/m{i:02d}", rnd.randint(1 << 20, 8 << 20))
for i in range(nl):
    put(f"{root}/large/l{i}", lmb << 20)
put(f"{root}/deep/a/b/c/d/e/empty", 0)
print(files, total)
EOF
	)
	[ "$TREE_BYTES" -gt 0 ] || { log "programs.sh: cannot make the rsync tree"; exit 1; }
fi

# ---- servers: one per mode, each started once ------------------------------
log "programs.sh: starting servers in $tmp"

if want pgbench; then
	AS_PG=()
	PG_USER=$(id -un)
	if [ "$(id -u)" -eq 0 ]; then
		PG_USER=postgres
		id -u "$PG_USER" >/dev/null 2>&1 || PG_USER=nobody
		AS_PG=(setpriv --reuid "$(id -u "$PG_USER")" --regid "$(id -g "$PG_USER")" --init-groups --)
	fi
	export PGGSSENCMODE=disable PGSSLMODE=disable PGCONNECT_TIMEOUT=10
	for m in tcp smc; do
		mkdir -p "$tmp/pg_$m/data" "$tmp/pg_$m/sock"
		[ "$(id -u)" -ne 0 ] || chown -R "$PG_USER:" "$tmp/pg_$m"
		"${AS_PG[@]}" "$PG_BIN/initdb" -D "$tmp/pg_$m/data" -U smc --auth=trust --locale=C \
			-E UTF8 --no-sync >"$tmp/initdb_$m.log" 2>&1 ||
			{ log "programs.sh: initdb failed"; cat "$tmp/initdb_$m.log" >&2; exit 1; }
	done
fi
pg_start() { # MODE
	local m=$1
	PORT[pg_$m]=$(free_port)
	pre_of "$m"
	server "pg_$m" "${AS_PG[@]}" "${PRE[@]}" "$PG_BIN/postgres" -D "$tmp/pg_$m/data" \
		-p "${PORT[pg_$m]}" -k "$tmp/pg_$m/sock" -c listen_addresses=127.0.0.1 -c fsync=off
	ROOT[pg_$m]=$SRV_PID
	for _ in $(seq 400); do
		grep -q 'ready to accept connections' "$tmp/pg_$m.log" && return 0
		kill -0 "$SRV_PID" 2>/dev/null || break
		sleep 0.05
	done
	log "programs.sh: postgres ($m) did not start"
	cat "$tmp/pg_$m.log" >&2
	exit 1
}

# Node.js, one thread on libuv's event loop: /small is 1 KiB, /blob BLOB_MB
# MiB from memory, both with keep-alive; the client reads the blob with
# Node's http module and prints "200 BYTES".
if want node; then
	cat >"$tmp/node_server.js" <<'EOF'
const http = require("http");
const small = Buffer.alloc(1024, 120);
const blob = Buffer.alloc(Number(process.argv[3]) * 1048576, 98);
http.createServer((req, res) => {
	const body = req.url === "/blob" ? blob : small;
	res.writeHead(200, { "Content-Length": body.length });
	res.end(body);
}).listen(Number(process.argv[2]), "127.0.0.1");
EOF
	cat >"$tmp/node_client.js" <<'EOF'
const http = require("http");
http.get(process.argv[2], (res) => {
	let n = 0;
	res.on("data", (c) => { n += c.length; });
	res.on("end", () => { console.log(res.statusCode, n); });
}).on("error", (e) => { console.error(e.message); process.exit(1); });
EOF
fi

# MariaDB: InnoDB reads and writes its files with io_uring (liburing), its
# connections are the clients'.  As root it runs as root (--user=root).
mdb_start() { # MODE
	local m=$1 d="$tmp/mdb_$1" as=()
	[ "$(id -u)" -ne 0 ] || as=(--user=root)
	mkdir -p "$d"
	mariadb-install-db --no-defaults --datadir="$d/data" "${as[@]}" --skip-test-db \
		--auth-root-authentication-method=normal >"$tmp/mdbinit_$m.log" 2>&1 ||
		{ log "programs.sh: mariadb-install-db failed"; cat "$tmp/mdbinit_$m.log" >&2; exit 1; }
	PORT[mdb_$m]=$(free_port)
	pre_of "$m"
	server "mdb_$m" "${PRE[@]}" mariadbd --no-defaults --datadir="$d/data" "${as[@]}" \
		--port="${PORT[mdb_$m]}" --bind-address=127.0.0.1 --socket="$d/sock" \
		--pid-file="$d/pid" --skip-grant-tables --skip-log-bin --innodb-buffer-pool-size=256M \
		--max-connections=200 --log-error="$d/error.log"
	ROOT[mdb_$m]=$SRV_PID
	wait_listen "${PORT[mdb_$m]}" "$SRV_PID" || { cat "$d/error.log" >&2; exit 1; }
	grep -q 'InnoDB: Using io_uring' "$d/error.log" ||
		log "programs.sh: MariaDB ($m) does not use io_uring here: $(grep -m1 -i 'aio\|uring' "$d/error.log")"
}
SYSBENCH_DB=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-user=root --tables=4)

rsyncd_conf() { # MODE
	cat >"$tmp/rsyncd_$1.conf" <<EOF
port = ${PORT[rsync_$1]}
address = 127.0.0.1
use chroot = no
uid = $(id -un)
gid = $(id -gn)
pid file = $tmp/rsyncd_$1.pid
log file = $tmp/rsyncd_$1.log.txt
[tree]
path = $tmp/tree
read only = yes
EOF
}

if want scp; then
	ssh-keygen -q -t ed25519 -N '' -f "$tmp/host" && ssh-keygen -q -t ed25519 -N '' -f "$tmp/user" || exit 1
	[ "$(id -u)" -ne 0 ] || mkdir -p /run/sshd
	SSH_OPTS=(-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes
		-o LogLevel=ERROR -i "$tmp/user")
fi
sshd_conf() { # MODE
	cat >"$tmp/sshd_$1.conf" <<EOF
Port ${PORT[scp_$1]}
ListenAddress 127.0.0.1
HostKey $tmp/host
PidFile $tmp/sshd_$1.pid
AuthorizedKeysFile $tmp/user.pub
PermitRootLogin prohibit-password
Subsystem sftp internal-sftp
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
EOF
}

# nginx: 4 workers, sendfile, keep-alive; it keeps SMC_BACKEND,
# SMC_SOFT_SOCKET and LD_PRELOAD with env (it clears its workers'
# environment otherwise).
nginx_conf() { # MODE
	local d="$tmp/nginx_$1"
	mkdir -p "$d"
	{
		[ "$(id -u)" -ne 0 ] || echo "user root;"
		cat <<EOF
worker_processes 4;
daemon off;
env SMC_BACKEND;
env SMC_SOFT_SOCKET;
env LD_PRELOAD;
pid $d/nginx.pid;
error_log $d/error.log;
events { worker_connections 1024; }
http {
	access_log off;
	sendfile on;
	keepalive_requests 1000000;
	default_type application/octet-stream;
	client_body_temp_path $d/body;
	proxy_temp_path $d/proxy;
	fastcgi_temp_path $d/fastcgi;
	uwsgi_temp_path $d/uwsgi;
	scgi_temp_path $d/scgi;
	server {
		listen 127.0.0.1:${PORT[nginx_$1]};
		root $tmp/www;
	}
}
EOF
	} >"$d/nginx.conf"
}

for m in tcp smc; do
	pre_of "$m"
	if want pgbench; then
		pg_start "$m"
	fi
	if want rsync; then
		PORT[rsync_$m]=$(free_port)
		rsyncd_conf "$m"
		server "rsyncd_$m" "${PRE[@]}" rsync --daemon --no-detach --config="$tmp/rsyncd_$m.conf"
		ROOT[rsync_$m]=$SRV_PID
		wait_listen "${PORT[rsync_$m]}" "$SRV_PID" || { cat "$tmp/rsyncd_$m.log" >&2; exit 1; }
	fi
	if want scp; then
		PORT[scp_$m]=$(free_port)
		sshd_conf "$m"
		server "sshd_$m" "${PRE[@]}" /usr/sbin/sshd -D -e -f "$tmp/sshd_$m.conf"
		ROOT[scp_$m]=$SRV_PID
		wait_listen "${PORT[scp_$m]}" "$SRV_PID" || { cat "$tmp/sshd_$m.log" >&2; exit 1; }
	fi
	if want http || want wrk; then
		PORT[nginx_$m]=$(free_port)
		nginx_conf "$m"
		server "nginx_$m" "${PRE[@]}" nginx -e "$tmp/nginx_$m/error.log" -p "$tmp/nginx_$m" \
			-c "$tmp/nginx_$m/nginx.conf"
		ROOT[nginx_$m]=$SRV_PID
		wait_listen "${PORT[nginx_$m]}" "$SRV_PID" || { cat "$tmp/nginx_$m/error.log" >&2; exit 1; }
	fi
	if want mariadb; then
		mdb_start "$m"
	fi
	if want node; then
		PORT[node_$m]=$(free_port)
		server "node_$m" "${PRE[@]}" node "$tmp/node_server.js" "${PORT[node_$m]}" "$BLOB_MB"
		ROOT[node_$m]=$SRV_PID
		wait_listen "${PORT[node_$m]}" "$SRV_PID" || { cat "$tmp/node_$m.log" >&2; exit 1; }
	fi
	if want redis; then
		PORT[redis_$m]=$(free_port)
		mkdir -p "$tmp/redis_$m"
		server "redis_$m" "${PRE[@]}" redis-server --port "${PORT[redis_$m]}" --bind 127.0.0.1 \
			--save '' --appendonly no --dir "$tmp/redis_$m"
		ROOT[redis_$m]=$SRV_PID
		wait_listen "${PORT[redis_$m]}" "$SRV_PID" || { cat "$tmp/redis_$m.log" >&2; exit 1; }
	fi
done

if want pgbench; then
	for m in tcp smc; do
		log "programs.sh: pgbench -i -s $PG_SCALE ($m)"
		pre_of "$m"
		timeout -k 5 600 "${PRE[@]}" "$PG_BIN/pgbench" -i -s "$PG_SCALE" -q -h 127.0.0.1 \
			-p "${PORT[pg_$m]}" -U smc postgres >"$tmp/pginit_$m.log" 2>&1 ||
			{ log "programs.sh: pgbench -i failed"; cat "$tmp/pginit_$m.log" >&2; exit 1; }
		# a clean start for both: vacuumed, statistics current
		timeout -k 5 600 "$PG_BIN/psql" -X -q -h 127.0.0.1 -p "${PORT[pg_$m]}" -U smc \
			-d postgres -c 'VACUUM ANALYZE' -c CHECKPOINT >>"$tmp/pginit_$m.log" 2>&1 ||
			{ log "programs.sh: VACUUM failed"; cat "$tmp/pginit_$m.log" >&2; exit 1; }
	done
fi
if want mariadb; then
	for m in tcp smc; do
		log "programs.sh: sysbench prepare, 4 tables of $MDB_ROWS rows ($m)"
		pre_of "$m"
		{ mariadb -h 127.0.0.1 -P "${PORT[mdb_$m]}" -u root -e 'CREATE DATABASE sbtest' &&
		  timeout -k 5 600 "${PRE[@]}" sysbench oltp_read_only "${SYSBENCH_DB[@]}" \
			--mysql-port="${PORT[mdb_$m]}" --table-size="$MDB_ROWS" prepare; } \
			>"$tmp/mdbprep_$m.log" 2>&1 ||
			{ log "programs.sh: sysbench prepare failed"; cat "$tmp/mdbprep_$m.log" >&2; exit 1; }
	done
fi
log "programs.sh: setup done in $SECONDS s"

# ---- one run -----------------------------------------------------------------
# The tests: NAME GROUP SERVER-KEY; each run is measured by run_one.
TESTS=(
	"pgbench_tpcb pgbench pg"
	"pgbench_select pgbench pg"
	"rsync_pull rsync rsync"
	"scp_download scp scp"
	"http_bulk_curl http nginx"
	"http_bulk_blocking http nginx"
	"http_bulk_exec http nginx"
	"redis_set redis redis"
	"redis_get redis redis"
	"redis_get_threads4 redis redis"
	"redis_get_tcpkept redis redis"
	"nginx_wrk_4w wrk nginx"
	"node_wrk_8c node node"
	"node_blob_node node node"
	"mariadb_point_select mariadb mdb"
	"mariadb_read_only mariadb mdb"
)

results="$tmp/results.tsv"
: >"$results"

fail() { # ROUND TEST MODE REASON...
	local r=$1 t=$2 m=$3
	shift 3
	echo "$r $t $m FAIL $*" >>"$results"
	log "programs.sh: $t $m round $r FAILED: $*"
	log "--- $tmp/out.$r.$t.$m (tail):"
	tail -n 8 "$tmp/out.$r.$t.$m" >&2
}

# run_one ROUND TEST MODE: the client (under cpuwrap, in a timeout), its
# server's process tree and the daemon measured before and after, the daemon's
# counters checked: for smc, the connections were SMC-D ones, none fell back;
# for tcp, the daemon saw nothing.
run_one() {
	local r=$1 t=$2 m=$3 key=$4
	local port=${PORT[${key}_$m]} root=${ROOT[${key}_$m]}
	local -a PRE
	pre_of "$m"
	local o="$tmp/out.$r.$t.$m" w="$tmp/wrap.$r.$t.$m"
	local -a cmd
	# min_conns: SMC-D connection ends the daemon must count (both ends of
	# each measured connection); probes: short connections besides the
	# measured ones (wrk's address check, redis-benchmark's CONFIG GET,
	# pgbench's VACUUM before the run), which may end before their pairing
	# does and then count as fallbacks; bytes: a transfer's size
	local limit=300 min_conns=2 bytes=0 probes=0
	case "$t" in
	pgbench_tpcb | pgbench_select)
		cmd=("$PG_BIN/pgbench" -h 127.0.0.1 -p "$port" -U smc -c 4 -j 2 -T "$PG_T")
		[ "$t" = pgbench_tpcb ] || cmd+=(-S)
		cmd+=(postgres)
		limit=$((PG_T + 120)) min_conns=8 probes=1
		;;
	rsync_pull)
		rm -rf "$tmp/dest"
		cmd=(rsync -a "rsync://127.0.0.1:$port/tree/" "$tmp/dest/")
		bytes=$TREE_BYTES
		;;
	scp_download)
		rm -f "$tmp/scp.out"
		cmd=(scp -q "${SSH_OPTS[@]}" -P "$port" "$(id -un)@127.0.0.1:$tmp/www/big.bin" "$tmp/scp.out")
		bytes=$BIG_BYTES
		;;
	http_bulk_curl)
		cmd=(curl -sS -o /dev/null -w '%{http_code} %{size_download}\n' "http://127.0.0.1:$port/big.bin")
		bytes=$BIG_BYTES
		;;
	http_bulk_blocking)
		# python3's urllib: a blocking socket, recv_into() until 1 MiB
		cmd=(python3 -c 'import sys, urllib.request
r = urllib.request.urlopen(sys.argv[1])
n = 0
while True:
    b = r.read(1 << 20)
    if not b:
        break
    n += len(b)
print(r.status, n)' "http://127.0.0.1:$port/big.bin")
		bytes=$BIG_BYTES
		;;
	http_bulk_exec)
		# bash connects and sends an HTTP/1.0 request, then execs wc,
		# which counts the answer in blocking read()s of 16 KiB until
		# nginx closes: the connection crosses execve().  bash's printf
		# writes it through stdio, and wc has it on descriptor 0, so it
		# stays TCP (0x03060005, smc_run(8)) and is held to what TCP costs
		cmd=(bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
			printf "GET /big.bin HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n" >&3 || exit 1
			exec wc -c <&3' bash "$port")
		bytes=$BIG_BYTES
		;;
	redis_set | redis_get)
		cmd=(redis-benchmark -h 127.0.0.1 -p "$port" -t "${t#redis_}" -n "$REDIS_N" -c 50 -P 1 --csv)
		min_conns=100 probes=1
		;;
	redis_get_threads4)
		cmd=(redis-benchmark -h 127.0.0.1 -p "$port" -t get -n "$REDIS_T4_N" -c 50 -P 1 --threads 4 --csv)
		min_conns=100 probes=1
		;;
	redis_get_tcpkept)
		# the client without the library: under smc_run the server's
		# connections all stay TCP, and must cost what plain TCP costs
		PRE=()
		cmd=(redis-benchmark -h 127.0.0.1 -p "$port" -t get -n "$REDIS_N" -c 50 -P 1 --csv)
		min_conns=0
		;;
	node_wrk_8c)
		# one wrk thread, 8 keep-alive connections to one Node.js thread
		cmd=(wrk -t 1 -c 8 -d "${WRK_SECS}s" "http://127.0.0.1:$port/small")
		limit=$((WRK_SECS + 60)) min_conns=16 probes=1
		;;
	node_blob_node)
		cmd=(node "$tmp/node_client.js" "http://127.0.0.1:$port/blob")
		bytes=$((BLOB_MB * 1048576))
		;;
	mariadb_point_select | mariadb_read_only)
		cmd=(sysbench "oltp_${t#mariadb_}" "${SYSBENCH_DB[@]}" --mysql-port="$port"
			--table-size="$MDB_ROWS" --threads=8 --time="$MDB_T" run)
		limit=$((MDB_T + 120)) min_conns=16
		;;
	nginx_wrk_4w)
		cmd=(wrk -t 4 -c 64 -d "${WRK_SECS}s" "http://127.0.0.1:$port/small.bin")
		# wrk connects once and closes at once to check the address
		limit=$((WRK_SECS + 60)) min_conns=128 probes=1
		;;
	esac

	local sb sa cb ca rc lb la
	"$SMCD" -j stats >"$tmp/stats.before" 2>&1
	lb=$(lo_octets)
	cb=$(helper tree "$root" "$SOFTD_PID")
	helper cpuwrap "$w" timeout -k 5 "$limit" "${PRE[@]}" "${cmd[@]}" >"$o" 2>&1 </dev/null
	rc=$?
	sleep 0.25 # the server's children end and are reaped
	ca=$(helper tree "$root" "$SOFTD_PID")
	la=$(lo_octets)
	"$SMCD" -j stats >"$tmp/stats.after" 2>&1
	sb=$(helper stats "$tmp/stats.before")
	sa=$(helper stats "$tmp/stats.after")

	if [ "$rc" -ne 0 ]; then
		fail "$r" "$t" "$m" "exit status $rc"
		return
	fi
	# the value (rate) and the units the CPU time is divided by
	local value='' units=''
	case "$t" in
	pgbench_*)
		if ! grep -q '^number of failed transactions: 0 ' "$o"; then
			fail "$r" "$t" "$m" "failed transactions"
			return
		fi
		units=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$o")
		value=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$o")
		;;
	rsync_pull)
		local got
		got=$(find "$tmp/dest" -type f -printf '%s\n' 2>/dev/null | awk '{ n++; s += $1 } END { print n + 0, s + 0 }')
		if [ "$got" != "$TREE_FILES $TREE_BYTES" ]; then
			fail "$r" "$t" "$m" "copied files and bytes '$got', want '$TREE_FILES $TREE_BYTES'"
			return
		fi
		rm -rf "$tmp/dest"
		units=$bytes
		;;
	scp_download)
		local got
		got=$(stat -c %s "$tmp/scp.out" 2>/dev/null)
		if [ "$got" != "$BIG_BYTES" ] || ! cmp -s -n 1048576 "$tmp/scp.out" "$tmp/www/big.bin"; then
			fail "$r" "$t" "$m" "copied ${got:-no} bytes, want $BIG_BYTES (or contents differ)"
			return
		fi
		rm -f "$tmp/scp.out"
		units=$bytes
		;;
	http_bulk_curl | http_bulk_blocking)
		if [ "$(cat "$o")" != "200 $BIG_BYTES" ]; then
			fail "$r" "$t" "$m" "got '$(head -c 200 "$o")', want '200 $BIG_BYTES'"
			return
		fi
		units=$bytes
		;;
	http_bulk_exec)
		# the body and a header of some 250 bytes
		local got
		got=$(cat "$o")
		if ! [[ $got =~ ^[0-9]+$ ]] || [ "$got" -le "$BIG_BYTES" ] || [ "$got" -gt $((BIG_BYTES + 2048)) ]; then
			fail "$r" "$t" "$m" "wc -c counted '$(head -c 200 "$o")', want $BIG_BYTES and a header"
			return
		fi
		units=$bytes
		;;
	redis_*)
		local op=SET
		[ "$t" = redis_set ] || op=GET
		value=$(awk -F, -v op="\"$op\"" '$1 == op { gsub(/"/, "", $2); print $2 }' "$o")
		if grep -qiE 'error|refused|reset' "$o"; then
			fail "$r" "$t" "$m" "redis-benchmark reported an error"
			return
		fi
		units=$REDIS_N
		[ "$t" != redis_get_threads4 ] || units=$REDIS_T4_N
		;;
	mariadb_*)
		if ! grep -q '^ *ignored errors: *0 ' "$o"; then
			fail "$r" "$t" "$m" "sysbench: $(grep -m1 -iE 'error|ignored' "$o")"
			return
		fi
		units=$(awk '/^ *transactions:/ { print $2 }' "$o")
		value=$(sed -n 's/^ *transactions: *[0-9]* *(\([0-9.]*\) per sec.)/\1/p' "$o")
		;;
	node_blob_node)
		if [ "$(cat "$o")" != "200 $bytes" ]; then
			fail "$r" "$t" "$m" "got '$(head -c 200 "$o")', want '200 $bytes'"
			return
		fi
		units=$bytes
		;;
	nginx_wrk_4w | node_wrk_8c)
		if grep -qE 'Socket errors|Non-2xx' "$o"; then
			fail "$r" "$t" "$m" "wrk: $(grep -E 'Socket errors|Non-2xx' "$o")"
			return
		fi
		units=$(awk '/requests in/ { print $1 }' "$o")
		value=$(awk '/^Requests\/sec:/ { print $2 }' "$o")
		;;
	esac
	local wall cu cs
	read -r wall cu cs <"$w"
	if [ "$bytes" -gt 0 ]; then
		value=$(awk -v b="$bytes" -v w="$wall" 'BEGIN { printf "%.3f", b / w / 1e6 }')
	fi
	if ! [[ $value =~ ^[0-9.]+$ && $units =~ ^[0-9]+$ ]] || [ "$units" -eq 0 ]; then
		fail "$r" "$t" "$m" "no result (value '$value', units '$units')"
		return
	fi

	# The daemon's counters: "smc total fallback handshake_errors rx_bytes".
	# A connection carries what was sent before it paired over TCP (a few MB
	# of nginx's first sendfile, say): 90 % of a transfer over SMC-D is
	# asked for.
	local -a b a
	read -r -a b <<<"$sb"
	read -r -a a <<<"$sa"
	if [ "${#b[@]}" -ne 5 ] || [ "${#a[@]}" -ne 5 ]; then
		fail "$r" "$t" "$m" "cannot read the daemon's counters (smcd -j stats)"
		return
	fi
	local dsmc=$((a[0] - b[0])) dtotal=$((a[1] - b[1])) dfb=$((a[2] - b[2]))
	local derr=$((a[3] - b[3])) drx=$((a[4] - b[4])) dlo=$((la - lb))
	if [ "$m" = smc ] && { [ "$t" = redis_get_tcpkept ] || [ "$t" = http_bulk_exec ]; }; then
		if [ "$drx" -ne 0 ] || [ "$derr" -ne 0 ]; then
			fail "$r" "$t" "$m" "$drx bytes over SMC-D, $derr handshake errors: the connections were to stay TCP"
			return
		fi
	elif [ "$m" = smc ]; then
		if [ "$dsmc" -lt "$min_conns" ] || [ "$dfb" -gt $((2 * probes)) ] || [ "$derr" -ne 0 ] ||
			[ "$drx" -lt $((bytes / 10 * 9)) ]; then
			fail "$r" "$t" "$m" "not on SMC-D: $dsmc SMC connection ends (want $min_conns or more)," \
				"$dfb fallback ends (want at most $((2 * probes))), $derr handshake errors, $drx bytes received over SMC-D (want $((bytes / 10 * 9)) or more)"
			return
		fi
		# In a network namespace of our own, the loopback's IP octets are
		# what TCP carried: a transfer over SMC-D leaves little there,
		# whatever the counters say.
		if [ "$netns" = 1 ] && [ "$bytes" -gt 0 ] && [ "$dlo" -gt $((bytes / 10)) ]; then
			fail "$r" "$t" "$m" "carried by TCP: the loopback carried $dlo bytes of IP packets" \
				"(a transfer of $bytes bytes over SMC-D leaves less than a tenth of it there)"
			return
		fi
	elif [ "$dtotal" -ne 0 ]; then
		fail "$r" "$t" "$m" "the plain TCP run made $dtotal connections the daemon counted"
		return
	fi

	local cpu_srv cpu_d
	read -r -a b <<<"$cb"
	read -r -a a <<<"$ca"
	cpu_srv=$(awk -v x="${a[0]}" -v y="${b[0]}" 'BEGIN { printf "%.2f", x - y }')
	cpu_d=$(awk -v x="${a[1]}" -v y="${b[1]}" 'BEGIN { printf "%.2f", x - y }')
	cu=$(awk -v x="$cu" -v y="$cs" 'BEGIN { printf "%.3f", x + y }')
	# ROUND TEST MODE ok VALUE UNITS CPU_CLIENT CPU_SERVER CPU_DAEMON WALL
	#   SMC_ENDS FALLBACK_ENDS RX_BYTES_OVER_SMC LOOPBACK_IP_OCTETS
	echo "$r $t $m ok $value $units $cu $cpu_srv $cpu_d $wall $dsmc $dfb $drx $dlo" >>"$results"
}

for r in $(seq "$rounds"); do
	order="tcp smc"
	[ $((r % 2)) -eq 1 ] || order="smc tcp"
	log "programs.sh: round $r of $rounds ($order), $SECONDS s"
	for spec in "${TESTS[@]}"; do
		read -r t g key <<<"$spec"
		want "$g" || continue
		for m in $order; do
			run_one "$r" "$t" "$m" "$key"
			sleep 0.25
		done
	done
done
log "programs.sh: all runs done in $SECONDS s"

# ---- medians, ratios, CPU, goals, JSON -----------------------------------------
mkdir -p "$(dirname "$out")"
python3 - "$results" "$out" "$rounds" "$quick" "$only" "$netns" <<'EOF'
import json, statistics, sys
from collections import defaultdict

res, out, rounds, quick, only = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1", sys.argv[5]
netns = sys.argv[6] == "1"
lo = defaultdict(list)        # (test, mode) -> [loopback IP octets per unit]
vals = defaultdict(list)      # (test, mode) -> [throughput]
cpus = defaultdict(list)      # (test, mode) -> [CPU per unit]
dcpu = defaultdict(list)      # (test, mode) -> [daemon CPU per unit]
fails = defaultdict(int)      # (test, mode) -> failed rounds
for line in open(res):
    f = line.split()
    r, test, mode, st = f[:4]
    if st != "ok":
        fails[(test, mode)] += 1
        continue
    value, units, cc, cs, cd = float(f[4]), float(f[5]), float(f[6]), float(f[7]), float(f[8])
    vals[(test, mode)].append(value)
    total = cc + cs + (cd if mode == "smc" else 0.0)
    cpus[(test, mode)].append(total / units)
    dcpu[(test, mode)].append(cd / units)
    lo[(test, mode)].append(float(f[13]) / units)

# name, group, unit, cpu unit, CPU scale (per unit of the results file)
TXN = ("CPU-ms per txn", 1e3)
GB = ("CPU-s per GB", 1e9)
rows = [
    ("pgbench_tpcb", "pgbench", "tps", TXN),
    ("pgbench_select", "pgbench", "tps", TXN),
    ("rsync_pull", "rsync", "MB/s", GB),
    ("scp_download", "scp", "MB/s", GB),
    ("http_bulk_curl", "http", "MB/s", GB),
    ("http_bulk_blocking", "http", "MB/s", GB),
    ("http_bulk_exec", "http", "MB/s", GB, (0.98, 1.02)),
    ("redis_set", "redis", "req/s", TXN),
    ("redis_get", "redis", "req/s", TXN),
    ("redis_get_threads4", "redis", "req/s", TXN),
    ("redis_get_tcpkept", "redis", "req/s", TXN, (0.98, 1.02)),
    ("nginx_wrk_4w", "wrk", "req/s", TXN),
    ("node_wrk_8c", "node", "req/s", TXN),
    ("node_blob_node", "node", "MB/s", GB),
    ("mariadb_point_select", "mariadb", "tps", TXN),
    ("mariadb_read_only", "mariadb", "tps", TXN),
]
groups = set(only.split(","))

def med(d, k, scale=1.0):
    v = d.get(k)
    return statistics.median(v) * scale if v else None

def rnd(x, d=4):
    return None if x is None else float("%.*g" % (d, x))

results, table, nfail, ngoals = [], [], 0, 0
for row in rows:
    name, group, unit, (cunit, cscale) = row[:4]
    # the goals: ratio at least, CPU ratio at most (a TCP-kept server: within 2 %)
    gmin, gmax = row[4] if len(row) > 4 else (1.0, 1.0)
    if group not in groups:
        continue
    t, s = med(vals, (name, "tcp")), med(vals, (name, "smc"))
    ct, cs = med(cpus, (name, "tcp"), cscale), med(cpus, (name, "smc"), cscale)
    cd = med(dcpu, (name, "smc"), cscale)
    lt, ls = med(lo, (name, "tcp")), med(lo, (name, "smc"))
    lshare = ls / lt if netns and lt and ls is not None else None
    ratio = s / t if t and s else None
    cratio = cs / ct if ct and cs else None
    ft, fs = fails[(name, "tcp")], fails[(name, "smc")]
    n = min(len(vals.get((name, "tcp"), [])), len(vals.get((name, "smc"), [])))
    tv = "FAIL" if ratio is None or ratio < gmin or ft or fs else "PASS"
    cv = "FAIL" if cratio is None or cratio > gmax or ft or fs else "PASS"
    ngoals += 2
    nfail += (tv == "FAIL") + (cv == "FAIL")
    results.append({"name": name, "tcp": rnd(t), "smc": rnd(s), "unit": unit,
                    "ratio": None if ratio is None else round(ratio, 3),
                    "cpu_tcp": rnd(ct), "cpu_smc": rnd(cs), "cpu_unit": cunit,
                    "cpu_ratio": None if cratio is None else round(cratio, 3),
                    "cpu_smc_daemon": rnd(cd),
                    "lo_share": None if lshare is None else round(lshare, 3),
                    "n": n, "failed_tcp": ft, "failed_smc": fs})
    table.append((name, unit, t, s, ratio, tv, cunit, ct, cs, cd, cratio, cv, n, ft + fs))

def f(x):
    return "-" if x is None else "%.4g" % x

def fr(x):
    return "-" if x is None else "%.2fx" % x

print("medians of %d rounds%s; ratio = smc/tcp (goal >= 1.0x; kept on TCP, tcpkept and"
      " exec: >= 0.98x); cpu = CPU time of clients, servers (and smc_softd for smc) per unit,"
      " cpu ratio = smc/tcp (goal <= 1.0x; kept on TCP <= 1.02x)"
      % (rounds, ", --quick" if quick else ""))
print("%-20s %-6s %10s %10s %7s %4s | %-14s %8s %8s %8s %7s %4s | %s %s" % (
    "test", "unit", "tcp", "smc", "ratio", "", "cpu unit", "cpu tcp", "cpu smc", "(softd)",
    "ratio", "", "n", "failed"))
for name, unit, t, s, ratio, tv, cunit, ct, cs, cd, cratio, cv, n, nf in table:
    print("%-20s %-6s %10s %10s %7s %4s | %-14s %8s %8s %8s %7s %4s | %d %s" % (
        name, unit, f(t), f(s), fr(ratio), tv, cunit, f(ct), f(cs), f(cd), fr(cratio), cv, n,
        "%d FAILED" % nf if nf else "0"))
print("%d of %d goals not reached" % (nfail, ngoals))
with open(out, "w") as fh:
    json.dump({"results": results}, fh, indent=1)
    fh.write("\n")
print("wrote", out)
EOF
