#!/usr/bin/env bats
# libsmc-preload.so (smc_run(8) "The preload library", with the differences
# from smc-tools 1.8.5 listed there):
#  (a) on a kernel without AF_SMC, programs under smc_run keep working on TCP;
#  (b) the mapping itself, seen through libfakesmc.so, a fake socket() that
#      the library finds behind itself and that logs every call;
#  (c) on a kernel with AF_SMC, the sockets really are AF_SMC.

load helpers
bats_require_minimum_version 1.5.0

LIB="$SMC_BIN/libsmc-preload.so"
FAKE="$SMC_BIN/tests/libfakesmc.so"
PROBE="$SMC_BIN/tests/sockprobe"
THREADS="$SMC_BIN/tests/sockthreads"
RUN="$SMC_BIN/smc_run"

MAP_LINE="libsmc-preload: map sock to AF_SMC"
FALLBACK_LINE="libsmc-preload: AF_SMC not available, using TCP"

setup_file() {
	# the interpreter itself, not a wrapper script (pyenv shims and the like)
	PYTHON=$(python3 -c 'import sys; print(sys.executable)')
	export PYTHON
}

setup() {
	unset SMC_DEBUG SMC_SNDBUF SMC_RCVBUF FAKESMC_ERRNO LD_PRELOAD
	export SMC_BACKEND=auto
	export FAKESMC_LOG="$BATS_TEST_TMPDIR/socket.log"
	: > "$FAKESMC_LOG"
}

# Run a program with the library under test and the fake AF_SMC behind it.
fake() {
	LD_PRELOAD="$LIB:$FAKE" "$@"
}

# Compare a value with what was expected, showing both on failure.
same() { # $1 = expected, $2 = actual
	diff -u <(printf '%s\n' "$1") <(printf '%s\n' "$2")
}

need_no_kernel_smc() {
	if kernel_has_smc; then
		skip "this kernel has AF_SMC; the TCP fallback is tested through libfakesmc"
	fi
}

ipv6_loopback() {
	"$PYTHON" -c 'import socket
s = socket.socket(socket.AF_INET6)
s.bind(("::1", 0))' 2>/dev/null
}

# Python: socket.socket() for both families, SO_DOMAIN and SO_PROTOCOL, and
# a round trip over 127.0.0.1.
PY_PROBE='import socket
for fam in (socket.AF_INET, socket.AF_INET6):
    s = socket.socket(fam, socket.SOCK_STREAM)
    print(s.getsockopt(socket.SOL_SOCKET, socket.SO_DOMAIN),
          s.getsockopt(socket.SOL_SOCKET, socket.SO_PROTOCOL))
    s.close()
srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
srv.bind(("127.0.0.1", 0))
srv.listen(1)
cli = socket.create_connection(srv.getsockname())
conn, _ = srv.accept()
cli.sendall(b"smc")
print(conn.recv(3).decode())'

# ---- the library file ------------------------------------------------------

# The hooks, and nothing of the library's own (the soft data path's code is
# linked in hidden).
HOOKS="_Exit _exit __poll_chk __ppoll_chk __read_chk __recv_chk __recvfrom_chk accept accept4 close
close_range closefrom connect dup dup2 dup3 epoll_create epoll_create1 epoll_ctl epoll_pwait epoll_pwait2 epoll_wait execl execle execlp
execv execve execvp execvpe fcntl fcntl64 fdopen fork getsockopt io_uring_queue_init io_uring_queue_init_mem
io_uring_queue_init_params io_uring_setup __io_uring_get_cqe io_uring_enter io_uring_enter2
io_uring_queue_mmap io_uring_register io_uring_register_files io_uring_register_files_tags
io_uring_register_files_update io_uring_register_files_update_tag io_uring_submit
io_uring_submit_and_get_events io_uring_submit_and_wait io_uring_submit_and_wait_min_timeout
io_uring_submit_and_wait_reg io_uring_submit_and_wait_timeout io_uring_wait_cqe_timeout
io_uring_wait_cqes io_uring_wait_cqes_min_timeout ioctl listen poll popen posix_spawn posix_spawn_file_actions_adddup2
posix_spawn_file_actions_addclose posix_spawn_file_actions_addclosefrom_np
posix_spawn_file_actions_addopen posix_spawn_file_actions_destroy posix_spawn_file_actions_init
pidfd_getfd posix_spawnp ppoll prctl
pselect read readv recv recvfrom recvmmsg recvmsg select send sendfile sendfile64 sendmmsg sendmsg sendto
setsockopt shutdown sigaction socket splice syscall system write writev
clock_nanosleep nanosleep pause sigsuspend sigtimedwait sigwaitinfo sleep usleep wait wait4 waitid waitpid
setuid setgid seteuid setegid setreuid setregid setresuid setresgid setgroups initgroups
setfsuid setfsgid capset"

@test "preload: SONAME, only the hooks exported, no sanitizer runtime, no setuid" {
	command -v readelf >/dev/null && command -v nm >/dev/null ||
		skip "binutils (readelf, nm) not installed"
	run readelf -d "$LIB"
	[ "$status" -eq 0 ]
	grep -q 'Library soname: \[libsmc-preload.so.1\]' <<<"$output"
	! grep -E 'NEEDED.*(asan|ubsan|tsan)' <<<"$output"
	run nm -D --defined-only "$LIB"
	[ "$status" -eq 0 ]
	same "$(tr ' ' '\n' <<<"$HOOKS" | sed '/^$/d' | sort)" "$(awk '{ print $3 }' <<<"$output" | sort)"
	[ ! -u "$LIB" ] && [ ! -g "$LIB" ]
}

# ---- (a) a kernel without AF_SMC: everything keeps working on TCP ----------

@test "no kernel SMC: sockets under smc_run stay TCP and keep their flags" {
	need_no_kernel_smc
	run --separate-stderr "$RUN" "$PROBE" inet:stream:0 inet:stream+nonblock+cloexec:0 \
		inet6:stream:6 inet6:stream+nonblock+cloexec:0 inet:dgram:0 unix:stream:0
	[ "$status" -eq 0 ]
	same "inet:stream:0 domain=2 protocol=6 nonblock=0 cloexec=0
inet:stream+nonblock+cloexec:0 domain=2 protocol=6 nonblock=1 cloexec=1
inet6:stream:6 domain=10 protocol=6 nonblock=0 cloexec=0
inet6:stream+nonblock+cloexec:0 domain=10 protocol=6 nonblock=1 cloexec=1
inet:dgram:0 domain=2 protocol=17 nonblock=0 cloexec=0
unix:stream:0 domain=1 protocol=0 nonblock=0 cloexec=0" "$output"
	[ -z "$stderr" ]
}

@test "no kernel SMC: a TCP connection under smc_run carries data" {
	need_no_kernel_smc
	run --separate-stderr "$RUN" "$PROBE" exchange
	[ "$status" -eq 0 ]
	same "exchange ok" "$output"
	ipv6_loopback || skip "no IPv6 loopback address"
	run --separate-stderr "$RUN" "$PROBE" exchange6
	[ "$status" -eq 0 ]
	same "exchange6 ok" "$output"
}

@test "no kernel SMC: smc_run -d reports the attempt and the fallback once" {
	need_no_kernel_smc
	run --separate-stderr "$RUN" -d "$PROBE" inet:stream:0 inet6:stream:0 exchange
	[ "$status" -eq 0 ]
	same "$MAP_LINE
$FALLBACK_LINE" "$stderr"
}

@test "no kernel SMC: python3 under smc_run gets working TCP sockets" {
	need_no_kernel_smc
	run --separate-stderr "$RUN" "$PYTHON" -c "$PY_PROBE"
	[ "$status" -eq 0 ]
	same "2 6
10 6
smc" "$output"
	[ -z "$stderr" ]
	SMC_DEBUG=1 run --separate-stderr "$RUN" "$PYTHON" -c "$PY_PROBE"
	[ "$status" -eq 0 ]
	same "$MAP_LINE
$FALLBACK_LINE" "$stderr"
}

@test "no kernel SMC: threads racing through initialisation all get sockets" {
	need_no_kernel_smc
	run --separate-stderr "$RUN" "$THREADS" 16 200
	[ "$status" -eq 0 ]
	same "created 3200 failed 0" "$output"
}

# ---- (b) the mapping, seen by libfakesmc.so --------------------------------

@test "mapping: TCP sockets become AF_SMC with protocol 0 (IPv4) or 1 (IPv6)" {
	run --separate-stderr fake "$PROBE" inet:stream:0 inet:stream:6 inet6:stream:0 inet6:stream:6
	[ "$status" -eq 0 ]
	same "socket domain=43 type=0x1 protocol=0
socket domain=43 type=0x1 protocol=0
socket domain=43 type=0x1 protocol=1
socket domain=43 type=0x1 protocol=1" "$(cat "$FAKESMC_LOG")"
	# the fake hands back real TCP sockets, so the program works on
	same "inet:stream:0 domain=2 protocol=6 nonblock=0 cloexec=0
inet:stream:6 domain=2 protocol=6 nonblock=0 cloexec=0
inet6:stream:0 domain=10 protocol=6 nonblock=0 cloexec=0
inet6:stream:6 domain=10 protocol=6 nonblock=0 cloexec=0" "$output"
}

@test "mapping: SOCK_NONBLOCK and SOCK_CLOEXEC are kept" {
	run --separate-stderr fake "$PROBE" inet:stream+nonblock+cloexec:0 \
		inet6:stream+nonblock:6 inet:stream+cloexec:6
	[ "$status" -eq 0 ]
	same "socket domain=43 type=0x80801 protocol=0
socket domain=43 type=0x801 protocol=1
socket domain=43 type=0x80001 protocol=0" "$(cat "$FAKESMC_LOG")"
	same "inet:stream+nonblock+cloexec:0 domain=2 protocol=6 nonblock=1 cloexec=1
inet6:stream+nonblock:6 domain=10 protocol=6 nonblock=1 cloexec=0
inet:stream+cloexec:6 domain=2 protocol=6 nonblock=0 cloexec=1" "$output"
}

@test "mapping: everything that is not TCP passes through unchanged" {
	# UDP, UNIX, SCTP (132), UDP protocol on a stream, seqpacket, raw:
	# some may fail to be created here (no sctp module, no root); the log
	# shows what reached the next socket()
	run --separate-stderr fake "$PROBE" inet:dgram:0 inet6:dgram:17 unix:stream:0 \
		unix:dgram+cloexec:0 inet:stream:132 inet6:stream:132 inet:stream:17 \
		inet:seqpacket:132 inet:raw:6 smc:stream:0
	same "socket domain=2 type=0x2 protocol=0
socket domain=10 type=0x2 protocol=17
socket domain=1 type=0x1 protocol=0
socket domain=1 type=0x80002 protocol=0
socket domain=2 type=0x1 protocol=132
socket domain=10 type=0x1 protocol=132
socket domain=2 type=0x1 protocol=17
socket domain=2 type=0x5 protocol=132
socket domain=2 type=0x3 protocol=6
socket domain=43 type=0x1 protocol=0" "$(cat "$FAKESMC_LOG")"
	[[ $output == *"inet:dgram:0 domain=2 protocol=17 "* ]]
	[[ $output == *"unix:stream:0 domain=1 protocol=0 "* ]]
}

@test "mapping: a TCP connection through the mapped sockets carries data" {
	run --separate-stderr fake "$PROBE" exchange
	[ "$status" -eq 0 ]
	same "exchange ok" "$output"
	same "socket domain=43 type=0x1 protocol=0
socket domain=43 type=0x1 protocol=0" "$(cat "$FAKESMC_LOG")"
}

@test "mapping: python3's socket.socket() is mapped" {
	run --separate-stderr fake "$PYTHON" -c "$PY_PROBE"
	[ "$status" -eq 0 ]
	same "2 6
10 6
smc" "$output"
	# python adds SOCK_CLOEXEC itself; the last socket is create_connection()'s
	same "socket domain=43 type=0x80001 protocol=0
socket domain=43 type=0x80001 protocol=1
socket domain=43 type=0x80001 protocol=0
socket domain=43 type=0x80001 protocol=0" "$(cat "$FAKESMC_LOG")"
}

@test "SMC_SNDBUF=16k sets SO_SNDBUF of mapped sockets" {
	SMC_DEBUG=1 SMC_SNDBUF=16k run --separate-stderr fake "$PROBE" -b inet:stream:0
	[ "$status" -eq 0 ]
	same "$MAP_LINE
sockopt 7 set to 16384" "$stderr"
	# the kernel doubles what it is given (socket(7))
	[[ $output == *" sndbuf=32768 "* ]]
}

@test "SMC_RCVBUF=1m sets SO_RCVBUF of mapped sockets" {
	local max expect
	max=$(cat /proc/sys/net/core/rmem_max)
	expect=$(( 2 * (max < 1048576 ? max : 1048576) ))
	SMC_DEBUG=1 SMC_RCVBUF=1m run --separate-stderr fake "$PROBE" -b inet6:stream:0
	[ "$status" -eq 0 ]
	same "$MAP_LINE
sockopt 8 set to 1048576" "$stderr"
	[[ $output == *" rcvbuf=$expect" ]]
}

@test "SMC_SNDBUF and SMC_RCVBUF: k/K/m/M suffixes, send size first" {
	SMC_DEBUG=1 SMC_SNDBUF=64K SMC_RCVBUF=2M run --separate-stderr fake "$PROBE" inet:stream:0
	[ "$status" -eq 0 ]
	same "$MAP_LINE
sockopt 7 set to 65536
sockopt 8 set to 2097152" "$stderr"
	SMC_DEBUG=1 SMC_SNDBUF=20000 SMC_RCVBUF=3k run --separate-stderr fake "$PROBE" inet:stream:0
	same "$MAP_LINE
sockopt 7 set to 20000
sockopt 8 set to 3072" "$stderr"
	# like upstream, other trailing characters are ignored
	SMC_DEBUG=1 SMC_SNDBUF=5000x run --separate-stderr fake "$PROBE" inet:stream:0
	same "$MAP_LINE
sockopt 7 set to 5000" "$stderr"
}

@test "SMC_SNDBUF/SMC_RCVBUF leave unmapped sockets alone" {
	local specs="inet:dgram:0 inet6:dgram:0 unix:stream:0 unix:dgram:0"
	run --separate-stderr fake "$PROBE" -b $specs
	[ "$status" -eq 0 ]
	local plain="$output"
	SMC_DEBUG=1 SMC_SNDBUF=16k SMC_RCVBUF=1m run --separate-stderr fake "$PROBE" -b $specs
	[ "$status" -eq 0 ]
	same "$plain" "$output"
	[ -z "$stderr" ]
	# and the sizes did change something on a mapped socket
	run --separate-stderr fake "$PROBE" -b inet:stream:0
	local tcp_plain="$output"
	SMC_SNDBUF=16k SMC_RCVBUF=1m run --separate-stderr fake "$PROBE" -b inet:stream:0
	[ "$output" != "$tcp_plain" ]
}

@test "invalid buffer sizes are ignored with a debug message" {
	run --separate-stderr fake "$PROBE" -b inet:stream:0
	local plain="$output"
	SMC_DEBUG=1 SMC_SNDBUF=4096m SMC_RCVBUF=abc run --separate-stderr fake "$PROBE" -b inet:stream:0
	[ "$status" -eq 0 ]
	same "libsmc-preload: ignoring SMC_SNDBUF='4096m': invalid buffer size
libsmc-preload: ignoring SMC_RCVBUF='abc': invalid buffer size
$MAP_LINE" "$stderr"
	same "$plain" "$output"
	SMC_DEBUG=1 SMC_SNDBUF= SMC_RCVBUF=-1 run --separate-stderr fake "$PROBE" -b inet:stream:0
	same "libsmc-preload: ignoring SMC_SNDBUF='': invalid buffer size
libsmc-preload: ignoring SMC_RCVBUF='-1': invalid buffer size
$MAP_LINE" "$stderr"
	same "$plain" "$output"
	SMC_DEBUG=1 SMC_SNDBUF=99999999999999999999 run --separate-stderr fake "$PROBE" inet:stream:0
	same "libsmc-preload: ignoring SMC_SNDBUF='99999999999999999999': invalid buffer size
$MAP_LINE" "$stderr"
	# INT_MAX itself is fine (the kernel caps it)
	SMC_DEBUG=1 SMC_SNDBUF=2147483647 run --separate-stderr fake "$PROBE" inet:stream:0
	same "$MAP_LINE
sockopt 7 set to 2147483647" "$stderr"
}

@test "SMC_DEBUG: unset, 0, 0... and empty are off; anything else is on" {
	local v
	run --separate-stderr fake "$PROBE" inet:stream:0
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	for v in 0 00 0yes ''; do
		SMC_DEBUG="$v" run --separate-stderr fake "$PROBE" inet:stream:0
		[ "$status" -eq 0 ]
		same "" "$stderr"
	done
	for v in 1 yes ' ' 10; do
		SMC_DEBUG="$v" run --separate-stderr fake "$PROBE" inet:stream:0 inet:dgram:0
		[ "$status" -eq 0 ]
		same "$MAP_LINE" "$stderr"
	done
}

@test "fallback: without AF_SMC the original call is made, and remembered" {
	FAKESMC_ERRNO=97 SMC_DEBUG=1 run --separate-stderr fake "$PROBE" \
		inet:stream+nonblock+cloexec:0 inet6:stream:6 inet:dgram:0 inet:stream:0
	[ "$status" -eq 0 ]
	same "socket domain=43 type=0x80801 protocol=0
socket domain=2 type=0x80801 protocol=0
socket domain=10 type=0x1 protocol=6
socket domain=2 type=0x2 protocol=0
socket domain=2 type=0x1 protocol=0" "$(cat "$FAKESMC_LOG")"
	same "$MAP_LINE
$FALLBACK_LINE" "$stderr"
	same "inet:stream+nonblock+cloexec:0 domain=2 protocol=6 nonblock=1 cloexec=1
inet6:stream:6 domain=10 protocol=6 nonblock=0 cloexec=0
inet:dgram:0 domain=2 protocol=17 nonblock=0 cloexec=0
inet:stream:0 domain=2 protocol=6 nonblock=0 cloexec=0" "$output"
}

@test "fallback: EPROTONOSUPPORT counts as no AF_SMC too" {
	FAKESMC_ERRNO=93 run --separate-stderr fake "$PROBE" inet6:stream:0 inet:stream:0
	[ "$status" -eq 0 ]
	same "socket domain=43 type=0x1 protocol=1
socket domain=10 type=0x1 protocol=0
socket domain=2 type=0x1 protocol=0" "$(cat "$FAKESMC_LOG")"
	[ -z "$stderr" ]
}

@test "fallback: other errors of AF_SMC reach the application" {
	FAKESMC_ERRNO=13 run --separate-stderr fake "$PROBE" inet:stream:0 inet:stream:0
	[ "$status" -eq 1 ]
	same "inet:stream:0 errno=13
inet:stream:0 errno=13" "$output"
	same "socket domain=43 type=0x1 protocol=0
socket domain=43 type=0x1 protocol=0" "$(cat "$FAKESMC_LOG")"
}

@test "fallback: buffer sizes are not applied to sockets left on TCP" {
	FAKESMC_ERRNO=97 SMC_DEBUG=1 SMC_SNDBUF=16k run --separate-stderr fake "$PROBE" inet:stream:0 inet:stream:0
	[ "$status" -eq 0 ]
	same "$MAP_LINE
$FALLBACK_LINE" "$stderr"
}

@test "fallback: reported once when threads race into it" {
	FAKESMC_ERRNO=97 SMC_DEBUG=1 run --separate-stderr fake "$THREADS" 16 100
	[ "$status" -eq 0 ]
	same "created 1600 failed 0" "$output"
	[ "$(grep -c "^$FALLBACK_LINE\$" <<<"$stderr")" -eq 1 ]
}

@test "threads racing through initialisation: every socket mapped" {
	run --separate-stderr fake "$THREADS" 16 100
	[ "$status" -eq 0 ]
	same "created 1600 failed 0" "$output"
	[ "$(grep -c '^socket domain=43 type=0x1 protocol=[01]$' "$FAKESMC_LOG")" -eq 1600 ]
	[ "$(wc -l < "$FAKESMC_LOG")" -eq 1600 ]
}

@test "SMC_BACKEND=kernel: AF_SMC errors reach the application (upstream)" {
	SMC_BACKEND=kernel FAKESMC_ERRNO=97 run --separate-stderr fake "$PROBE" inet:stream:0 inet6:stream:0
	[ "$status" -eq 1 ]
	same "inet:stream:0 errno=97
inet6:stream:0 errno=97" "$output"
	same "socket domain=43 type=0x1 protocol=0
socket domain=43 type=0x1 protocol=1" "$(cat "$FAKESMC_LOG")"
	: > "$FAKESMC_LOG"
	SMC_BACKEND=kernel run --separate-stderr fake "$PROBE" inet:stream:0
	[ "$status" -eq 0 ]
	same "socket domain=43 type=0x1 protocol=0" "$(cat "$FAKESMC_LOG")"
}

@test "SMC_BACKEND=soft: sockets are TCP sockets, never AF_SMC" {
	SMC_BACKEND=soft SMC_DEBUG=1 SMC_SNDBUF=16k run --separate-stderr fake "$PROBE" inet:stream:0 inet6:stream:6
	[ "$status" -eq 0 ]
	same "socket domain=2 type=0x1 protocol=0
socket domain=10 type=0x1 protocol=6" "$(cat "$FAKESMC_LOG")"
	same "" "$stderr"
}

@test "SMC_BACKEND: an unknown value means auto" {
	SMC_BACKEND=bogus SMC_DEBUG=1 run --separate-stderr fake "$PROBE" inet:stream:0
	[ "$status" -eq 0 ]
	same "libsmc-preload: unknown SMC_BACKEND 'bogus', using auto
$MAP_LINE" "$stderr"
	same "socket domain=43 type=0x1 protocol=0" "$(cat "$FAKESMC_LOG")"
	unset SMC_BACKEND
	SMC_DEBUG=1 run --separate-stderr fake "$PROBE" inet:stream:0
	same "$MAP_LINE" "$stderr"
}

@test "smc_run's exported sizes are what the library applies" {
	# env puts the fake behind the library after smc_run has set LD_PRELOAD;
	# a fake sysctl keeps the real limits out of it
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	printf '#!/bin/sh\necho 212992\n' > "$BATS_TEST_TMPDIR/bin/sysctl"
	chmod +x "$BATS_TEST_TMPDIR/bin/sysctl"
	PATH="$BATS_TEST_TMPDIR/bin:$PATH" run --separate-stderr "$RUN" -d -t 16k -r 16k env LD_PRELOAD="$LIB:$FAKE" "$PROBE" inet:stream:0
	[ "$status" -eq 0 ]
	same "$MAP_LINE
sockopt 7 set to 16384
sockopt 8 set to 16384" "$stderr"
}

# ---- (c) a kernel with AF_SMC ----------------------------------------------

@test "kernel SMC: sockets under smc_run are AF_SMC" {
	kernel_has_smc || skip "this kernel has no AF_SMC (modprobe smc)"
	run --separate-stderr "$RUN" "$PROBE" inet:stream:0 inet6:stream:6 \
		inet:stream+nonblock+cloexec:0 inet:dgram:0
	[ "$status" -eq 0 ]
	same "inet:stream:0 domain=43 protocol=0 nonblock=0 cloexec=0
inet6:stream:6 domain=43 protocol=1 nonblock=0 cloexec=0
inet:stream+nonblock+cloexec:0 domain=43 protocol=0 nonblock=1 cloexec=1
inet:dgram:0 domain=2 protocol=17 nonblock=0 cloexec=0" "$output"
	run --separate-stderr "$RUN" "$PROBE" exchange
	[ "$status" -eq 0 ]
	same "exchange ok" "$output"
	run --separate-stderr "$RUN" "$PYTHON" -c "$PY_PROBE"
	[ "$status" -eq 0 ]
	same "43 0
43 1
smc" "$output"
}
