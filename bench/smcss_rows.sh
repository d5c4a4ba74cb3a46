#!/usr/bin/env bash
# bench/smcss_rows.sh: how long `smcss -a` takes over N idle paired
# connections (tests/progs/idleconn under smc_run, private daemon) against
# `ss -tan` over the same sockets; medians of interleaved rounds, the first
# listing (which reads every fd of both processes) reported apart.
#
#   bench/smcss_rows.sh [--conns N] [--rounds R] [--out FILE]
#
# Goal: smcss at most 1.5 times ss.  Uses the top-level build (make, make
# test-progs).
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
conns=10000
rounds=7
out="$top/bench/results/smcss.json"
while [ $# -gt 0 ]; do
	case "$1" in
	--conns) conns=${2:?}; shift ;;
	--rounds) rounds=${2:?}; shift ;;
	--out) out=${2:?}; shift ;;
	*) echo "smcss_rows.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
	shift
done
for f in "$top/smc_run" "$top/smc_softd" "$top/smcss" "$top/tests/idleconn"; do
	[ -x "$f" ] || { echo "smcss_rows.sh: $f missing: run make and make test-progs" >&2; exit 1; }
done
need=$((conns + 200))
[ "$(ulimit -n)" -ge "$need" ] || ulimit -n "$need" 2>/dev/null ||
	{ echo "smcss_rows.sh: needs ulimit -n $need" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/smcss-bench.XXXXXX")
cleanup() {
	[ -z "${IDLE_PID:-}" ] || { kill "$IDLE_PID"; wait "$IDLE_PID"; } 2>/dev/null
	[ -z "${SOFTD_PID:-}" ] || { kill "$SOFTD_PID"; wait "$SOFTD_PID"; } 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

"$top/smc_softd" -f -s "$tmp/control" 2>"$tmp/softd.log" &
SOFTD_PID=$!
for _ in $(seq 200); do [ -S "$tmp/control" ] && break; sleep 0.05; done
export SMC_BACKEND=soft SMC_SOFT_SOCKET="$tmp/control"
"$top/smc_run" "$top/tests/idleconn" "$conns" >"$tmp/idle.out" 2>&1 &
IDLE_PID=$!
for _ in $(seq 1200); do grep -q '^ready' "$tmp/idle.out" && break; sleep 0.1; done
grep -q '^ready' "$tmp/idle.out" || { echo "smcss_rows.sh: idleconn not ready" >&2; cat "$tmp/idle.out" >&2; exit 1; }

secs() { # COMMAND...: wall seconds of one run, output to $tmp/last
	local a b
	a=$EPOCHREALTIME
	"$@" >"$tmp/last"
	b=$EPOCHREALTIME
	echo "$b - $a" | bc -l
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

first=$(secs "$top/smcss" -a)
rows=$(wc -l <"$tmp/last")
: >"$tmp/smcss"; : >"$tmp/ss"
for _ in $(seq "$rounds"); do
	secs "$top/smcss" -a >>"$tmp/smcss"
	secs ss -tan >>"$tmp/ss"
done
ss_rows=$(wc -l <"$tmp/last")
m_smcss=$(median <"$tmp/smcss")
m_ss=$(median <"$tmp/ss")
ratio=$(echo "$m_smcss / $m_ss" | bc -l)
printf 'smcss -a: %d rows, median %.4f s (first listing %.4f s)\n' "$rows" "$m_smcss" "$first"
printf 'ss -tan:  %d rows, median %.4f s\n' "$ss_rows" "$m_ss"
printf 'smcss/ss: %.2fx (goal <= 1.5x) %s\n' "$ratio" \
	"$(echo "$ratio <= 1.5" | bc -l | sed 's/1/ok/; s/0/MISSED/')"
mkdir -p "$(dirname "$out")"
printf '{"results": [{"name": "smcss_a_%d_conns", "smcss": %.4f, "ss": %.4f, "unit": "s", "ratio": %.3f, "smcss_first": %.4f, "rows": %d}]}\n' \
	"$conns" "$m_smcss" "$m_ss" "$ratio" "$first" "$rows" >"$out"
