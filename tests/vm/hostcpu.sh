#!/bin/sh
# tests/vm/hostcpu.sh LOG MATCH OUT (bench/softroce.sh, through run.sh's b1):
# while the guest whose console is LOG runs, every "MARK begin|end MODE
# TEST ROUND" line it prints is written to OUT as "HOSTMARK begin|end MODE
# TEST ROUND TICKS", TICKS the CPU time so far (USER_HZ) of every QEMU
# whose command line holds MATCH (both guests of the scenario).  That is
# the CPU as the host pays it: a TCG guest's /proc/stat counts the time its
# virtual CPU waited for a host CPU as busy time of whatever it was running.
LOG=$1 MATCH=$2 OUT=$3
: > "$OUT"
ticks() {
	t=0
	for p in $(pgrep -f -- "$MATCH"); do
		case $(cat "/proc/$p/comm" 2>/dev/null) in qemu*) ;; *) continue ;; esac
		s=$(cat "/proc/$p/stat" 2>/dev/null) || continue
		# after "PID (COMM) ": utime and stime are the 12th and 13th fields
		# shellcheck disable=SC2086
		set -- ${s##*) }
		t=$((t + ${12} + ${13}))
	done
	echo "$t"
}
seen=0
while :; do
	n=$(grep -a -c '^MARK ' "$LOG" 2>/dev/null)
	if [ "${n:-0}" -gt "$seen" ]; then
		t=$(ticks)
		grep -a '^MARK ' "$LOG" | tr -d '\r' | tail -n +$((seen + 1)) | head -n $((n - seen)) |
			while read -r _ what mode test round; do
				echo "HOSTMARK $what $mode $test $round $t"
			done >> "$OUT"
		seen=$n
	fi
	grep -a -q '=== vmtest end' "$LOG" 2>/dev/null && break
	sleep 0.1
done
