#!/usr/bin/env bash
# bench/run.sh: real programs over loopback TCP and under smc_run (soft
# backend, private daemon), interleaved, medians of rounds; prints a table
# with the must-reach goals and writes bench/results/latest.json.  See
# bench/README.md for the method.
#
#   bench/run.sh [--quick] [--rounds N] [--out FILE] [--keep]
#
# --quick: short runs (about 90 s in all); the default takes about 10 min.
# --keep: keep the working directory (every run's output, results.tsv with
# the value of each round) and say where it is.
# Uses the normal build in the top directory (make): ./smc_run,
# ./libsmc-preload.so, ./smc_softd.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
quick=0
keep=0
rounds=5
out="$top/bench/results/latest.json"

usage() {
	sed -n '2,14s/^# \{0,1\}//p' "$0"
}

while [ $# -gt 0 ]; do
	case "$1" in
	--quick) quick=1 ;;
	--rounds) rounds=${2:?--rounds needs a number}; shift ;;
	--out) out=${2:?--out needs a file}; shift ;;
	--keep) keep=1 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "run.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
	esac
	shift
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --rounds: not a number" >&2; exit 2; }

SMC_RUN="$top/smc_run"
SOFTD="$top/smc_softd"
for f in "$SMC_RUN" "$SOFTD" "$top/libsmc-preload.so"; do
	[ -x "$f" ] || { echo "run.sh: $f missing: run make first" >&2; exit 1; }
done
for p in sockperf iperf3 redis-server redis-benchmark nginx wrk taskset cc python3 ss; do
	command -v "$p" >/dev/null ||
		{ echo "run.sh: $p not installed (scripts/install-deps.sh)" >&2; exit 1; }
done
[ "$(nproc)" -ge 2 ] || echo "run.sh: warning: one CPU; cross-core placement is not possible" >&2

# ---- parameters ----------------------------------------------------------
# sockperf's client idles 2 s after connecting, then runs -t seconds of which
# the first 0.4 s are warm-up (not counted) and the last 0.05 s cool-down.
if [ "$quick" = 1 ]; then
	SP_T=1          # 0.55 s measured per sockperf run (-t takes whole seconds)
	SP_PERIOD=1.05  # pipelined: see "sockperf schedule" below
	IPERF_ARGS=(-n 768M)
	CC_SECS=0.2
	LS_SECS=1.5
	REDIS_N=10000
	WRK_SECS=1
else
	SP_T=5          # 4.55 s measured
	SP_PERIOD=7.4   # one client at a time
	IPERF_ARGS=(-t 5)
	CC_SECS=3
	LS_SECS=5
	REDIS_N=100000
	WRK_SECS=5
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/smc-bench.XXXXXX")
SERVER_PIDS=()
SOFTD_PID=
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
		log "run.sh: kept $tmp"
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { printf '%s\n' "$*" >&2; }

now_us() { echo "${EPOCHREALTIME/./}"; }

# Sleep until the absolute time $1 (microseconds since the epoch).
sleep_until() {
	local d=$(($1 - $(now_us)))
	[ "$d" -gt 0 ] || return 0
	sleep "$((d / 1000000)).$(printf %06d $((d % 1000000)))"
}

free_port() {
	python3 -c 'import socket
s = socket.socket()
s.bind(("", 0))
print(s.getsockname()[1])'
}

wait_listen() { # PORT
	for _ in $(seq 200); do
		[ -n "$(ss -Hltn "sport = :$1")" ] && return 0
		sleep 0.05
	done
	log "run.sh: nothing listens on port $1"
	return 1
}

# Start a server in the background on CPU 0: NAME PORT COMMAND...;
# servers_ready waits until all of them listen.
SERVER_NAMES=()
server() {
	local name=$1 port=$2
	shift 2
	taskset -c 0 "$@" >"$tmp/$name.log" 2>&1 &
	SERVER_PIDS+=($!)
	SERVER_NAMES+=("$name:$port")
}
servers_ready() {
	local s
	for s in "${SERVER_NAMES[@]}"; do
		wait_listen "${s##*:}" || { cat "$tmp/${s%:*}.log" >&2; exit 1; }
	done
}

# ---- setup ---------------------------------------------------------------
cc -O2 -o "$tmp/connclose" "$top/bench/connclose.c" &
cc_pid=$!
cc -O2 -pthread -o "$tmp/lockstep" "$top/bench/lockstep.c" &
ls_pid=$!

"$SOFTD" -f -s "$tmp/control" 2>"$tmp/softd.log" &
SOFTD_PID=$!
for _ in $(seq 200); do
	[ -S "$tmp/control" ] && break
	sleep 0.05
done
[ -S "$tmp/control" ] || { log "run.sh: smc_softd did not start"; cat "$tmp/softd.log" >&2; exit 1; }
export SMC_BACKEND=soft SMC_SOFT_SOCKET="$tmp/control"
wait "$cc_pid" || { log "run.sh: cannot build bench/connclose.c"; exit 1; }
wait "$ls_pid" || { log "run.sh: cannot build bench/lockstep.c"; exit 1; }
unset SMC_SPIN_USEC SMC_DEBUG

declare -A PORT
# sockperf servers: plain, preloaded, preloaded without spinning.
for m in tcp smc nospin; do
	PORT[sp_$m]=$(free_port)
done
server sp_tcp "${PORT[sp_tcp]}" sockperf sr --tcp -i 127.0.0.1 -p "${PORT[sp_tcp]}" -m 65536
server sp_smc "${PORT[sp_smc]}" "$SMC_RUN" sockperf sr --tcp -i 127.0.0.1 -p "${PORT[sp_smc]}" -m 65536
server sp_nospin "${PORT[sp_nospin]}" env SMC_SPIN_USEC=0 "$SMC_RUN" \
	sockperf sr --tcp -i 127.0.0.1 -p "${PORT[sp_nospin]}" -m 65536

# nginx: one worker on CPU 0, a 1 KiB file.
mkdir -p "$tmp/www"
head -c 1024 /dev/urandom >"$tmp/www/small.bin"
nginx_conf() { # PORT DIR
	mkdir -p "$2"
	{
		[ "$(id -u)" -ne 0 ] || echo "user root;"
		cat <<EOF
worker_processes 1;
daemon off;
env SMC_BACKEND;
env SMC_SOFT_SOCKET;
env LD_PRELOAD;
pid $2/nginx.pid;
error_log $2/error.log;
events { worker_connections 1024; }
http {
	access_log off;
	sendfile on;
	keepalive_requests 1000000;
	default_type application/octet-stream;
	client_body_temp_path $2/body;
	proxy_temp_path $2/proxy;
	fastcgi_temp_path $2/fastcgi;
	uwsgi_temp_path $2/uwsgi;
	scgi_temp_path $2/scgi;
	server {
		listen 127.0.0.1:$1;
		root $tmp/www;
	}
}
EOF
	} >"$2/nginx.conf"
}

for m in tcp smc; do
	pre=()
	[ "$m" = tcp ] || pre=("$SMC_RUN")
	for s in iperf cc redis nginx; do
		PORT[${s}_$m]=$(free_port)
	done
	server "iperf_$m" "${PORT[iperf_$m]}" "${pre[@]}" iperf3 -s -B 127.0.0.1 -p "${PORT[iperf_$m]}"
	server "cc_$m" "${PORT[cc_$m]}" "${pre[@]}" "$tmp/connclose" server "${PORT[cc_$m]}"
	server "redis_$m" "${PORT[redis_$m]}" "${pre[@]}" redis-server --port "${PORT[redis_$m]}" \
		--bind 127.0.0.1 --save '' --appendonly no --dir "$tmp"
	nginx_conf "${PORT[nginx_$m]}" "$tmp/nginx_$m"
	server "nginx_$m" "${PORT[nginx_$m]}" "${pre[@]}" nginx -e "$tmp/nginx_$m/error.log" \
		-p "$tmp/nginx_$m" -c "$tmp/nginx_$m/nginx.conf"
done
# the one-sided clients' server: plain
PORT[ls]=$(free_port)
server ls "${PORT[ls]}" "$tmp/lockstep" server "${PORT[ls]}"
servers_ready

# ---- sockperf schedule ---------------------------------------------------
# Each sockperf client is one job: KEY MODE CPU PORT [ENV-PREFIX] pp|tp ARGS.
# A sockperf 3.7 client (strace) sleeps 0.1 s, connects, sleeps 2 s, runs
# -t s (the first 0.4 s are uncounted warm-up, the last 0.05 s cool-down),
# sleeps 0.1 s and prints.  So with --quick the clients are pipelined: one
# starts every SP_PERIOD = 1.05 s.  Client j runs its test from +2.12 s to
# +3.12 s; client j+1 starts its test at +3.17 s, after it; client j+2
# connects at +2.22 s, inside client j's uncounted warm-up.  No two counted
# measurements overlap, and no connect falls inside one.  Without --quick the
# clients run one after the other.
results="$tmp/results.tsv"
: >"$results"

sp_jobs() { # ROUND: the round's jobs; each SMC run next to its TCP run, in
	# turn before and after it; the spin-off run, compared with pp14's TCP
	# run, stands next to it too
	local smc="$SMC_RUN" t s
	local pp="pp -m 14 --mps=10000000"
	# --mps: sockperf sizes its sequence table by the rate; with the
	# default it overflows ("_seqN > m_maxSequenceNo") past ~4 M pings
	local -a group=(
		"pp14 tcp 1 ${PORT[sp_tcp]} $pp|pp14 smc 1 ${PORT[sp_smc]} $smc $pp|pp14nospin smc 1 ${PORT[sp_nospin]} env SMC_SPIN_USEC=0 $smc $pp"
		"pp14same tcp 0 ${PORT[sp_tcp]} $pp|pp14same smc 0 ${PORT[sp_smc]} $smc $pp"
		"pp1k tcp 1 ${PORT[sp_tcp]} pp -m 1024 --mps=10000000|pp1k smc 1 ${PORT[sp_smc]} $smc pp -m 1024 --mps=10000000"
		"tp64k tcp 1 ${PORT[sp_tcp]} tp -m 65536|tp64k smc 1 ${PORT[sp_smc]} $smc tp -m 65536"
		"tp64 tcp 1 ${PORT[sp_tcp]} tp -m 64|tp64 smc 1 ${PORT[sp_smc]} $smc tp -m 64"
	)
	for t in "${group[@]}"; do
		IFS='|' read -r -a s <<<"$t"
		if [ $(($1 % 2)) -eq 1 ]; then
			printf '%s\n' "${s[@]}"
		else
			printf '%s\n' "${s[@]}" | tac
		fi
	done
}


log "run.sh: $rounds rounds$([ "$quick" = 1 ] && echo ", --quick"); sockperf runs..."
jobs_file="$tmp/sp_jobs"
: >"$jobs_file"
for r in $(seq "$rounds"); do
	sp_jobs "$r" | sed "s/^/$r /" >>"$jobs_file"
done
period_us=$(python3 -c "print(int($SP_PERIOD * 1e6))")
start=$(now_us)
i=0
SP_PIDS=()
while read -r r key mode cpu port rest; do
	sleep_until $((start + i * period_us))
	# rest = [env VAR=VAL] [smc_run] pp|tp ARGS
	read -r -a words <<<"$rest"
	pre=() sub='' args=()
	for w in "${words[@]}"; do
		case "$w" in
		pp | tp) [ -n "$sub" ] && args+=("$w") || sub=$w ;;
		*) if [ -z "$sub" ]; then pre+=("$w"); else args+=("$w"); fi ;;
		esac
	done
	taskset -c "$cpu" "${pre[@]}" sockperf "$sub" --tcp -i 127.0.0.1 -p "$port" \
		-t "$SP_T" "${args[@]}" >"$tmp/sp.$r.$key.$mode" 2>&1 </dev/null &
	SP_PIDS+=($!)
	i=$((i + 1))
	if [ "$quick" != 1 ]; then
		wait "$!"
	fi
done <"$jobs_file"
wait "${SP_PIDS[@]}" 2>/dev/null

# Parse: pp -> p50 and p99 (usec, RTT/2), tp -> msg/s.
while read -r r key mode _ _ rest; do
	f="$tmp/sp.$r.$key.$mode"
	if grep -qiE 'error|usage:|invalid' "$f" || ! grep -q 'Summary:' "$f"; then
		log "run.sh: sockperf $key $mode round $r failed:"
		tail -5 "$f" >&2
		continue
	fi
	case "$key" in
	tp*)
		rate=$(sed -n 's/.*Message Rate is \([0-9]*\) \[msg\/sec\].*/\1/p' "$f")
		echo "$r $key $mode rate $rate" >>"$results"
		;;
	*)
		p50=$(sed -n 's/.*percentile 50\.000 = *\([0-9.]*\).*/\1/p' "$f")
		p99=$(sed -n 's/.*percentile 99\.000 = *\([0-9.]*\).*/\1/p' "$f")
		echo "$r $key $mode p50 $p50" >>"$results"
		echo "$r $key $mode p99 $p99" >>"$results"
		;;
	esac
done <"$jobs_file"
log "run.sh: sockperf done in $SECONDS s; iperf3, connect/close, redis, nginx..."

# ---- the other programs, one at a time -------------------------------------
# client MODE COMMAND...: on CPU 1, preloaded for smc; stdout on stdout.
client() {
	local m=$1
	shift
	if [ "$m" = tcp ]; then
		taskset -c 1 "$@" </dev/null
	else
		taskset -c 1 "$SMC_RUN" "$@" </dev/null
	fi
}

record() { # ROUND KEY MODE VALUE [FIELD]
	if [[ $4 =~ ^[0-9.]+$ ]]; then
		echo "$1 $2 $3 ${5:-v} $4" >>"$results"
	else
		log "run.sh: $2 $3 round $1: no result"
	fi
}

iperf_gbps() {
	python3 -c 'import json, sys
d = json.load(sys.stdin)
print(d["end"]["sum_received"]["bits_per_second"] / 1e9)' 2>/dev/null
}

# onesided ROUND: a plain and a preloaded client of the plain lockstep server
# take turns of 500 round trips (bench/lockstep.c); the one in front of
# $order starts
onesided() {
	local r=$1 a=${order% *} b=${order#* }
	rm -f "$tmp/turn1" "$tmp/turn2"
	mkfifo "$tmp/turn1" "$tmp/turn2"
	client "$a" "$tmp/lockstep" client 127.0.0.1 "${PORT[ls]}" 14 "$LS_SECS" \
		"$tmp/turn2" "$tmp/turn1" first >"$tmp/ls.$r.$a" &
	client "$b" "$tmp/lockstep" client 127.0.0.1 "${PORT[ls]}" 14 "$LS_SECS" \
		"$tmp/turn1" "$tmp/turn2" >"$tmp/ls.$r.$b"
	wait "$!"
	for m in tcp smc; do
		record "$r" onesided "$m" "$(awk '$1 == "p50" { print $2 }' "$tmp/ls.$r.$m")" p50
	done
}

for r in $(seq "$rounds"); do
	order="tcp smc"
	[ $((r % 2)) -eq 1 ] || order="smc tcp"
	onesided "$r"
	for m in $order; do
		v=$(client "$m" iperf3 -c 127.0.0.1 -p "${PORT[iperf_$m]}" "${IPERF_ARGS[@]}" -J | iperf_gbps)
		record "$r" iperf3_1 "$m" "$v"
	done
	for m in $order; do
		v=$(client "$m" iperf3 -c 127.0.0.1 -p "${PORT[iperf_$m]}" -P 4 "${IPERF_ARGS[@]}" -J | iperf_gbps)
		record "$r" iperf3_4 "$m" "$v"
	done
	for m in $order; do
		v=$(client "$m" "$tmp/connclose" client 127.0.0.1 "${PORT[cc_$m]}" "$CC_SECS")
		record "$r" connclose "$m" "$v"
	done
	for m in $order; do
		v=$(client "$m" redis-benchmark -p "${PORT[redis_$m]}" -t get -n "$REDIS_N" --csv 2>/dev/null |
			awk -F, '$1 == "\"GET\"" { gsub(/"/, "", $2); print $2 }')
		record "$r" redis_get "$m" "$v"
	done
	for m in $order; do
		v=$(client "$m" wrk -t 1 -c 16 -d "${WRK_SECS}s" "http://127.0.0.1:${PORT[nginx_$m]}/small.bin" |
			awk '/^Requests\/sec:/ { print $2 }')
		record "$r" nginx_wrk "$m" "$v"
	done
done
log "run.sh: all runs done in $SECONDS s"

# ---- medians, ratios, goals, JSON ------------------------------------------
mkdir -p "$(dirname "$out")"
python3 - "$results" "$out" "$rounds" "$quick" <<'EOF'
import json, statistics, sys
from collections import defaultdict

res, out, rounds, quick = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
vals = defaultdict(list)          # (key, mode, field) -> [values]
by_round = defaultdict(dict)      # (key, field, round) -> {mode: value}
for line in open(res):
    r, key, mode, field, v = line.split()
    vals[(key, mode, field)].append(float(v))
    by_round[(key, field, int(r))][mode] = float(v)

def med(key, mode, field, scale=1.0):
    v = vals.get((key, mode, field))
    return statistics.median(v) * scale if v else None

# name, tcp source, smc source, field, unit, scale, lower is better, goal
# (goal: (">=", x) or ("range", lo, hi) or None).  The nospin runs have no
# TCP run of their own: their TCP column is the plain pp14 run of the same
# rounds.
rows = [
    ("sockperf_pp_14B_p50", ("pp14", "tcp"), ("pp14", "smc"), "p50", "us (RTT/2)", 1, True, (">=", 5)),
    ("sockperf_pp_14B_p99", ("pp14", "tcp"), ("pp14", "smc"), "p99", "us (RTT/2)", 1, True, (">=", 1.0)),
    ("sockperf_pp_14B_p50_samecore", ("pp14same", "tcp"), ("pp14same", "smc"), "p50", "us (RTT/2)", 1, True, (">=", 1.5)),
    ("sockperf_pp_14B_p50_nospin", ("pp14", "tcp"), ("pp14nospin", "smc"), "p50", "us (RTT/2)", 1, True, (">=", 1.0)),
    ("sockperf_pp_1KB_p50", ("pp1k", "tcp"), ("pp1k", "smc"), "p50", "us (RTT/2)", 1, True, None),
    ("sockperf_tp_64KB", ("tp64k", "tcp"), ("tp64k", "smc"), "rate", "Gbit/s", 65536 * 8 / 1e9, False, (">=", 1.5)),
    ("sockperf_tp_64B", ("tp64", "tcp"), ("tp64", "smc"), "rate", "Mmsg/s", 1e-6, False, (">=", 3)),
    ("iperf3_1", ("iperf3_1", "tcp"), ("iperf3_1", "smc"), "v", "Gbit/s", 1, False, (">=", 1.5)),
    ("iperf3_4", ("iperf3_4", "tcp"), ("iperf3_4", "smc"), "v", "Gbit/s", 1, False, (">=", 1.5)),
    ("connect_close_rate", ("connclose", "tcp"), ("connclose", "smc"), "v", "conn/s", 1, False, (">=", 0.9)),
    ("redis_get", ("redis_get", "tcp"), ("redis_get", "smc"), "v", "req/s", 1, False, (">=", 1.2)),
    ("nginx_wrk", ("nginx_wrk", "tcp"), ("nginx_wrk", "smc"), "v", "req/s", 1, False, (">=", 1.2)),
    ("onesided_pp", ("onesided", "tcp"), ("onesided", "smc"), "p50", "us (RTT/2)", 1, True, ("range", 0.97, 1.03)),
]

def rnd(x):
    if x is None:
        return None
    return float("%.4g" % x)

results = []
table = []
fails = 0
for name, (tk, tm), (sk, sm), field, unit, scale, lower, goal in rows:
    t = med(tk, tm, field, scale)
    s = med(sk, sm, field, scale)
    ratio = None
    if t and s:
        ratio = t / s if lower else s / t
    if goal is None:
        gtxt, verdict = "-", ""
    elif goal[0] == ">=":
        gtxt = ">= %gx" % goal[1]
        verdict = "" if ratio is None else ("PASS" if ratio >= goal[1] else "FAIL")
    else:
        gtxt = "%g-%gx" % (goal[1], goal[2])
        verdict = "" if ratio is None else ("PASS" if goal[1] <= ratio <= goal[2] else "FAIL")
    if ratio is None and goal is not None:
        verdict = "FAIL"
    fails += verdict == "FAIL"
    n = min(len(vals.get((tk, tm, field), [])), len(vals.get((sk, sm, field), [])))
    results.append({"name": name, "tcp": rnd(t), "smc": rnd(s), "unit": unit,
                    "ratio": None if ratio is None else round(ratio, 3)})
    table.append((name, unit, t, s, ratio, gtxt, verdict, n))

def f(x):
    return "-" if x is None else "%.4g" % x

print("medians of %d rounds%s; ratio: higher is better for smc (latency: tcp/smc)"
      % (rounds, ", --quick" if quick else ""))
print("%-30s %-11s %11s %11s %8s %10s %5s %s" % ("test", "unit", "tcp", "smc", "ratio", "goal", "", "n"))
for name, unit, t, s, ratio, gtxt, verdict, n in table:
    print("%-30s %-11s %11s %11s %8s %10s %5s %d" % (name, unit, f(t), f(s),
          "-" if ratio is None else "%.2fx" % ratio, gtxt, verdict, n))
print("%d of %d goals not reached" % (fails, sum(1 for r in rows if r[7])))
with open(out, "w") as fh:
    json.dump({"results": results}, fh, indent=1)
    fh.write("\n")
print("wrote", out)
EOF
