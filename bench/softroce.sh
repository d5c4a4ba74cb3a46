#!/bin/sh
# bench/softroce.sh: soft SMC-R against the kernel's own SMC-R over the same
# rxe devices, and both against TCP, between two QEMU guests of Debian's
# 6.12 kernel (which has SMC): tests/vm/run.sh's scenario b1
# (tests/vm/guest/b1.sh) runs sockperf ping-pong (14 bytes) and throughput
# (65,000-byte messages) in interleaved rounds, one sockperf server per mode.
# Prints the table and writes bench/results/softroce.json (OUT=FILE
# elsewhere): per mode the median over the rounds, its ratio to TCP and,
# for soft SMC-R, to the kernel's SMC-R, and the CPU both guests spent.
# SMC_SOFT_DRIVE=0|1 (default 0, the library's default) is what soft
# SMC-R's runs use (doc/soft-roce.md section 4), recorded in the JSON, as
# is MTU=N (default 1500), the guests' Ethernet MTU (9000: jumbo frames,
# rxe's MTU 4096 for the kernel's SMC-R and soft SMC-R alike).  The second
# table says where the CPU went (user, system and softirq time, context
# switches, rxe packets); PERF=1 (the host's perf in the guests) adds each
# guest's profile of round 1's throughput runs to build/vm/b1-*.log, and
# PERF=trace each sockperf thread's system calls over them instead.
# MEMLOCK=KIB runs soft SMC-R's sockperfs as a user (uid 65534) with that
# RLIMIT_MEMLOCK, whose buffers shrink to fit it (each guest's log says
# which sizes they had, "INFO b1/bufs"), recorded in the JSON as memlock_kib.
# ROUNDS=N rounds (default 3).  Each guest's log has an "INFO b1/copy" line:
# what a copied byte costs there in user space and in the kernel
# (bench/copyrate.c).
# Never part of a test run: TCG guests on a shared machine, minutes long.
set -eu
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/results/softroce.json}
VMDIR=${VMDIR:-build/vm}
VM_DRIVE=${SMC_SOFT_DRIVE:-0}
VM_MTU=${MTU:-1500}
VM_PERF=${PERF:-0}
VM_ROUNDS=${ROUNDS:-3}
VM_MEMLOCK=${MEMLOCK:-}
case $VM_MEMLOCK in
*[!0-9]*) echo "softroce: MEMLOCK: not a number of KiB: $VM_MEMLOCK" >&2; exit 2 ;;
esac
export VMDIR VM_DRIVE VM_MTU VM_PERF VM_ROUNDS VM_MEMLOCK
make -s all
mkdir -p "$VMDIR"
VM_NET=${VM_NET:-unix} tests/vm/run.sh b1 > "$VMDIR/softroce.txt" 2>&1 || true
log=$VMDIR/b1-client.log
grep -a -q '^RESULT ' "$log" 2>/dev/null || {
	echo "softroce: no RESULT lines in $log (see $VMDIR/softroce.txt)" >&2
	exit 1
}
kernel=$(sed -n 's/.*Linux version \([^ ]*\).*/\1/p' "$log" | tr -d '\r' | head -n 1)
{ grep -a -e '^RESULT ' -e '^SPLIT ' "$log" | tr -d '\r'; cat "$VMDIR/b1-host.txt" 2>/dev/null; } |
	python3 bench/softroce_table.py "$OUT" "${kernel:-unknown}" "$VM_DRIVE" "$VM_MTU" "$VM_MEMLOCK"
grep -a -h '^INFO b1/bufs' "$VMDIR/b1-client.log" "$VMDIR/b1-server.log" | tr -d '\r' || true
