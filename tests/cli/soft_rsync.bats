#!/usr/bin/env bats
# rsync's daemon under smc_run, as an administrator would run it: a private
# rsyncd.conf on a high port (no chroot, the current user), a module on a
# generated tree of about 340 MB (2000 small files, 40 medium ones, 3 large
# ones).  The daemon forks a child for each connection and closes its own
# copy at once; rsync's receiving side forks a generator and a receiver that
# share the connection, one writing it and the other reading it (the client
# of a pull, the daemon's child in a push).  Each transfer is checked with
# diff -r; while it runs smcss -a must show the connection (SMCD when both
# ends are preloaded, TCP 0x03010000 when the client is not), and afterwards
# nothing of it may stay: no row, no ring memfd or socket in the daemon,
# while rsyncd still runs and after it stopped.  Transfer times go to the
# TAP output as "# ..." lines (plain TCP in the last test: 1-2 s a transfer
# on the 2-CPU CI machine, 2-4 s while watched), and a transfer that takes
# more than 30 s is ended and fails its test.
load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	command -v rsync >/dev/null ||
		missing_program "rsync is not installed (scripts/install-deps.sh installs it)"
	export TREE="$BATS_FILE_TMPDIR/tree"
	# sizes from a seeded generator, contents random: ~340 MB in all
	python3 - "$TREE" <<-'EOF'
	import os, random, sys
	root, rnd, total = sys.argv[1], random.Random(7), 0
	def put(path, n):
	    global total
	    os.makedirs(os.path.dirname(path), exist_ok=True)
	    with open(path, "wb") as f:
	        f.write(os.urandom(n))
	    total += n
	for i in range(2000):
	    put(f"{root}/small/d{i % 20:02d}/s{i:04d}", rnd.randint(0, 48 << 10))
	for i in range(40):
	    put(f"{root}/medium/m{i:02d}", rnd.randint(1 << 20, 4 << 20))
	for i in range(3):
	    put(f"{root}/large/l{i}", 60 << 20)
	put(f"{root}/deep/a/b/c/d/e/empty", 0)
	if total < 300 * 1000 * 1000:
	    sys.exit(f"tree of {total} bytes only")
	EOF
}

setup() {
	T=$(mktemp -d "${BATS_RUN_TMPDIR:-/tmp}/rsync.XXXXXX")
	softd_start
	unset SMC_SOFT_PAIR_AFTER SMC_DEBUG
	RUN="$SMC_BIN/smc_run"
	# the daemon's sockets and memfds before any rsync ran
	FDS_BEFORE=$(softd_held_fds)
	PORT=$(tcp_free_port)
	mkdir "$T/up"
	cat >"$T/rsyncd.conf" <<-EOF
	port = $PORT
	address = 127.0.0.1
	use chroot = no
	uid = $(id -un)
	gid = $(id -gn)
	pid file = $T/rsyncd.pid
	log file = $T/rsyncd.log
	[mod]
	path = $TREE
	read only = yes
	[up]
	path = $T/up
	read only = no
	EOF
	RSYNCD=
}

teardown() {
	stop_rsyncd
	softd_stop
	if [ -z "${BATS_TEST_COMPLETED:-}" ]; then
		echo "--- rsyncd log" >&2
		tail -20 "$T/rsyncd.log" "$T/rsyncd.err" >&2 2>/dev/null
	fi
	rm -rf "$T"
}

# rsync --daemon in the foreground, under the library when PRELOAD is $RUN.
start_rsyncd() { # [PRELOAD]
	${1:+"$1"} rsync --daemon --no-detach --config="$T/rsyncd.conf" 2>"$T/rsyncd.err" 3>&- &
	RSYNCD=$!
	wait_tcp_listen "$PORT" "$RSYNCD" || { cat "$T/rsyncd.err"; false; }
}

stop_rsyncd() {
	[ -n "${RSYNCD:-}" ] || return 0
	kill "$RSYNCD" 2>/dev/null
	wait "$RSYNCD" 2>/dev/null
	RSYNCD=
}

# One rsync client (under the library when PRELOAD is $RUN) in the
# background, 30 s at most (plain TCP takes 1-3 s), watched by smcss -a
# while it runs (with WATCH "watch"; each snapshot runs five short
# processes, a load on the two CPUs as any busy machine has); sets
# XFER_STATUS and XFER_SECS, the snapshots in $T/modes.  The rest: rsync's
# arguments.
xfer() { # PRELOAD WATCH ARG...
	local pre=$1 watch=$2 start pid old
	shift 2
	old=$(port_conn_rows "$PORT" | awk '{ print $1 }')
	start=$(date +%s.%N)
	timeout -k 5 30 ${pre:+"$pre"} rsync "$@" >"$T/client.out" 2>"$T/client.err" 3>&- &
	pid=$!
	if [ "$watch" = watch ]; then
		watch_conn_modes "$PORT" "$pid" "$T/modes" 50 "$old"
	fi
	XFER_STATUS=0
	wait "$pid" || XFER_STATUS=$?
	XFER_SECS=$(secs_since "$start")
	[ "$XFER_STATUS" -eq 0 ] || { echo "rsync $*: status $XFER_STATUS after $XFER_SECS s"; cat "$T/client.err"; }
}

@test "rsyncd under smc_run: a preloaded client pulls the tree over SMC-D, identical" {
	start_rsyncd "$RUN"
	xfer "$RUN" watch -a "rsync://127.0.0.1:$PORT/mod/" "$T/dest/"
	echo "# pull, both ends preloaded: ${XFER_SECS} s" >&3
	[ "$XFER_STATUS" -eq 0 ]
	diff -r "$TREE" "$T/dest"
	saw_conn_modes "$T/modes" "SMCD,SMCD"
}

@test "rsyncd under smc_run: after a preloaded pull nothing is left, rsyncd running or stopped" {
	start_rsyncd "$RUN"
	xfer "$RUN" - -a "rsync://127.0.0.1:$PORT/mod/" "$T/dest/"
	echo "# pull, both ends preloaded, not watched: ${XFER_SECS} s" >&3
	[ "$XFER_STATUS" -eq 0 ]
	assert_nothing_left "$PORT" "$FDS_BEFORE" stop_rsyncd
}

@test "rsyncd under smc_run: a preloaded client pushes the tree (daemon's generator and receiver), identical, nothing left" {
	start_rsyncd "$RUN"
	xfer "$RUN" watch -a "$TREE/" "rsync://127.0.0.1:$PORT/up/"
	echo "# push, both ends preloaded: ${XFER_SECS} s" >&3
	[ "$XFER_STATUS" -eq 0 ]
	diff -r "$TREE" "$T/up"
	saw_conn_modes "$T/modes" "SMCD,SMCD"
	assert_nothing_left "$PORT" "$FDS_BEFORE" stop_rsyncd
}

@test "rsyncd under smc_run: a client without the library pulls over TCP 0x03010000, identical, nothing left" {
	start_rsyncd "$RUN"
	xfer "" watch -a "rsync://127.0.0.1:$PORT/mod/" "$T/dest/"
	echo "# pull, client not preloaded: ${XFER_SECS} s" >&3
	[ "$XFER_STATUS" -eq 0 ]
	diff -r "$TREE" "$T/dest"
	saw_conn_modes "$T/modes" "TCP 0x03010000"
	assert_nothing_left "$PORT" "$FDS_BEFORE" stop_rsyncd
}

@test "rsyncd on plain TCP, the reference: pull (also watched) and push, identical" {
	start_rsyncd
	xfer "" - -a "rsync://127.0.0.1:$PORT/mod/" "$T/dest/"
	echo "# pull, plain TCP: ${XFER_SECS} s" >&3
	[ "$XFER_STATUS" -eq 0 ]
	diff -r "$TREE" "$T/dest"
	# the same load as the watched transfers above
	xfer "" watch -a "rsync://127.0.0.1:$PORT/mod/" "$T/dest2/"
	echo "# pull, plain TCP, watched: ${XFER_SECS} s" >&3
	[ "$XFER_STATUS" -eq 0 ]
	diff -r "$TREE" "$T/dest2"
	xfer "" - -a "$TREE/" "rsync://127.0.0.1:$PORT/up/"
	echo "# push, plain TCP: ${XFER_SECS} s" >&3
	[ "$XFER_STATUS" -eq 0 ]
	diff -r "$TREE" "$T/up"
}
