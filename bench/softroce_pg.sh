#!/bin/sh
# bench/softroce_pg.sh: PostgreSQL between two QEMU guests, soft SMC-R
# against plain TCP and the kernel's own SMC-R over the same rxe devices:
# tests/vm/run.sh's scenario b2 (tests/vm/guest/b2.sh).  The server's
# postmaster forks a backend at each accept(); pgbench on the other guest
# runs select-only and TPC-B-like transactions with 4 clients on one
# thread, more processes than the guests' one CPU, in interleaved rounds.
# Prints the table and writes bench/results/softroce-postgres.json (OUT=FILE
# elsewhere): per mode and test the median transactions per second, the
# CPU both guests spent per transaction, their ratios to TCP and soft
# SMC-R's to the kernel's.  The
# books of both clusters must balance after all rounds (b2's PASS lines).
# ROUNDS=N rounds (default 3); VM_SUITE the guests' kernel: Debian's 6.12
# by default (bookworm-backports, with SMC: all three modes),
# VM_SUITE=trixie-backports the newest, which has no SMC (TCP and soft
# SMC-R only).  Needs PostgreSQL on the host (scripts/install-deps.sh),
# copied into the guests' initramfs (VM_POSTGRES=1).
# Never part of a test run: TCG guests on a shared machine, minutes long.
set -eu
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/results/softroce-postgres.json}
VMDIR=${VMDIR:-build/vm}
VM_ROUNDS=${ROUNDS:-3}
VM_SUITE=${VM_SUITE:-bookworm-backports}
VM_POSTGRES=1
export VMDIR VM_ROUNDS VM_SUITE VM_POSTGRES
make -s all
mkdir -p "$VMDIR"
tests/vm/run.sh b2 > "$VMDIR/softroce_pg.txt" 2>&1 || true
log=$VMDIR/b2-client.log
grep -a -q '^RESULT ' "$log" 2>/dev/null || {
	echo "softroce_pg: no RESULT lines in $log (see $VMDIR/softroce_pg.txt)" >&2
	exit 1
}
kernel=$(sed -n 's/.*INFO b2\/kernel: Linux version \([^ ]*\).*/\1/p' "$log" | tr -d '\r' | head -n 1)
grep -a '^RESULT ' "$log" | tr -d '\r' | python3 bench/softroce_pg_table.py "$OUT" "${kernel:-unknown}"
grep -a -h -e '^FAIL ' -e '^INFO b2' "$VMDIR/b2-client.log" "$VMDIR/b2-server.log" | tr -d '\r' || true
grep -a -q '^FAIL ' "$VMDIR/softroce_pg.txt" && { echo "softroce_pg: checks failed (see $VMDIR/softroce_pg.txt)" >&2; exit 1; }
exit 0
