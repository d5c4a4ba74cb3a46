#!/usr/bin/env bats
# Load under smc_run with the soft backend: tests/progs/stress runs 32
# connections at a time between two processes, random message sizes, random
# shutdown and abort points, every byte checked against its pattern and each
# direction ended by a hash of the stream; totals compared between the ends;
# no fd left open in either process.  Around it this suite checks what the
# processes cannot see themselves: no file left in /dev/shm, no fd (memfd,
# socket) left in the daemon.
#
# STRESS_VOLUME sets the payload of the main test (default 4G, about 7 s on
# plain TCP loopback on the 2-core CI machine; the issue's 10G takes 15-25 s).
# Until the soft data path pairs connections the bytes go over TCP.

load helpers
bats_require_minimum_version 1.5.0

STRESS="$SMC_BIN/tests/stress"
RUN="$SMC_BIN/smc_run"
: "${STRESS_VOLUME:=4G}"

setup() {
	unset SMC_DEBUG SMC_SNDBUF SMC_RCVBUF LD_PRELOAD
	softd_start
}

teardown() {
	softd_stop
}

# The run succeeded and its last line is the verdict; else show everything.
assert_stress_ok() {
	if [ "$status" -eq 0 ] && [ "${lines[-1]}" = "stress ok" ]; then
		return 0
	fi
	echo "stress: status $status"
	printf 'stdout:\n%s\n' "$output"
	printf 'stderr:\n%s\n' "${stderr:-}"
	[ ! -s "$SOFTD_DIR/log" ] || { echo "smc_softd log:"; tail -50 "$SOFTD_DIR/log"; }
	return 1
}

# What is in /dev/shm, one name a line.
shm_list() {
	ls -A /dev/shm 2>/dev/null | sort
}

@test "stress under smc_run: 32 connections at a time, every byte checked, nothing leaked" {
	# a first small run opens whatever the daemon keeps for good
	run --separate-stderr "$STRESS" pair -v 16M -t 60 "$RUN"
	assert_stress_ok
	local shm_before fds_before
	shm_before=$(shm_list)
	fds_before=$(softd_fds_settled)

	run --separate-stderr "$STRESS" pair -c 32 -v "$STRESS_VOLUME" -t 110 "$RUN"
	assert_stress_ok

	local new_shm
	new_shm=$(comm -13 <(echo "$shm_before") <(shm_list))
	[ -z "$new_shm" ] || { echo "left in /dev/shm:"; echo "$new_shm"; return 1; }
	assert_softd_fds_back "$fds_before"
}

@test "stress: a different plan (seed 7, 8 connections at a time) under smc_run" {
	run --separate-stderr "$STRESS" pair -c 8 -s 7 -v 512M -t 60 "$RUN"
	assert_stress_ok
}

@test "stress with one end under smc_run, the other plain TCP" {
	local out="$BATS_TEST_TMPDIR/server.out" port= spid cstatus sstatus=0
	# server preloaded, client not
	"$RUN" "$STRESS" server 0 >"$out" 2>&1 3>&- &
	spid=$!
	for _ in $(seq 200); do
		port=$(sed -n 's/^port //p' "$out" 2>/dev/null || true)
		[ -n "$port" ] && break
		sleep 0.05
	done
	[ -n "$port" ] || { kill -KILL "$spid"; cat "$out"; return 1; }
	run --separate-stderr "$STRESS" client 127.0.0.1 "$port" -v 512M -t 60
	cstatus=$status
	wait "$spid" || sstatus=$?
	[ "$cstatus" -eq 0 ] && [ "$sstatus" -eq 0 ] ||
		{ echo "client $cstatus, server $sstatus"; echo "$output"; cat "$out"; return 1; }

	# client preloaded, server not
	"$STRESS" server 0 >"$out" 2>&1 3>&- &
	spid=$!
	port=
	for _ in $(seq 200); do
		port=$(sed -n 's/^port //p' "$out" 2>/dev/null || true)
		[ -n "$port" ] && break
		sleep 0.05
	done
	[ -n "$port" ] || { kill -KILL "$spid"; cat "$out"; return 1; }
	run --separate-stderr "$RUN" "$STRESS" client 127.0.0.1 "$port" -v 512M -t 60
	cstatus=$status
	sstatus=0
	wait "$spid" || sstatus=$?
	[ "$cstatus" -eq 0 ] && [ "$sstatus" -eq 0 ] ||
		{ echo "client $cstatus, server $sstatus"; echo "$output"; cat "$out"; return 1; }
}

@test "stress on plain TCP, the reference" {
	run --separate-stderr "$STRESS" pair -v 1G -t 60
	assert_stress_ok
}
