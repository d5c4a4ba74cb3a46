#!/usr/bin/env bats
# smc_softd: command line, control socket, signals, daemon mode, the tools on
# top of it, and hostile or greedy clients (tests/progs/nlflood.c).

load helpers

NLFLOOD="$SMC_BIN/tests/nlflood"

usage_err() { # stderr of a usage error: the message line, then the usage
	printf '%s\n' "$1"
	cat "$EXPECTED/smc_softd_usage"
}

# Wait until a daemon answers on socket $1 (while process $2 lives); further
# arguments run the probe (e.g. as another user).
wait_answer() {
	local sock=$1 pid=$2
	shift 2
	for _ in $(seq 200); do
		"$@" "$NLFLOOD" "$sock" ping 2>/dev/null && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# Start a foreground daemon on socket path $1 as softd_start does (softd_stop
# stops it); further arguments go to the daemon.
softd_start_at() {
	local path=$1
	shift
	SOFTD_DIR=$(mktemp -d "${BATS_RUN_TMPDIR:-/tmp}/softd.XXXXXX")
	export SMC_SOFT_SOCKET=$path SMC_BACKEND=soft
	"$SMC_BIN/smc_softd" -f -s "$path" "$@" 2>"$SOFTD_DIR/log" 3>&- &
	SOFTD_PID=$!
	wait_answer "$path" "$SOFTD_PID" || { cat "$SOFTD_DIR/log" >&2; return 1; }
}

# A second daemon beside the one of softd_start: socket $1.
other_start() {
	OTHER_SOCK=$1
	"$SMC_BIN/smc_softd" -f -s "$OTHER_SOCK" 2>"$BATS_TEST_TMPDIR/other.log" 3>&- &
	OTHER_PID=$!
	wait_answer "$OTHER_SOCK" "$OTHER_PID"
}

other_stop() {
	local rc=0
	kill -TERM "$OTHER_PID"
	wait "$OTHER_PID" || rc=$?
	OTHER_PID=
	[ ! -e "$OTHER_SOCK" ] || rc=1
	[ "$rc" -eq 0 ] || cat "$BATS_TEST_TMPDIR/other.log" >&2
	return "$rc"
}

teardown() {
	if [ -n "${OTHER_PID:-}" ]; then
		kill "$OTHER_PID" 2>/dev/null
		wait "$OTHER_PID" 2>/dev/null
	fi
	if [ -n "${DAEMON_PID:-}" ]; then
		kill "$DAEMON_PID" 2>/dev/null
	fi
	softd_stop || true
	[ -z "${USER_DIR:-}" ] || rm -rf "$USER_DIR"
}

@test "smc_softd -v prints the version" {
	run --separate-stderr smc_softd -v
	[ "$status" -eq 0 ]
	[ "$output" = "smc_softd utility, smc-tools-1.8.5" ]
	run --separate-stderr smc_softd --version
	[ "$status" -eq 0 ]
	[ "$output" = "smc_softd utility, smc-tools-1.8.5" ]
}

@test "smc_softd -h prints the usage on stdout" {
	run --separate-stderr smc_softd -h
	[ "$status" -eq 0 ]
	assert_output_file smc_softd_usage
	[ -z "$stderr" ]
	run --separate-stderr smc_softd --help
	[ "$status" -eq 0 ]
	assert_output_file smc_softd_usage
}

@test "smc_softd --settings prints its settings and starts nothing" {
	local sock="$BATS_TEST_TMPDIR/control"
	run --separate-stderr smc_softd -f -s "$sock" --peer-port 0 --roce r1=lo --sysfs "$BATS_TEST_TMPDIR" --settings
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$output" = "socket = $sock
peer_port = 0
sysfs = $BATS_TEST_TMPDIR
roce = r1=lo
wmem = 262144
rmem = 262144
smcd_buf_min = 16384
smcd_buf_max = 1048576
smcr_buf_size = 131072
max_ueids = 4
max_sockets_per_client = 65536
client_queue_max = 4194304" ]
	[ ! -e "$sock" ]
	SMC_SOFT_SOCKET="$sock" SMC_SYSFS_ROOT= run --separate-stderr smc_softd --settings
	[ "${lines[0]}" = "socket = $sock" ]
	[ "${lines[1]}" = "peer_port = 7609" ]
	[ "${lines[2]}" = "sysfs = /sys" ]
	[ "${lines[3]}" = "roce =" ]
	run --separate-stderr smc_softd --settings --peer-port 70000
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "$stderr" = "smc_softd: --peer-port 70000: not a port number (0 to 65535, 0: off)" ]
}

@test "smc_softd: unknown options and arguments" {
	run --separate-stderr smc_softd -x
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "$stderr" = "$(usage_err "smc_softd: invalid option -- 'x'")" ]
	run --separate-stderr smc_softd --bogus
	[ "$status" -eq 1 ]
	[ "$stderr" = "$(usage_err "smc_softd: unrecognized option '--bogus'")" ]
	run --separate-stderr smc_softd -s
	[ "$status" -eq 1 ]
	[ "$stderr" = "$(usage_err "smc_softd: option requires an argument -- 's'")" ]
	run --separate-stderr smc_softd -f extra
	[ "$status" -eq 1 ]
	[ "$stderr" = "$(usage_err "smc_softd: unexpected argument 'extra'")" ]
}

@test "smc_softd: bad --roce values" {
	local sock="$BATS_TEST_TMPDIR/control"
	run --separate-stderr smc_softd -f -s "$sock" --roce foo
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "$stderr" = "smc_softd: --roce foo: expected NAME=IFACE" ]
	run --separate-stderr smc_softd -f -s "$sock" --roce sr_x=nosuch0
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_softd: --roce sr_x=nosuch0: no network interface 'nosuch0'" ]
	[ ! -e "$sock" ]
}

@test "smc_softd: a --sysfs that is not a directory, and one without RDMA devices" {
	local sock="$BATS_TEST_TMPDIR/control"
	run --separate-stderr smc_softd -f -s "$sock" --sysfs "$BATS_TEST_TMPDIR/nosuch"
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_softd: --sysfs $BATS_TEST_TMPDIR/nosuch: No such file or directory" ]
	touch "$BATS_TEST_TMPDIR/file"
	run --separate-stderr env SMC_SYSFS_ROOT="$BATS_TEST_TMPDIR/file" "$SMC_BIN/smc_softd" -f -s "$sock"
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_softd: --sysfs $BATS_TEST_TMPDIR/file: Not a directory" ]
	[ ! -e "$sock" ]
	# no RDMA device, no SMC-R device: nothing invented for the interfaces
	mkdir "$BATS_TEST_TMPDIR/sys"
	softd_start --sysfs "$BATS_TEST_TMPDIR/sys"
	run --separate-stderr smcr device
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run --separate-stderr smcd device
	[ "${lines[1]}" = "0000 ISM   ffff:00:00.0  ff01   No        0                   " ]
	softd_stop
}

@test "smc_softd: socket paths it cannot use" {
	local long
	long="$BATS_TEST_TMPDIR/$(printf 'x%.0s' $(seq 110))"
	run --separate-stderr smc_softd -f -s ''
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_softd: socket: empty path" ]
	run --separate-stderr smc_softd -f -s "$long"
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_softd: $long: socket path too long (at most 107 bytes)" ]
	touch "$BATS_TEST_TMPDIR/file"
	run --separate-stderr smc_softd -f -s "$BATS_TEST_TMPDIR/file"
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_softd: $BATS_TEST_TMPDIR/file: exists and is not a socket" ]
	[ -f "$BATS_TEST_TMPDIR/file" ]
	run --separate-stderr smc_softd -f -s "$BATS_TEST_TMPDIR/file/control"
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_softd: $BATS_TEST_TMPDIR/file/control: Not a directory" ]
}

@test "smc_softd refuses a second daemon on a live socket" {
	softd_start
	run --separate-stderr smc_softd -f -s "$SMC_SOFT_SOCKET"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "$stderr" = "smc_softd: $SMC_SOFT_SOCKET: another smc_softd is running" ]
	run --separate-stderr smc_softd -s "$SMC_SOFT_SOCKET" -p "$BATS_TEST_TMPDIR/pid"
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_softd: $SMC_SOFT_SOCKET: another smc_softd is running" ]
	[ ! -e "$BATS_TEST_TMPDIR/pid" ]
	"$NLFLOOD" "$SMC_SOFT_SOCKET" ping
	softd_stop
}

@test "smc_softd replaces a stale socket" {
	local sock="$BATS_TEST_TMPDIR/run/control"
	mkdir -p "$BATS_TEST_TMPDIR/run"
	python3 -c 'import socket,sys
socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET).bind(sys.argv[1])' "$sock"
	[ -S "$sock" ]
	! "$NLFLOOD" "$sock" ping 2>/dev/null
	softd_start_at "$sock"
	run smcss -a
	[ "$status" -eq 0 ]
	softd_stop
}

@test "SIGTERM stops smc_softd: socket removed, exit 0" {
	softd_start
	local rc=0
	kill -TERM "$SOFTD_PID"
	wait "$SOFTD_PID" || rc=$?
	SOFTD_PID=
	[ "$rc" -eq 0 ]
	[ ! -e "$SMC_SOFT_SOCKET" ]
	grep -qx 'smc_softd: stopped by SIGTERM' "$SOFTD_DIR/log"
}

@test "SIGINT stops smc_softd: socket removed, exit 0" {
	softd_start
	local rc=0
	kill -INT "$SOFTD_PID"
	wait "$SOFTD_PID" || rc=$?
	SOFTD_PID=
	[ "$rc" -eq 0 ]
	[ ! -e "$SMC_SOFT_SOCKET" ]
	grep -qx 'smc_softd: stopped by SIGINT' "$SOFTD_DIR/log"
}

@test "SIGHUP stops smc_softd unless it was ignored at start (nohup)" {
	local rc=0
	softd_start --syslog
	if (( 0x$(awk '/^SigIgn/ { print $2 }' /proc/"$SOFTD_PID"/status) & 1 )); then
		skip "SIGHUP is ignored by the caller of the tests"
	fi
	kill -HUP "$SOFTD_PID"
	wait "$SOFTD_PID" || rc=$?
	SOFTD_PID=
	[ "$rc" -eq 0 ]
	[ ! -e "$SMC_SOFT_SOCKET" ]
	# --syslog: nothing on stderr
	[ ! -s "$SOFTD_DIR/log" ]
	(trap '' HUP; exec "$SMC_BIN/smc_softd" -f -s "$SMC_SOFT_SOCKET" 2>"$SOFTD_DIR/log" 3>&-) &
	SOFTD_PID=$!
	wait_answer "$SMC_SOFT_SOCKET" "$SOFTD_PID"
	kill -HUP "$SOFTD_PID"
	sleep 0.2
	"$NLFLOOD" "$SMC_SOFT_SOCKET" ping
	softd_stop
}

@test "smc_softd detaches and writes its pid file" {
	local sock="$BATS_TEST_TMPDIR/d/control" pid="$BATS_TEST_TMPDIR/d.pid"
	# sanitizer reports of the detached daemon would go to /dev/null: to files instead
	ASAN_OPTIONS="${ASAN_OPTIONS:-}:log_path=$BATS_TEST_TMPDIR/asan" \
	UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:log_path=$BATS_TEST_TMPDIR/ubsan" \
		run --separate-stderr smc_softd -s "$sock" -p "$pid" 3>&-
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ -z "$stderr" ]
	DAEMON_PID=$(cat "$pid")
	[ "$(cat /proc/"$DAEMON_PID"/comm)" = smc_softd ]
	[ "$(ps -o sid= -p "$DAEMON_PID" | tr -d ' ')" = "$DAEMON_PID" ]
	[ "$(readlink /proc/"$DAEMON_PID"/cwd)" = / ]
	[ "$(stat -c %A "$sock")" = srw-rw-rw- ]
	"$NLFLOOD" "$sock" ping
	kill -TERM "$DAEMON_PID"
	for _ in $(seq 100); do kill -0 "$DAEMON_PID" 2>/dev/null || break; sleep 0.05; done
	! kill -0 "$DAEMON_PID" 2>/dev/null
	DAEMON_PID=
	[ ! -e "$sock" ]
	[ ! -e "$pid" ]
	! ls "$BATS_TEST_TMPDIR"/asan* "$BATS_TEST_TMPDIR"/ubsan* 2>/dev/null
}

@test "smc_softd: the pid file goes next to the socket by default" {
	local sock="$BATS_TEST_TMPDIR/d/control"
	run --separate-stderr smc_softd -s "$sock" 3>&-
	[ "$status" -eq 0 ]
	DAEMON_PID=$(cat "$BATS_TEST_TMPDIR/d/smc_softd.pid")
	"$NLFLOOD" "$sock" ping
	kill -TERM "$DAEMON_PID"
	for _ in $(seq 100); do kill -0 "$DAEMON_PID" 2>/dev/null || break; sleep 0.05; done
	DAEMON_PID=
	[ ! -e "$BATS_TEST_TMPDIR/d/smc_softd.pid" ]
}

@test "smc_softd: a pid file it cannot write stops the start" {
	local sock="$BATS_TEST_TMPDIR/d/control"
	run --separate-stderr smc_softd -s "$sock" -p "$BATS_TEST_TMPDIR/nodir/pid" 3>&-
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_softd: pid file $BATS_TEST_TMPDIR/nodir/pid: No such file or directory" ]
	[ ! -e "$sock" ]
}

@test "smc_softd: SMC_SOFT_SOCKET names the socket when -s is absent" {
	local sock="$BATS_TEST_TMPDIR/env/control"
	SMC_SOFT_SOCKET=$sock "$SMC_BIN/smc_softd" -f 2>"$BATS_TEST_TMPDIR/log" 3>&- &
	DAEMON_PID=$!
	wait_answer "$sock" "$DAEMON_PID"
	[ "$(stat -c %a "$BATS_TEST_TMPDIR/env")" = 755 ]
	kill -TERM "$DAEMON_PID"
	wait "$DAEMON_PID"
	DAEMON_PID=
	[ ! -e "$sock" ]
}

@test "smc_softd as another user: socket under XDG_RUNTIME_DIR, trusted by that user only" {
	local sock
	USER_DIR=$(mktemp -d /tmp/softd-user.XXXXXX)
	chown 65534:65534 "$USER_DIR"
	chmod 700 "$USER_DIR"
	sock="$USER_DIR/smc_soft/control"
	run --separate-stderr setpriv --reuid=65534 --regid=65534 --clear-groups \
		env -u SMC_SOFT_SOCKET -u XDG_RUNTIME_DIR "$SMC_BIN/smc_softd" -f
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_softd: socket: XDG_RUNTIME_DIR is not set (name a socket with -s PATH or SMC_SOFT_SOCKET)" ]
	setpriv --reuid=65534 --regid=65534 --clear-groups env -u SMC_SOFT_SOCKET \
		XDG_RUNTIME_DIR="$USER_DIR" "$SMC_BIN/smc_softd" -f 2>"$USER_DIR/log" 3>&- &
	DAEMON_PID=$!
	wait_answer "$sock" "$DAEMON_PID" setpriv --reuid=65534 --regid=65534 --clear-groups
	[ "$(stat -c %a "$USER_DIR/smc_soft")" = 700 ]
	[ "$(stat -c %A "$sock")" = srw-rw-rw- ]
	[ "$(stat -c %u /proc/"$DAEMON_PID")" = 65534 ]
	# its own user finds it without being told, and trusts it
	run setpriv --reuid=65534 --regid=65534 --clear-groups \
		env -u SMC_SOFT_SOCKET XDG_RUNTIME_DIR="$USER_DIR" SMC_BACKEND=soft smcss -a
	[ "$status" -eq 0 ]
	[ "${lines[0]:0:5}" = State ]
	# root does not trust a daemon of another user (which could not tell
	# root's namespace anyway: it may not read root's /proc entries)
	run --separate-stderr env SMC_SOFT_SOCKET="$sock" SMC_BACKEND=soft smcss -a
	[ "$status" -eq 1 ]
	[ "$stderr" = "smcss: soft backend on $sock: refused: it runs as neither root nor the calling user" ]
	kill -TERM "$DAEMON_PID"
	wait "$DAEMON_PID"
	DAEMON_PID=
	[ ! -e "$sock" ]
}

@test "two daemons on two paths answer independently" {
	softd_start
	other_start "$BATS_TEST_TMPDIR/other/control"
	smc_pnet -a NET1 -I eth0
	run --separate-stderr smc_pnet
	[ "$status" -eq 0 ]
	[ "$output" = "NET1 eth0 n/a 255" ]
	run --separate-stderr env SMC_SOFT_SOCKET="$OTHER_SOCK" smc_pnet
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	other_stop
	run --separate-stderr smc_pnet
	[ "$output" = "NET1 eth0 n/a 255" ]
	softd_stop
}

@test "smc_softd starts again on the same path after a stop" {
	local sock="$BATS_TEST_TMPDIR/again/control"
	softd_start_at "$sock"
	smc_pnet -a NET1 -I eth0
	softd_stop
	softd_start_at "$sock"
	run --separate-stderr smc_pnet
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	softd_stop
}

@test "the tools run against smc_softd" {
	softd_start
	run --separate-stderr smc_pnet
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ -z "$stderr" ]
	run --separate-stderr smcss -a
	[ "$status" -eq 0 ]
	[ "$output" = "State          UID   Inode   Local Address           Peer Address            Intf Mode " ]
	run --separate-stderr smcd info
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "Kernel Capabilities" ]
	[ -z "$stderr" ]
	softd_stop
}

@test "privileged requests need CAP_NET_ADMIN of the client" {
	softd_start
	run --separate-stderr setpriv --inh-caps=-net_admin --bounding-set=-net_admin \
		smc_pnet -a NET1 -I eth0
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_pnet: Operation not permitted" ]
	# all capabilities, but in a user namespace of their own: not ours
	if unshare -U -r true 2>/dev/null; then
		run --separate-stderr unshare -U -r smc_pnet -a NET1 -I eth0
		[ "$status" -eq 1 ]
		[ "$stderr" = "smc_pnet: Operation not permitted" ]
	fi
	run --separate-stderr smc_pnet
	[ -z "$output" ]
	smc_pnet -a NET1 -I eth0
	run --separate-stderr smc_pnet
	[ "$output" = "NET1 eth0 n/a 255" ]
	softd_stop
}

@test "CAP_NET_ADMIN of a user other than root does not make an admin" {
	# otherwise a client could connect unprivileged, then exec a program with
	# file capabilities and borrow them: the uid the kernel recorded at
	# connect() must be root (or the daemon's own user)
	command -v setpriv >/dev/null || skip "setpriv is not installed"
	local dir
	dir=$(mktemp -d /tmp/softd-caps.XXXXXX)
	chmod 755 "$dir"
	SOFTD_SOCKET="$dir/control" softd_start
	run setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=+net_admin \
		--ambient-caps=+net_admin grep -c '^CapEff:.*1000$' /proc/self/status
	[ "$output" = 1 ] || skip "setpriv cannot hand CAP_NET_ADMIN to another user here"
	run --separate-stderr setpriv --reuid=65534 --regid=65534 --clear-groups \
		--inh-caps=+net_admin --ambient-caps=+net_admin smc_pnet -a NET1 -I eth0
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_pnet: Operation not permitted" ]
	run --separate-stderr smc_pnet
	[ -z "$output" ]
	softd_stop
	rm -rf "$dir"
}

@test "malformed requests get the kernel's errors and the daemon keeps serving" {
	softd_start
	run "$NLFLOOD" "$SMC_SOFT_SOCKET" malformed "$SOFTD_PID"
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 19 ]
	softd_stop
}

@test "a burst of 10000 requests whose replies are never read" {
	softd_start
	run "$NLFLOOD" "$SMC_SOFT_SOCKET" burst 10000
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "sent 10000 of 10000 requests in "* ]]
	softd_stop
}

@test "replies come in datagrams up to 32 KiB; a client whose replies pass 4 MiB is dropped" {
	softd_start
	run "$NLFLOOD" "$SMC_SOFT_SOCKET" overflow
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
	grep -q "^smc_softd: client pid [0-9]* dropped: replies over 4194304 bytes waiting" "$SOFTD_DIR/log"
	softd_stop
}

@test "a client that takes no reply is dropped, and the sockets its requests carry close" {
	softd_start
	run "$NLFLOOD" "$SMC_SOFT_SOCKET" stall
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^ok ' <<<"$output")" -eq 6 ]
	grep -q "^smc_softd: client pid [0-9]* dropped: it took no reply for 10 s" "$SOFTD_DIR/log"
	softd_stop
}

@test "500 concurrent clients are served" {
	softd_start
	run "$NLFLOOD" "$SMC_SOFT_SOCKET" clients 500
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "ok concurrent clients" ]
	softd_stop
}

@test "100000 requests in turn: memory stays flat, nothing leaks" {
	softd_start
	run "$NLFLOOD" "$SMC_SOFT_SOCKET" sequence 100000 "$SOFTD_PID"
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
	softd_stop
}

# The daemon changes to / once detached: a relative pid file must not land there.
@test "smc_softd: a relative pid file is written and removed in the starting directory" {
	local dir="$BATS_TEST_TMPDIR/rel"
	mkdir -p "$dir/d"
	cd "$dir"
	run --separate-stderr smc_softd -s "$dir/d/control" -p rel.pid 3>&-
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	# stopped by teardown wherever its pid file went
	DAEMON_PID=$(cat "$dir/rel.pid" 2>/dev/null || cat /rel.pid)
	[ -e "$dir/rel.pid" ]
	[ ! -e /rel.pid ]
	[ "$(cat /proc/"$DAEMON_PID"/comm)" = smc_softd ]
	kill -TERM "$DAEMON_PID"
	for _ in $(seq 100); do kill -0 "$DAEMON_PID" 2>/dev/null || break; sleep 0.05; done
	! kill -0 "$DAEMON_PID" 2>/dev/null
	DAEMON_PID=
	[ ! -e "$dir/rel.pid" ]
	[ ! -e "$dir/d/control" ]
}

@test "smc_softd: beside a relative socket path the pid file lands in the starting directory" {
	local dir="$BATS_TEST_TMPDIR/relsock"
	mkdir -p "$dir/d"
	cd "$dir"
	run --separate-stderr smc_softd -s d/control 3>&-
	[ "$status" -eq 0 ]
	DAEMON_PID=$(cat "$dir/d/smc_softd.pid")
	[ ! -e /d/smc_softd.pid ]
	"$NLFLOOD" "$dir/d/control" ping
	kill -TERM "$DAEMON_PID"
	for _ in $(seq 100); do kill -0 "$DAEMON_PID" 2>/dev/null || break; sleep 0.05; done
	DAEMON_PID=
	[ ! -e "$dir/d/smc_softd.pid" ]
	rm -f "$dir/d/control"
}

@test "smc_softd: a pid file it cannot write fails the start before detaching, nothing left" {
	local sock="$BATS_TEST_TMPDIR/nopid/control"
	run --separate-stderr smc_softd -s "$sock" -p /nonexistent/dir/pid 3>&-
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "$stderr" = "smc_softd: pid file /nonexistent/dir/pid: No such file or directory" ]
	! pgrep -f "smc_softd -s $sock"
	[ ! -e "$sock" ]
	# a symbolic link is not followed, its target stays as it is
	echo keep >"$BATS_TEST_TMPDIR/target"
	ln -s "$BATS_TEST_TMPDIR/target" "$BATS_TEST_TMPDIR/link.pid"
	run --separate-stderr smc_softd -s "$sock" -p "$BATS_TEST_TMPDIR/link.pid" 3>&-
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_softd: pid file $BATS_TEST_TMPDIR/link.pid: Too many levels of symbolic links" ]
	! pgrep -f "smc_softd -s $sock"
	[ "$(cat "$BATS_TEST_TMPDIR/target")" = keep ]
	[ ! -e "$sock" ]
}

@test "smc_softd --roce: names follow the kernel's rules and are quoted escaped" {
	run --separate-stderr smc_softd -f -s "$BATS_TEST_TMPDIR/r/control" --roce "réseau=nosuchif0"
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_softd: --roce réseau=nosuchif0: no network interface 'nosuchif0'" ]
	run --separate-stderr smc_softd -f -s "$BATS_TEST_TMPDIR/r/control" --roce $'sr\x01=lo:1'
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_softd: --roce sr\\x01=lo:1: invalid interface name 'lo:1': contains ':'" ]
	run --separate-stderr smc_softd -f -s "$BATS_TEST_TMPDIR/r/control" --roce $'a b=lo'
	[ "$stderr" = "smc_softd: --roce a b=lo: invalid device name 'a b': contains white space" ]
	[ ! -e "$BATS_TEST_TMPDIR/r/control" ]
}
