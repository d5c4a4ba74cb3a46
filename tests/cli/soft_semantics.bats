#!/usr/bin/env bats
# Socket semantics under smc_run with the soft backend: each case of
# tests/progs/sockcheck runs as two processes, server and client, both
# started by smc_run (SMC_BACKEND=soft, a private smc_softd), and each end
# must print "CASE ok": the soft data path is held to plain TCP's behaviour.
# The plain-TCP tests at the end run the same program without smc_run, as
# the reference; one test checks that the connections really are SMCD.

load helpers
bats_require_minimum_version 1.5.0

SC="$SMC_BIN/tests/sockcheck"
RUN="$SMC_BIN/smc_run"
# A hang fails the case after this long instead of stalling the suite.
export SOCKCHECK_TIMEOUT=20

setup() {
	unset SMC_DEBUG SMC_SNDBUF SMC_RCVBUF LD_PRELOAD
	SERVER_PID=
	softd_start
}

teardown() {
	if [ -n "$SERVER_PID" ]; then
		kill -KILL "$SERVER_PID" 2>/dev/null
		wait "$SERVER_PID" 2>/dev/null
	fi
	softd_stop
}

# $output holds exactly two lines "CASE ok" (server and client) and the run
# succeeded; else show what each end said.
assert_both_ok() { # $1 = case
	if [ "$status" -eq 0 ] && [ "$output" = "$1 ok"$'\n'"$1 ok" ]; then
		return 0
	fi
	echo "sockcheck $1: status $status"
	printf 'stdout:\n%s\n' "$output"
	printf 'stderr:\n%s\n' "${stderr:-}"
	[ ! -s "${SOFTD_DIR:-/nonexistent}/log" ] || { echo "smc_softd log:"; cat "$SOFTD_DIR/log"; }
	return 1
}

# Both ends of a case under smc_run, each its own process.
soft_case() { # $1 = case
	run --separate-stderr "$SC" pair "$1" "$RUN"
	assert_both_ok "$1"
}

# Both ends of a case on plain TCP (no preload at all).
tcp_case() { # $1 = case
	run --separate-stderr "$SC" pair "$1"
	assert_both_ok "$1"
}

# A server in the background that prints "port N" first: SERVER_PID, and
# PORT once it has printed it (else fail, showing what it said).
start_server() { # OUTFILE COMMAND...
	local out=$1
	shift
	PORT=
	"$@" >"$out" 2>&1 3>&- &
	SERVER_PID=$!
	for _ in $(seq 200); do
		PORT=$(sed -n 's/^port //p' "$out" 2>/dev/null || true)
		[ -n "$PORT" ] && return 0
		kill -0 "$SERVER_PID" 2>/dev/null || break
		sleep 0.05
	done
	echo "the server did not print its port:"
	cat "$out"
	return 1
}

# The ends started by hand, as an administrator would: the server in the
# background, the client once the server has printed its port.  A wrapper of
# "-" runs that end without one (so one end can be preloaded, the other not).
ends() { # $1 = case, $2 = server wrapper, $3 = client wrapper
	local out="$BATS_TEST_TMPDIR/server.out" sw=() cw=() sstatus
	[ "$2" = - ] || sw=("$2")
	[ "$3" = - ] || cw=("$3")
	start_server "$out" "${sw[@]}" "$SC" server 0 "$1" || return 1
	run --separate-stderr "${cw[@]}" "$SC" client 127.0.0.1 "$PORT" "$1"
	sstatus=0
	wait "$SERVER_PID" || sstatus=$?
	SERVER_PID=
	output="$(sed '/^port /d' "$out")"$'\n'"$output"
	[ "$sstatus" -eq 0 ] || status=$sstatus
	assert_both_ok "$1"
}

# True once `smcss -a`
# lists a connection with local or peer port PORT in mode SMCD.  Polls while
# the connection may still be setting up: up to 5 s, or until process PID (when
# given) has exited.  Call it while the connection is open, e.g. with the
# server of a long case started by `ends` and $SERVER_PID.
assert_smcd_seen() { # $1 = port, $2 = pid (optional)
	local port="$1" pid="${2:-}" out=
	for _ in $(seq 100); do
		out=$("$SMC_BIN/smcss" -a 2>&1)
		if awk -v p="$port" '
			$1 == "ACTIVE" && ($4 ~ (":" p "$") || $5 ~ (":" p "$")) && $7 == "SMCD" { found = 1 }
			END { exit !found }' <<<"$out"; then
			return 0
		fi
		[ -z "$pid" ] || kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	echo "no SMCD connection on port $port in smcss -a:"
	echo "$out"
	return 1
}

@test "soft: the connections of a case are SMCD while they run" {
	local out="$BATS_TEST_TMPDIR/server.out"
	start_server "$out" "$RUN" "$SC" server 0 large
	"$RUN" "$SC" client 127.0.0.1 "$PORT" large >"$BATS_TEST_TMPDIR/client.out" 2>&1 3>&- &
	local client=$!
	assert_smcd_seen "$PORT" "$SERVER_PID"
	wait "$client"
	wait "$SERVER_PID"
	SERVER_PID=
	grep -qx "large ok" "$out"
	grep -qx "large ok" "$BATS_TEST_TMPDIR/client.out"
}

# A connection within this host (loopback, or to our own address) pairs on a
# ring and needs no control thread: a single-threaded program stays so (a
# thread makes its fork, malloc and locks dearer; scp lost a seventh of its
# gain to one).  Its ends hold the round trips until killed.
@test "soft: a pairing within the host leaves a single-threaded program one thread" {
	local out="$BATS_TEST_TMPDIR/local.out" threads
	start_server "$out" "$RUN" python3 -c '
import socket, time
ls = socket.socket()
ls.bind(("127.0.0.1", 0))
ls.listen(1)
print("port", ls.getsockname()[1], flush=True)
c = socket.create_connection(ls.getsockname())
s, _ = ls.accept()
while True:
    c.sendall(b"x" * 1000)
    got = 0
    while got < 1000:
        got += len(s.recv(1000 - got))
    s.sendall(b"y")
    c.recv(1)
    time.sleep(0.01)
'
	assert_smcd_seen "$PORT" "$SERVER_PID"
	sleep 0.3
	threads=$(awk '$1 == "Threads:" { print $2 }' "/proc/$SERVER_PID/status")
	[ "$threads" = 1 ] || { echo "threads: $threads"; cat "$out"; return 1; }
}

@test "sockcheck: every case has a test under smc_run in this file" {
	run "$SC" list
	[ "$status" -eq 0 ]
	local missing=
	for c in $output; do
		grep -q "^@test \"soft: $c:" "$BATS_TEST_FILENAME" || missing+=" $c"
	done
	[ -z "$missing" ] || { echo "cases without a test:$missing"; return 1; }
}

@test "soft: blocking: blocking read/write, 3 MiB each way in odd-sized chunks" {
	soft_case blocking
}

@test "soft: nonblock: nonblocking I/O: EAGAIN on an empty socket and a full buffer, poll loops" {
	soft_case nonblock
}

@test "soft: calls: send/recv/sendto/recvfrom/sendmsg/recvmsg/readv/writev, crossed" {
	soft_case calls
}

@test "soft: fortify: the fortified __read_chk/__recv_chk/__recvfrom_chk/__poll_chk/__ppoll_chk" {
	soft_case fortify
}

@test "soft: sendfile: sendfile from a file, with an offset and from the file position" {
	soft_case sendfile
}

# On the ring already: the kernel's splice would put the bytes on TCP, after
# the fence, where the peer reads only wake-ups (2 MiB lost before).
@test "soft: splice_out: a file through a pipe into a socket on the ring" {
	soft_case splice_out
}

@test "soft: splice_in: splice out of a socket on the ring into a pipe" {
	soft_case splice_in
}

# Each splice takes its bytes from the ring in one step: a peek, then a
# consume of what the pipe took, let two threads get the same bytes.
@test "soft: splice_threads: two threads splice one connection, every byte once" {
	soft_case splice_threads
}

@test "soft: mmsg: sendmmsg and recvmmsg on the ring" {
	soft_case mmsg
}

# sshd's pre-authentication child: once its filter is in, the library makes
# no system call of its own (getsockopt, sched_yield, sendto trapped before).
@test "soft: seccomp: a sandbox that allows read, write, poll and futex only" {
	soft_case seccomp
}

# io_uring reads are not seen by the library: a process with an instance
# keeps its connections on TCP, with a reason (both ends hung before).  The
# server declines at accept; the client is offered at connect here, so that
# it finds the server's registration (one offered after the server's end
# went is declined from the daemon's memory of it: test_soft_pair's
# soft_pair_decline_remembered).
@test "soft: io_uring: the server receives with io_uring, both ends stay TCP with a reason" {
	SMC_SOFT_PAIR_DELAY_USEC=0 soft_case io_uring
	uring_stats
}

uring_stats() {
	run smcd -d stats
	[ "$status" -eq 0 ]
	echo "$output" | grep -A5 'TCP fallback' >&2
	echo "$output" | grep -q '^  TCP fallback  *2 (client 1, server 1)$'
	echo "$output" | grep -A2 '^    Server$' | grep -q '^     URING      *1$'
	# the client hears the server's decline; on a loaded machine its offer
	# may come before the server's end registered and wait out the daemon's
	# 2.5 s for it: then the peer counts as not preloaded (0x03010000)
	echo "$output" | grep -A2 '^    Client$' | grep -Eq '^     (PEERDECL|PEER_NO_SMC)  *1$'
}

# An instance made once the connection is on shared memory, before either
# end wrote: both ends go on over TCP for good, and smcss shows why (the
# server's own reason, the client's peer's), as for an instance made before.
uring_after_pairing() { # CASE
	SOCKCHECK_PROBE="env -u LD_PRELOAD '$SMC_BIN/smcss' -a >'$BATS_TEST_TMPDIR/rows'" soft_case "$1"
	cat "$BATS_TEST_TMPDIR/rows" >&2
	[ "$(grep -c '^ACTIVE .* TCP 0x03060001$' "$BATS_TEST_TMPDIR/rows")" -eq 1 ]
	[ "$(grep -c '^ACTIVE .* TCP 0x05000000/0x03060001$' "$BATS_TEST_TMPDIR/rows")" -eq 1 ]
	[ "$(grep -c '^ACTIVE' "$BATS_TEST_TMPDIR/rows")" -eq 2 ]
}

@test "soft: io_uring_late: an instance after pairing, before the cut-over: TCP for good, with the reason" {
	uring_after_pairing io_uring_late
}

# The instance made by another process and taken with pidfd_getfd counts as
# one made here (it was not seen before).
@test "soft: io_uring_taken: an instance taken with pidfd_getfd: TCP for good, with the reason" {
	uring_after_pairing io_uring_taken
}

# A connection on the ring passed with SCM_RIGHTS to a process that did not
# inherit it; the sender closes its copy (ECONNRESET or lost bytes before).
@test "soft: fdpass: SCM_RIGHTS to another preloaded process, which goes on with the stream" {
	soft_case fdpass
	[ "$(smcss -a | grep -c '^ACTIVE')" -eq 0 ]
}

@test "soft: fdpass_mmsg: the same with sendmmsg and recvmmsg" {
	soft_case fdpass_mmsg
}

# A process takes the connection out of its parent with pidfd_getfd(2) and
# goes on with it while the parent keeps its copy.  Before, the taker wrote
# plain TCP behind the fence (the server never got the bytes), and once
# taken over it read again what the parent had read but not yet published.
@test "soft: pidfd_getfd: a connection taken from another process goes on on the ring" {
	soft_case pidfd_getfd
	[ "$(smcss -a | grep -c '^ACTIVE')" -eq 0 ]
}

# A preloaded echo server on port $1 for $2 connections, one after the
# other, in the background (SERVER_PID), listening when this returns.
echo_server() { # PORT CONNECTIONS
	"$RUN" python3 -c '
import socket, sys
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", int(sys.argv[1])))
l.listen(1)
for _ in range(int(sys.argv[2])):
    c, _ = l.accept()
    while True:
        b = c.recv(65536)
        if not b:
            break
        c.sendall(b)
    c.close()' "$1" "$2" &
	SERVER_PID=$!
	wait_tcp_listen "$1" "$SERVER_PID"
}

# A process without the library cannot read a ring: a connection on shared
# memory that has cut over (echoes until TCP carries no more of them) is not
# passed to it (EOPNOTSUPP), and goes on in the sender.  Before, it went,
# and the receiver's reads would have met doorbells.
@test "soft: SCM_RIGHTS of a connection on shared memory to a process without the library is refused" {
	local port sock="$BATS_TEST_TMPDIR/pass.sock" rpid
	port=$(tcp_free_port)
	echo_server "$port" 1
	python3 -c '
import socket, sys
u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
u.bind(sys.argv[1])
u.listen(1)
c, _ = u.accept()
c.recv(1)' "$sock" &
	rpid=$!
	for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
	run --separate-stderr "$RUN" python3 -c '
import errno, socket, sys
def echo(t, n):
    t.sendall(b"x" * n)
    got = 0
    while got < n:
        got += len(t.recv(65536))
    return got
sys.path.insert(0, sys.argv[3])
from shm_wait import wait_cut
t = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
wait_cut(t, echo)
u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
u.connect(sys.argv[2])
try:
    socket.send_fds(u, [b"f"], [t.fileno()])
    print("passed")
except OSError as e:
    print("refused", "EOPNOTSUPP" if e.errno == errno.EOPNOTSUPP else e.errno)
print("still", echo(t, 100000))
u.send(b"q")
t.close()' "$port" "$sock" "$SMC_TOP/tests/progs"
	wait "$rpid"
	wait "$SERVER_PID"
	SERVER_PID=
	[ "$status" -eq 0 ] || { echo "sender: $status $output $stderr"; return 1; }
	[ "$output" = $'refused EOPNOTSUPP\nstill 100000' ] || { echo "got: $output"; return 1; }
}

# The same before either end wrote on the ring: it goes, as TCP for good at
# both ends (before, it was refused too), and the receiver echoes through it.
@test "soft: SCM_RIGHTS of a connection on shared memory not cut over to a process without the library: it goes as TCP" {
	local port sock="$BATS_TEST_TMPDIR/pass.sock" rpid
	port=$(tcp_free_port)
	echo_server "$port" 1
	timeout 20 python3 -c '
import socket, sys
u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
u.bind(sys.argv[1])
u.listen(1)
c, _ = u.accept()
_, fds, _, _ = socket.recv_fds(c, 1, 1)
t = socket.socket(fileno=fds[0])
t.sendall(b"y" * 1000)
got = 0
while got < 1000:
    got += len(t.recv(65536))
print("receiver read", got)
t.close()' "$sock" >"$BATS_TEST_TMPDIR/receiver" &
	rpid=$!
	for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
	run --separate-stderr "$RUN" python3 -c '
import socket, sys
sys.path.insert(0, sys.argv[3])
from shm_wait import wait_mapped
t = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
wait_mapped(t)
u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
u.connect(sys.argv[2])
socket.send_fds(u, [b"f"], [t.fileno()])
print("passed")
t.close()' "$port" "$sock" "$SMC_TOP/tests/progs"
	wait "$rpid"
	wait "$SERVER_PID"
	SERVER_PID=
	[ "$status" -eq 0 ] || { echo "sender: $status $output $stderr"; return 1; }
	[ "$output" = passed ]
	[ "$(cat "$BATS_TEST_TMPDIR/receiver")" = "receiver read 1000" ]
}

# A program without the library (here: exec'd without LD_PRELOAD) reads
# and writes plain TCP.  Once a direction has cut over, the bytes on the
# ring cannot reach it: the connection is reset at both ends, with one line
# naming the descriptor (before, the peer's bytes went to a ring no one
# read).  One that keeps the library goes on.
@test "soft: exec: a program without the library gets a connection on shared memory: reset at both ends, one line" {
	local port
	port=$(tcp_free_port)
	"$RUN" python3 -c '
import socket, sys
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", int(sys.argv[1])))
l.listen(1)
for _ in range(2):
    c, _ = l.accept()
    try:
        while True:
            b = c.recv(65536)
            if not b:
                break
            c.sendall(b)
        print("server: end of stream")
    except ConnectionResetError:
        print("server: reset")
    c.close()' "$port" >"$BATS_TEST_TMPDIR/server" &
	SERVER_PID=$!
	wait_tcp_listen "$port" "$SERVER_PID"
	run --separate-stderr timeout -k 5 30 "$RUN" python3 "$SMC_TOP/tests/progs/exec_cut.py" "$port" plain
	[ "$status" -eq 0 ]
	[ "$output" = $'ready\nnew image: reset' ] || { echo "output: $output"; return 1; }
	[[ "$stderr" == "libsmc-preload: exec of /"*": fd 7 is on shared memory and the program has no libsmc-preload: the connection is reset" ]] ||
		{ echo "stderr: $stderr"; return 1; }
	run --separate-stderr timeout -k 5 30 "$RUN" python3 "$SMC_TOP/tests/progs/exec_cut.py" "$port" keep
	[ "$status" -eq 0 ]
	[ "$output" = $'ready\nnew image read 1000' ] || { echo "output: $output $stderr"; return 1; }
	[[ "$stderr" != *"has no libsmc-preload"* ]] || { echo "stderr: $stderr"; return 1; }
	wait "$SERVER_PID"
	SERVER_PID=
	[ "$(cat "$BATS_TEST_TMPDIR/server")" = $'server: reset\nserver: end of stream' ]
}

# The same before either direction has cut over: the server maps its ring
# and reads fence-aware, then executes (or posix_spawns, and closes its own
# copy) a program without the library on the connection, which writes
# first.  The connection stays on TCP for good at both ends, and the
# client's 8 MB reach sha256sum (before, the client cut over to a ring no
# one read, and both ends hung); smcss gives the client's end the reason.
unseen_before_cut() { # exec|spawn
	local port
	port=$(tcp_free_port)
	"$RUN" python3 -c '
import os, socket, sys
sys.path.insert(0, sys.argv[3])
from shm_wait import wait_mapped
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", int(sys.argv[1])))
l.listen(1)
c, _ = l.accept()
wait_mapped(c, "server")
try:
    c.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
except BlockingIOError:
    pass
env = dict(os.environ)
del env["LD_PRELOAD"]
argv = ["sh", "-c", "echo ready; exec sha256sum"]
if sys.argv[2] == "spawn":
    acts = [(os.POSIX_SPAWN_DUP2, c.fileno(), 0), (os.POSIX_SPAWN_DUP2, c.fileno(), 1)]
    pid = os.posix_spawn("/bin/sh", argv, env, file_actions=acts)
    c.close()
    sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
os.dup2(c.fileno(), 0)
os.dup2(c.fileno(), 1)
os.execve("/bin/sh", argv, env)' "$port" "$1" "$SMC_TOP/tests/progs" &
	SERVER_PID=$!
	wait_tcp_listen "$port" "$SERVER_PID"
	run --separate-stderr timeout -k 5 30 "$RUN" python3 -c '
import hashlib, os, socket, subprocess, sys
t = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
f = t.makefile("rb")
assert f.readline() == b"ready\n"
env = dict(os.environ)
del env["LD_PRELOAD"]
me = ":%d" % t.getsockname()[1]
rows = subprocess.run([sys.argv[2], "-a"], env=env, capture_output=True, text=True).stdout
print("client row:", *[" ".join(r.split()[6:]) for r in rows.splitlines()
                      if r.split()[3:4] and r.split()[3].endswith(me)])
data = bytes(range(256)) * (8 * 4096)
t.sendall(data)
t.shutdown(socket.SHUT_WR)
got = f.read().decode()
want = hashlib.sha256(data).hexdigest() + "  -\n"
print("intact" if got == want else "got %r" % got)' "$port" "$SMC_BIN/smcss"
	[ "$status" -eq 0 ]
	# the client's end shows why it stays TCP: its peer went to a program without the library
	[ "$output" = $'client row: TCP 0x05000000/0x03060004\nintact' ] ||
		{ echo "output: $output stderr: $stderr"; return 1; }
	[ -z "$stderr" ] || { echo "stderr: $stderr"; return 1; }
	wait "$SERVER_PID"
	SERVER_PID=
	# the rows and rings went with the server's last holder
	settle_conn_rows "$port" || { smcss -a; return 1; }
}

@test "soft: exec: a program without the library, before the cut-over: TCP for good at both ends, bytes intact" {
	unseen_before_cut exec
}

@test "soft: posix_spawn: a program without the library, before the cut-over: TCP for good, bytes intact" {
	unseen_before_cut spawn
}

# The other process dups the connection, passes it back and exits holding
# both fds: once the first fd let go, the second made the exit look like the
# last holder's, and the registration ended (the first process got the
# connection back as TCP, and read doorbells as data).
@test "soft: fdpass_back: passed back by a process that named it twice, then exited" {
	soft_case fdpass_back
	[ "$(smcss -a | grep -c '^ACTIVE')" -eq 0 ]
}

# Request and answer with both ends asleep in between (the server in
# epoll_wait, the client in poll, no spinning): each wake-up goes through
# the sleeper's eventfd, not as a doorbell byte over TCP.  Counted in the
# second 1,000 round trips, long after pairing and cut-over: with doorbells
# over TCP the sockets receive about 800 bytes; the 16-byte messages
# themselves would be 16,000.
pingpong_over_bells() { # CASE
	local line n
	SMC_SPIN_USEC=0 run --separate-stderr "$SC" pair "$1" "$RUN"
	assert_both_ok "$1"
	echo "$stderr" | grep '^pingpong ' >&2
	[ "$(echo "$stderr" | grep -c '^pingpong .*: TCP received [0-9]* bytes in the last [0-9]* round trips$')" -eq 2 ]
	while read -r line; do
		n=${line##*received }
		n=${n%% bytes*}
		[ "$n" -lt 200 ]
	done < <(echo "$stderr" | grep '^pingpong .*: TCP received')
}

@test "soft: pingpong: 2,000 round trips between sleepers wake through eventfds, not TCP" {
	pingpong_over_bells pingpong
}

# The same while another thread of the client sleeps in poll() on the
# connection for the second half: each thread that waits has a bell of its
# own (before, the second one was woken by TCP doorbells, about 900 bytes).
# Its first waits ring over TCP until the daemon names that bell, later on
# a loaded machine: the client counts the last 500 round trips only.
@test "soft: pingpong_threads: a second waiting thread gets a bell of its own" {
	pingpong_over_bells pingpong_threads
}

# The client closes every descriptor above its socket halfway (closefrom, as
# sshd does before exec), then opens files that take those numbers: the
# library's doorbells and control connection were among them, and none of
# its bytes may land in the files (an eventfd write of 8 bytes did before).
@test "soft: closefrom: the library forgets its descriptors a program closes, writes none into files" {
	SMC_SPIN_USEC=0 soft_case closefrom
}

# Twice as many busy loops as the machine has CPUs online (the count the
# library compares /proc/loadavg's runnable threads with, whatever this
# shell's affinity): a spinning wait would take the CPU one of them needs,
# so the ends sleep at once (and say so with SMC_DEBUG).  2000 round trips,
# waited for in poll and epoll: a bulk exchange on a crowded machine may
# find its data ready at every call and never wait on the ring.
@test "soft: more runnable threads than CPUs: waits do not spin" {
	local hogs=() n
	n=$(getconf _NPROCESSORS_ONLN)
	for _ in $(seq $((n * 2))); do
		( while :; do :; done ) &
		hogs+=($!)
	done
	SMC_DEBUG=1 run --separate-stderr "$SC" pair pingpong "$RUN"
	kill "${hogs[@]}"
	assert_both_ok pingpong
	echo "$stderr" | grep '^libsmc-preload: ' >&2
	echo "$stderr" | grep -E "^libsmc-preload: [0-9]+ runnable threads on $n CPUs: waits do not spin$"
}

# MSG_ZEROCOPY's completions come from the kernel's TCP path: a socket with
# SO_ZEROCOPY stays TCP (the client waited forever before).  Both ends
# offered at once: the server's end, which the case may end within the
# pairing delay, is counted only once offered.
@test "soft: zerocopy: SO_ZEROCOPY before connect: TCP with ZEROCOPY, completions arrive" {
	SMC_SOFT_PAIR_DELAY_USEC=0 soft_case zerocopy
	run smcd -d stats
	echo "$output" | grep -A5 'TCP fallback' >&2
	echo "$output" | grep -q '^  TCP fallback  *2 (client 1, server 1)$'
	echo "$output" | grep -q '^     ZEROCOPY  *1$'
	echo "$output" | grep -q '^     PEERDECL  *1$'
}

# Once paired SO_ZEROCOPY is refused as by the kernel's SMC, and a read of the
# error queue is never a read of the stream (it took a byte before).
@test "soft: zerocopy_late: SO_ZEROCOPY on a paired socket, MSG_ERRQUEUE with nothing queued" {
	soft_case zerocopy_late
}

# The hand-over across execve names its version: another one is refused with
# one line, never parsed as this one's.
@test "soft: exec: SMC_SOFT_INHERIT of another library version is refused with one line" {
	SMC_SOFT_INHERIT='ctl=-;9,2,1,0,5,12,1,1' run --separate-stderr "$RUN" python3 -c 'print("hi")'
	[ "$status" -eq 0 ]
	[ "$output" = "hi" ]
	[ "$stderr" = "libsmc-preload: SMC_SOFT_INHERIT of another library version (v1, this is v2): inherited connections not taken over" ]
	SMC_SOFT_INHERIT='v3;ctl=-' run --separate-stderr "$RUN" python3 -c 'print("hi")'
	[ "$output" = "hi" ]
	[ "$stderr" = "libsmc-preload: SMC_SOFT_INHERIT of another library version (v3, this is v2): inherited connections not taken over" ]
}

@test "soft: peek: MSG_PEEK leaves the data for the next read" {
	soft_case peek
}

@test "soft: waitall: MSG_WAITALL gathers pieces, stops short only at EOF" {
	soft_case waitall
}

@test "soft: dontwait: MSG_DONTWAIT on a blocking socket, both directions" {
	soft_case dontwait
}

@test "soft: nosignal: MSG_NOSIGNAL after the peer's close: EPIPE, no SIGPIPE" {
	soft_case nosignal
}

@test "soft: sigpipe: send and write after the peer's close: EPIPE and SIGPIPE" {
	soft_case sigpipe
}

@test "soft: poll: poll: timeout, POLLIN, POLLOUT, POLLRDHUP at shutdown" {
	soft_case poll
}

@test "soft: ppoll: ppoll: timeout, POLLIN, POLLOUT, POLLRDHUP at shutdown" {
	soft_case ppoll
}

@test "soft: select: select: timeout, readable, writable, EOF" {
	soft_case select
}

@test "soft: pselect: pselect: timeout, readable, writable, EOF" {
	soft_case pselect
}

@test "soft: epoll_lt: epoll level-triggered, data preserved" {
	soft_case epoll_lt
}

@test "soft: epoll_et: EPOLLET: one report per edge, read until EAGAIN" {
	soft_case epoll_et
}

@test "soft: epoll_oneshot: EPOLLONESHOT: one report until EPOLL_CTL_MOD" {
	soft_case epoll_oneshot
}

@test "soft: epoll_rdhup: EPOLLRDHUP on the peer's shutdown" {
	soft_case epoll_rdhup
}

# The outer set asks the inner one's rings (hook_epoll.c): paired at
# connect, and at the first data call (the cut-over under a nested set).
@test "soft: epoll_nested: an epoll fd inside another" {
	soft_case epoll_nested
}

@test "soft: epoll_nested: an epoll fd inside another (paired at the first data call)" {
	SMC_SOFT_PAIR_AFTER=1 soft_case epoll_nested
}

@test "soft: epoll_nested_et: the outer set first, edge-triggered, the socket added after" {
	soft_case epoll_nested_et
}

@test "soft: epoll_nested_dup2: dup2 over an inner set's number, then the outer set inside it" {
	SOCKCHECK_SETTLE=3 soft_case epoll_nested_dup2
}

@test "soft: epoll_mixed: one epoll set with the socket, a pipe and a UNIX socket" {
	soft_case epoll_mixed
}

@test "soft: epollout: EPOLLOUT stops while the peer does not read, resumes when it does" {
	soft_case epollout
}

@test "soft: shut_wr: shutdown(SHUT_WR): the peer reads all then EOF, and still writes back" {
	soft_case shut_wr
}

@test "soft: shut_rd: shutdown(SHUT_RD): reads return 0 at once, writes go on" {
	soft_case shut_rd
}

@test "soft: reset: close with unread data: the peer gets ECONNRESET, then EPIPE" {
	soft_case reset
}

# The reset reached the kernel's socket before the read: a read before the
# cut-over has it from TCP, and the ring's reset is no second news.  Which
# side the read takes varies: five tries.
@test "soft: reset_late: the reset is there before the read: ECONNRESET once, then EPIPE" {
	for _ in 1 2 3 4 5; do
		soft_case reset_late
	done
}

@test "soft: dup: dup/dup2/dup3/F_DUPFD/F_DUPFD_CLOEXEC: I/O through the copy" {
	soft_case dup
}

@test "soft: fork: accept-then-fork: the child serves, the parent closes its copy" {
	soft_case fork
}

@test "soft: fork_accept: accept-then-fork, the child waits for the ring, then serves" {
	soft_case fork_accept
}

@test "soft: creds_late: the server changes its credentials mid-connection (setgid): every byte arrives" {
	soft_case creds_late
}

@test "soft: creds_prctl: the server changes its credentials mid-connection (prctl): every byte arrives" {
	soft_case creds_prctl
}

@test "soft: creds_child: a forked child changes its credentials, then connects: every byte arrives" {
	soft_case creds_child
}

@test "soft: exit_unread: a forked child ends with _exit() and unread data: the peer is reset" {
	soft_case exit_unread
}

@test "soft: closed_then_gone: the client writes, closes and ends; the server reads it all late, then EOF" {
	soft_case closed_then_gone
}

@test "soft: exit_sleeping_peer: the client writes 200 KiB, closes and ends while the server sleeps 8 s: every byte, then EOF" {
	soft_case exit_sleeping_peer
}

@test "soft: idle_peer: the peer idle in poll() for input while a forked client reads 192 KiB through small buffers" {
	soft_case idle_peer
}

@test "soft: exec: fork+exec with the fd number in argv: the new image does the I/O" {
	soft_case exec
}

# The bytes the preloaded processes sent over their rings (smcd stats, TX).
tx_bytes() {
	"$SMC_BIN/smcd" stats | awk '/^TX Stats/ { tx = 1 } tx && /Data transmitted/ { print $4; exit }'
}

rx_bytes() {
	"$SMC_BIN/smcd" stats | awk '/^RX Stats/ { rx = 1 } rx && /Data transmitted/ { print $4; exit }'
}

# The first write goes before the connection is offered (over TCP, before
# the fence): smcd stats count what the ring carried, at both ends alike,
# as the kernel counts SMC's data.
@test "soft: smcd stats: RX data is what the ring carried, equal to TX, not the TCP bytes before the cut-over" {
	local out="$BATS_TEST_TMPDIR/sink.out" tx rx
	start_server "$out" "$RUN" python3 "$SMC_TOP/tests/progs/sink.py" server
	run "$RUN" python3 "$SMC_TOP/tests/progs/sink.py" client --port "$PORT" \
		--bytes 2097152 --chunk 65536 --pause 0.005
	[ "$status" -eq 0 ]
	wait "$SERVER_PID"
	SERVER_PID=
	run cat "$out"
	[ "${lines[1]}" = "got 2097152" ]
	tx=$(tx_bytes)
	rx=$(rx_bytes)
	echo "smcd stats: TX data $tx, RX data $rx"
	# some of it went over TCP first, the rest on the ring
	[ "$tx" -gt 0 ] && [ "$tx" -lt 2097152 ]
	[ "$rx" -eq "$tx" ]
}

@test "soft: exec: an image that replaced itself with execve() counts in smcd stats" {
	local out="$BATS_TEST_TMPDIR/sink.out"
	start_server "$out" "$RUN" python3 "$SMC_TOP/tests/progs/sink.py" server
	run "$RUN" python3 "$SMC_TOP/tests/progs/sink.py" client --port "$PORT" \
		--bytes 2097152 --chunk 65536 --pause 0.005 --exec-at 1048576
	[ "$status" -eq 0 ]
	[ "$output" = "sent 2097152" ]
	wait "$SERVER_PID"
	SERVER_PID=
	run cat "$out"
	[ "${lines[1]}" = "got 2097152" ]
	# the second MiB went from the new image: its counters reach the daemon
	# (the first image's alone are 1 MiB at most, less as it cut over late)
	run tx_bytes
	echo "smcd stats: TX data $output"
	[ "$output" -gt 1048576 ]
	[ "$output" -le 2097152 ]
}

# bash opens the connection, sends a request while its pairing may still be
# out, then executes wc on it (dup2 to 0).  The PAIR reply that reached the
# new image was swallowed by its synchronous STATS_ATTACH once: the
# connection never paired there.  bash's printf writes through stdio, and wc
# reads its stdin: a connection on descriptor 0, 1 or 2 that has not cut over
# stays TCP (stdio reads and writes it past the library), so the answer comes
# whole over TCP.
@test "soft: exec: bash's exec 3<>/dev/tcp then exec wc <&3: the answer comes whole, over TCP" {
	local port bytes=33554432 rx
	port=$(tcp_free_port)
	"$RUN" python3 -c '
import socket, sys
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", int(sys.argv[1])))
l.listen(1)
c, _ = l.accept()
req = b""
while not req.endswith(b"\r\n\r\n"):
    b = c.recv(1)
    if not b:
        sys.exit(1)
    req += b
chunk = bytes(range(256)) * 256
for _ in range(int(sys.argv[2]) // len(chunk)):
    c.sendall(chunk)
c.close()' "$port" "$bytes" &
	SERVER_PID=$!
	wait_tcp_listen "$port" "$SERVER_PID"
	rx=$(tx_bytes)
	run "$RUN" bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
printf "GET / HTTP/1.0\r\n\r\n" >&3 || exit 1
exec wc -c <&3' bash "$port"
	[ "$status" -eq 0 ] || { echo "client: $status $output"; return 1; }
	[ "$output" = "$bytes" ]
	wait "$SERVER_PID"
	SERVER_PID=
	rx=$(($(tx_bytes) - rx))
	echo "smcd stats: TX data $rx more"
	[ "$rx" -lt $((bytes / 2)) ]
}

# glibc's stdio reads and writes the kernel's socket past the library.
@test "soft: stdio_exec: a server hands the connection to an image on stdin and stdout that answers through stdio (git daemon, inetd)" {
	soft_case stdio_exec
}

@test "soft: stdio_fdopen: a server that read the request with read() fdopen()s the connection and goes on with stdio" {
	SOCKCHECK_PROBE="env -u LD_PRELOAD '$SMC_BIN/smcss' -a >'$BATS_TEST_TMPDIR/rows'" soft_case stdio_fdopen
	# smcss names why: the server's stdio (0x03060005), the client's peer's
	cat "$BATS_TEST_TMPDIR/rows" >&2
	[ "$(grep -c '^ACTIVE .* TCP 0x03060005$' "$BATS_TEST_TMPDIR/rows")" -eq 1 ]
	[ "$(grep -c '^ACTIVE .* TCP 0x05000000/0x03060005$' "$BATS_TEST_TMPDIR/rows")" -eq 1 ]
}

# The daemon stands still while the server offers its end and fdopen()s it:
# the reason comes before the daemon's reply, which, when it comes, takes
# the connection back to TCP with that reason; the rows say why, as when
# the reply came first.
@test "soft: stdio before the daemon's reply: both rows give the server's reason" {
	local t=$BATS_TEST_TMPDIR rows
	cat >"$t/late.py" <<-EOF
	import ctypes, os, socket, time
	libc = ctypes.CDLL(None, use_errno=True)
	libc.fdopen.restype = ctypes.c_void_p
	libc.fdopen.argtypes = [ctypes.c_int, ctypes.c_char_p]
	def wait_for(name):
	    while not os.path.exists(name):
	        time.sleep(0.02)
	lst = socket.socket()
	lst.bind(("127.0.0.1", 0))
	lst.listen(2)
	# a first connection opens the library's channel to the daemon
	one = socket.create_connection(lst.getsockname())
	two = lst.accept()[0]
	two.sendall(b"w")
	assert one.recv(1) == b"w"
	one.close()
	two.close()
	print("warm", flush=True)
	wait_for("$t/stopped")
	cli = socket.create_connection(lst.getsockname())
	srv, _ = lst.accept()
	assert libc.fdopen(srv.fileno(), b"r+")
	print("fdopen", flush=True)
	wait_for("$t/cont")
	cli.sendall(b"q" * 100)
	got = b""
	while len(got) < 100:
	    got += srv.recv(100 - len(got))
	srv.sendall(got)
	got = b""
	while len(got) < 100:
	    got += cli.recv(100 - len(got))
	assert got == b"q" * 100
	print("echoed", flush=True)
	wait_for("$t/end")
	EOF
	SMC_DEBUG=1 SMC_SOFT_PAIR_DELAY_USEC=0 "$RUN" python3 "$t/late.py" >"$t/late.out" 2>"$t/late.err" 3>&- &
	SERVER_PID=$!
	for _ in $(seq 400); do grep -q '^warm' "$t/late.out" && break; sleep 0.05; done
	kill -STOP "$SOFTD_PID"
	touch "$t/stopped"
	for _ in $(seq 400); do grep -q '^fdopen' "$t/late.out" && break; sleep 0.05; done
	kill -CONT "$SOFTD_PID"
	grep -q '^fdopen' "$t/late.out" || { cat "$t/late.err"; false; }
	touch "$t/cont"
	for _ in $(seq 400); do grep -q '^echoed' "$t/late.out" && break; sleep 0.05; done
	grep -q '^echoed' "$t/late.out" || { cat "$t/late.err"; false; }
	grep -q 'fd stays TCP: reason 0x03060005 came before its reply' "$t/late.err" ||
		{ cat "$t/late.err"; false; }
	for _ in $(seq 100); do
		rows=$(smcss -a | grep '^ACTIVE' | awk '{ print $NF }' | sort)
		[ "$rows" = "0x03060005"$'\n'"0x05000000/0x03060005" ] && break
		sleep 0.05
	done
	smcss -a >&2
	[ "$rows" = "0x03060005"$'\n'"0x05000000/0x03060005" ]
	touch "$t/end"
	wait "$SERVER_PID"
	SERVER_PID=
}

@test "soft: stdio_late: stdio writes a connection that has cut over: the peer gets every byte or ECONNRESET, never a hang" {
	soft_case stdio_late
	echo "$stderr"
	if [[ $stderr == *"ECONNRESET"* ]]; then
		[[ $stderr == *"libsmc-preload: fd "*": the peer wrote past the library after its cut-over"* ]]
	fi
}

@test "soft: spawn: posix_spawn of a new image that does the I/O on the inherited socket" {
	soft_case spawn
}

@test "soft: system: system() runs a new image that does the I/O on the inherited socket" {
	soft_case system
}

@test "soft: spawn_stdin: posix_spawn's file actions move the socket to the new image's stdin" {
	soft_case spawn_stdin
}

@test "soft: vfork_close: a vfork child closes its copy and execs: the parent's connection goes on" {
	soft_case vfork_close
}

@test "soft: vfork: vfork+exec of a new image that does the I/O on the inherited socket" {
	soft_case vfork
}

@test "soft: forkfail: after a fork() that failed, a close with unread data still resets" {
	soft_case forkfail
}

@test "soft: close_reader: close() while another thread sleeps in read(): both return, the peer sees EOF" {
	soft_case close_reader
}

@test "soft: threads_rw: one thread reads while another writes, 16 MiB each way" {
	soft_case threads_rw
}

@test "soft: threads_writers: two writer threads framing messages under a mutex" {
	soft_case threads_writers
}

@test "soft: rcvtimeo: SO_RCVTIMEO: EAGAIN after the timeout" {
	soft_case rcvtimeo
}

@test "soft: sndtimeo: SO_SNDTIMEO: EAGAIN when the peer does not read" {
	soft_case sndtimeo
}

@test "soft: eintr: a signal without SA_RESTART interrupts recv, with SA_RESTART it goes on" {
	soft_case eintr
}

@test "soft: eintr_send: a signal without SA_RESTART interrupts a send on a full connection, with SA_RESTART it waits on" {
	SOCKCHECK_SETTLE=10 soft_case eintr_send
}

# The library stands in front of handlers without SA_RESTART to know which
# one ran (base/signals.c); the program must see nothing of it.
@test "soft: sigaction() gives the program's handlers and flags back, handlers get their arguments" {
	run "$SMC_BIN/tests/sigcheck"
	[ "$status" -eq 0 ]
	local plain=$output
	[[ "$plain" == *"with_info ran 1 signo 10 user 1"* ]]
	run "$RUN" "$SMC_BIN/tests/sigcheck"
	[ "$status" -eq 0 ]
	[ "$output" = "$plain" ] || { diff <(echo "$plain") <(echo "$output"); return 1; }
}

@test "soft: fionread: FIONREAD and SIOCINQ equal the bytes sent and waiting" {
	soft_case fionread
}

@test "soft: siocoutq: SIOCOUTQ: bytes not yet taken by the peer, 0 when drained" {
	soft_case siocoutq
}

@test "soft: peerkill: peer SIGKILLed mid-transfer: ECONNRESET/EPIPE/EOF, never a hang" {
	soft_case peerkill
}

@test "soft: fork_writers: parent and child write one socket at once, each one's bytes whole and in order" {
	soft_case fork_writers
}

# Both processes of a server that forked right after accept() write over TCP
# before the client looks; then one cuts over: its fence counts both (a
# doorbell byte was read as data at 128 KiB before).
@test "soft: fork_early: two writers over TCP before the cut-over, then on the ring" {
	soft_case fork_early
}

# rsync's generator checks writability in a loop while its receiver sleeps in
# select(): the checks leave the doorbell to the reader (it slept to its
# timeout, or for ever, before).
@test "soft: shared_wait: a writability check in one process, a reader asleep in another" {
	soft_case shared_wait
}

# A client forks holding four connections, each with bytes of the server's
# it has not read: the child reads the rest of every one (on soft SMC-R
# all four go back to TCP at the fork, at once).
@test "soft: fork_many: a fork with four connections, bytes unread on each" {
	soft_case fork_many
}

# A client forks holding a close-on-exec connection with bytes of the
# server's unread: the child reads them and talks on, then the parent
# does (fork_cloexec); or the parent ends at once, as ssh -f's does, and
# the child talks to the end (fork_exit).
@test "soft: fork_cloexec: a forked child uses a close-on-exec connection, then its parent" {
	soft_case fork_cloexec
}

@test "soft: fork_exit: the parent ends right after the fork, its child talks on (ssh -f)" {
	soft_case fork_exit
}

# Two children hold it: one talks, the other ends without a word while
# the server's bytes for the first wait in the kernel.
@test "soft: fork_two: a silent child's exit takes nothing of its sibling's bytes" {
	soft_case fork_two
}

# The parent execs right after the fork (the connection is close-on-exec):
# its child talks on.
@test "soft: fork_owner_exec: the parent execs after the fork, its child talks on" {
	soft_case fork_owner_exec
}

@test "soft: rcvlowat: SO_RCVLOWAT set after the cut-over: a blocking read waits for the mark, getsockopt gives it back" {
	soft_case rcvlowat
	SMC_SOFT_FUTEX=0 soft_case rcvlowat
}

@test "soft: peerkill_poll: a non-blocking writer in poll(POLLOUT) on a full ring learns its reader was SIGKILLed" {
	soft_case peerkill_poll
}

@test "soft: peerkill_epoll: the same in epoll_wait(EPOLLOUT), level-triggered" {
	soft_case peerkill_epoll
}

@test "soft: peerkill_epollet: the same in epoll_wait(EPOLLOUT | EPOLLET): the reset's one edge is kept" {
	soft_case peerkill_epollet
}

@test "soft: peerkill_rd: peer SIGKILLed while we sleep in read: EOF or ECONNRESET within 1 s" {
	soft_case peerkill_rd
}

@test "soft: peerkill_rd with SMC_SOFT_FUTEX=0: the doorbell sleep sees the death too" {
	SMC_SOFT_FUTEX=0 soft_case peerkill_rd
}

@test "soft: eintr and rcvtimeo with SMC_SOFT_FUTEX=0 (sleeping in recv on TCP)" {
	SMC_SOFT_FUTEX=0 soft_case eintr
	SMC_SOFT_FUTEX=0 SOCKCHECK_SETTLE=10 soft_case eintr_send
	SMC_SOFT_FUTEX=0 soft_case rcvtimeo
}

@test "soft: large: 64 MiB each way, FNV-1a of the stream" {
	soft_case large
}

# ---- both ends started by hand, and one-sided preloading -----------------

@test "soft, ends started separately: blocking" {
	ends blocking "$RUN" "$RUN"
}

@test "soft, ends started separately: epoll_et" {
	ends epoll_et "$RUN" "$RUN"
}

@test "soft, ends started separately: exec" {
	ends exec "$RUN" "$RUN"
}

@test "only the server under smc_run: large, shut_wr, reset" {
	ends large "$RUN" -
	ends shut_wr "$RUN" -
	ends reset "$RUN" -
}

@test "only the client under smc_run: large, shut_wr, reset" {
	ends large - "$RUN"
	ends shut_wr - "$RUN"
	ends reset - "$RUN"
}

# ---- the reference: plain TCP, no preload -----------------------------------

@test "plain TCP: blocking, epoll_et, reset, peerkill, large" {
	for c in blocking epoll_et reset peerkill peerkill_poll peerkill_epollet stdio_exec stdio_late large; do
		tcp_case "$c"
	done
}

@test "plain TCP, ends started separately: fork, sigpipe" {
	ends fork - -
	ends sigpipe - -
}

@test "plain TCP: every case" {
	local failed=
	run "$SC" list
	for c in $output; do
		tcp_case "$c" || failed+=" $c"
	done
	[ -z "$failed" ] || { echo "failed on plain TCP:$failed"; return 1; }
}

# A listener that a forked child takes into a new program (a server that
# daemonizes, then executes the real one): the new program's accepted
# connections are carried.  Before, the fork left the listener TCP in the
# child, and the new program did not know it.
@test "a listener inherited through fork and exec: its connections are SMCD" {
	local port
	port=$(tcp_free_port)
	SMC_SOFT_PAIR_DELAY_USEC=0 "$RUN" python3 -c '
import os, socket, sys
l = socket.socket()
l.bind(("127.0.0.1", int(sys.argv[1])))
l.listen(4)
if os.fork() == 0:
    os.dup2(l.fileno(), 3)
    os.execvp("python3", ["python3", "-c", """
import socket
l = socket.socket(fileno=3)
c, _ = l.accept()
n = 0
while True:
    b = c.recv(65536)
    if not b:
        break
    n += len(b)
c.sendall(str(n).encode())
c.close()
"""])
l.close()
os.wait()' "$port" &
	SERVER_PID=$!
	wait_tcp_listen "$port" "$SERVER_PID"
	# both ends offered at once: one sendall may end within the pairing delay
	SMC_SOFT_PAIR_DELAY_USEC=0 run --separate-stderr "$RUN" python3 -c '
import os, socket, subprocess, sys
c = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
c.sendall(b"x" * 4000000)
env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
rows = subprocess.run([sys.argv[2], "-a"], capture_output=True, text=True, env=env).stdout
print(sum(1 for r in rows.splitlines() if r.startswith("ACTIVE") and (":%s " % sys.argv[1]) in r and r.rstrip().endswith("SMCD")))
c.shutdown(socket.SHUT_WR)
print(c.recv(100).decode())' "$port" "$SMC_BIN/smcss"
	[ "$status" -eq 0 ] || { echo "client: $status $output $stderr"; return 1; }
	[ "$output" = $'2\n4000000' ] || { echo "want 2 SMCD rows and 4000000 bytes, got: $output"; return 1; }
	wait "$SERVER_PID"
	SERVER_PID=
}

# A server that only reads, in epoll, whose connection is on shared memory
# while its peer has not paired yet, waits in the kernel's epoll alone (a
# quiet entry, hook_epoll.c); the peer pairs 0.4 s later, cuts over and
# writes into the ring: its first write must ring over TCP, and the server
# go on from the ring.
@test "soft: epoll: a reader whose peer pairs late is woken from the ring" {
	local out="$BATS_TEST_TMPDIR/server.out"
	start_server "$out" "$RUN" python3 -c '
import selectors, socket
lst = socket.create_server(("127.0.0.1", 0))
print("port", lst.getsockname()[1], flush=True)
c, _ = lst.accept()
c.setblocking(False)
sel = selectors.EpollSelector()
sel.register(c, selectors.EVENT_READ)
n = 0
while True:
    sel.select()
    try:
        b = c.recv(65536)
    except BlockingIOError:
        continue
    if not b:
        break
    if any(x != (n + i) % 251 for i, x in enumerate(b)):
        print("corrupt at", n, flush=True)
        break
    n += len(b)
print("got", n, flush=True)'
	SMC_SOFT_PAIR_DELAY_USEC=400000 run --separate-stderr timeout 30 "$RUN" python3 -c '
import os, socket, subprocess, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
env = dict(os.environ)
env.pop("LD_PRELOAD", None)
mode, n = "?", 0
for i in range(30):
    s.sendall(bytes((n + j) % 251 for j in range(1000)))
    n += 1000
    if i == 25:
        me = ":%d" % s.getsockname()[1]
        rows = subprocess.run([sys.argv[2], "-a"], env=env, capture_output=True, text=True).stdout
        mode = " ".join(r.split()[6] for r in rows.splitlines() if r.split()[3:4] and r.split()[3].endswith(me))
    time.sleep(0.05)
s.close()
print("sent", n, "then", mode)' "$PORT" "$SMC_BIN/smcss"
	wait "$SERVER_PID"
	SERVER_PID=
	[ "$status" -eq 0 ] || { echo "status $status: $output $stderr"; cat "$out"; return 1; }
	[ "$output" = "sent 30000 then SMCD" ]
	[ -z "$stderr" ]
	[ "$(sed "/^port /d" "$out")" = "got 30000" ]
}
