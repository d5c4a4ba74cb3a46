#!/usr/bin/env bats
# When an established connection is offered to the daemon (doc/soft-lifecycle.md
# section 1.1, SMC_SOFT_PAIR_DELAY_USEC in smc_run(8)): a connection that
# ends within the delay never reaches the daemon; one whose process waits is
# offered when the wait would outlast the delay (poll, epoll, a blocking
# receive: cut at that time) or at once (pause, sleep, select, waitpid,
# accept: not cut).  Both ends run under smc_run, python3 tests/progs/offer.py.

load helpers
bats_require_minimum_version 1.5.0

RUN="$SMC_BIN/smc_run"
OFFER="$SMC_TOP/tests/progs/offer.py"

setup() {
	unset SMC_DEBUG SMC_SNDBUF SMC_RCVBUF LD_PRELOAD SMC_SOFT_PAIR_AFTER SMC_SOFT_PAIR_DELAY_USEC
	softd_start
	PIDS=()
}

teardown() {
	local pid
	for pid in "${PIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	softd_stop
}

# Start offer.py WORDS... under smc_run in the background, output in $1;
# returns once its first line is there.
start() { # OUT WORDS...
	local out=$1
	shift
	"$RUN" python3 "$OFFER" "$@" >"$out" 2>"$out.err" 3>&- &
	PIDS+=("$!")
	for _ in $(seq 200); do
		[ -s "$out" ] && return 0
		kill -0 "$!" 2>/dev/null || break
		sleep 0.05
	done
	echo "offer.py $* did not start:"
	cat "$out" "$out.err"
	return 1
}

smcd_stat() { # DOTTED.FIELD
	"$SMC_BIN/smcd" -j -a stats | python3 -c 'import json,sys
v = json.load(sys.stdin)
for k in sys.argv[1].split("."):
    v = v[k]
print(v)' "$1"
}

smcd_total() {
	smcd_stat connections.total
}

# Both ends of the idle client's connection are listed as SMCD (within 5 s),
# while the client still waits.
assert_paired_while_waiting() { # CLIENT_OUT SERVER_PORT
	local ino cport c s
	read -r _ ino cport <"$1"
	c="127.0.0.1:$cport *127.0.0.1:$2 .* SMCD "
	s="127.0.0.1:$2 *127.0.0.1:$cport .* SMCD "
	for _ in $(seq 100); do
		run smcss
		grep -q "$c" <<<"$output" && grep -q "$s" <<<"$output" && break
		sleep 0.05
	done
	grep -q "$c" <<<"$output" && grep -q "$s" <<<"$output" ||
		{ echo "not paired:"; smcss -a; cat "$1"; return 1; }
	grep -q "$(printf ' %07d ' "$ino")" <<<"$output"
	! grep -qx woke "$1"
}

# Start an idle client waiting by $2, check, and end it.
idle_case() { # SERVER_PORT HOW
	start "$BATS_TEST_TMPDIR/$2" idle "$1" "$2"
	assert_paired_while_waiting "$BATS_TEST_TMPDIR/$2" "$1"
	kill -KILL "${PIDS[-1]}"
	wait "${PIDS[-1]}" 2>/dev/null || true
	unset 'PIDS[-1]'
}

@test "offer: connections that end within the delay never reach the daemon; with delay 0 each is offered" {
	local before after
	export SMC_SOFT_PAIR_DELAY_USEC=10000000
	start "$BATS_TEST_TMPDIR/srv" server
	read -r _ port <"$BATS_TEST_TMPDIR/srv"
	before=$(smcd_total)
	run --separate-stderr "$RUN" python3 "$OFFER" short "$port" 200
	[ "$status" -eq 0 ]
	[ "$output" = "short 200" ]
	after=$(smcd_total)
	[ "$after" -eq "$before" ] || { echo "$((after - before)) ends registered"; return 1; }
	run --separate-stderr smcss -a
	[ "${#lines[@]}" -eq 2 ]           # the header and the listener
	# the same with every connection offered at connect: the daemon counts them
	SMC_SOFT_PAIR_DELAY_USEC=0 run --separate-stderr "$RUN" python3 "$OFFER" short "$port" 200
	[ "$status" -eq 0 ]
	after=$(smcd_total)
	[ "$after" -ge $((before + 200)) ] || { echo "$((after - before)) ends registered"; return 1; }
}

@test "offer: an idle connection whose process pauses, sleeps, selects or waits for a child is offered at once" {
	local how
	export SMC_SOFT_PAIR_DELAY_USEC=10000000
	start "$BATS_TEST_TMPDIR/srv" holder
	read -r _ port <"$BATS_TEST_TMPDIR/srv"
	for how in pause sleep select waitpid; do
		idle_case "$port" "$how"
	done
}

@test "offer: an idle connection whose process polls, epolls or receives is offered when the delay is over" {
	local how
	export SMC_SOFT_PAIR_DELAY_USEC=300000
	start "$BATS_TEST_TMPDIR/srv" holder
	read -r _ port <"$BATS_TEST_TMPDIR/srv"
	for how in poll epoll recv; do
		idle_case "$port" "$how"
	done
}

@test "offer: a blocking receive waiting for the offer keeps SO_RCVTIMEO and signals" {
	export SMC_SOFT_PAIR_DELAY_USEC=10000000
	start "$BATS_TEST_TMPDIR/srv" holder
	read -r _ port <"$BATS_TEST_TMPDIR/srv"
	# the offer would come after 10 s; the receive times out after 0.2
	run --separate-stderr timeout -k 1 5 "$RUN" python3 "$OFFER" rcvtimeo "$port"
	[ "$status" -eq 0 ]
	[ "$output" = "recv EAGAIN" ]
	# a handler without SA_RESTART ends it after 0.2 (EINTR, then the handler)
	run --separate-stderr timeout -k 1 5 "$RUN" python3 "$OFFER" alarm "$port"
	[ "$status" -eq 0 ]
	[ "$output" = "recv interrupted" ]
}

# sockcheck cases whose first calls wait on a connection not offered yet:
# SO_RCVTIMEO, MSG_WAITALL, MSG_PEEK, poll and epoll; every byte checked.
# With 10 s the whole case runs before the offer; with 0.3 s the offer
# comes in its middle.  With eintr: its watchdog's SIGALRM handler has no
# SA_RESTART and its SIGUSR1 handler has, and the library's wait for the
# offer restarts after the second only (it knows which ran, smc_run(8)).
@test "offer: sockcheck cases that wait before the offer, the offer late or in the middle" {
	local c d
	for d in 10000000 300000; do
		for c in rcvtimeo blocking waitall peek poll epoll_lt eintr; do
			SMC_SOFT_PAIR_DELAY_USEC=$d run --separate-stderr \
				"$SMC_BIN/tests/sockcheck" pair "$c" "$RUN"
			[ "$status" -eq 0 ] && [ "$output" = "$c ok"$'\n'"$c ok" ] ||
				{ echo "delay $d, $c: status $status"; echo "$output"; echo "$stderr"; return 1; }
		done
	done
}

# A sender that only calls sendfile() and never waits (nginx with a reader
# that keeps up) is offered at a sendfile() once its time has come; before,
# only its waits and the other sends offered it, and the file went on TCP.
# The loopback's byte count tells: a file through the ring leaves on it the
# bytes before the cut-over and the doorbells only.
@test "offer: a sendfile() sender that never waits is offered, and the file goes through the ring" {
	local size=$((128 * 1024 * 1024)) before after
	truncate -s "$size" "$BATS_TEST_TMPDIR/file"
	start "$BATS_TEST_TMPDIR/srv" sendfile "$BATS_TEST_TMPDIR/file"
	read -r _ port <"$BATS_TEST_TMPDIR/srv"
	before=$(cat /sys/class/net/lo/statistics/tx_bytes)
	run --separate-stderr "$RUN" python3 "$OFFER" drain "$port"
	[ "$status" -eq 0 ]
	[ "$output" = "drained $size" ]
	after=$(cat /sys/class/net/lo/statistics/tx_bytes)
	[ $((after - before)) -lt $((size / 2)) ] ||
		{ echo "the loopback carried $((after - before)) bytes for a file of $size"; return 1; }
}
