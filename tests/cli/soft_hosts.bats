#!/usr/bin/env bats
# Two hosts, each a network namespace with a daemon of its own, joined by
# veth: a connection between them asks the peer host's daemon on the control
# port (doc/soft-roce.md section 2).  When an end cannot carry SMC-R (today's
# preload offers no RDMA transport yet), the kernel's codes say why it stays
# TCP: 0x03030000 at the client (no SMC device it can use) and
# 0x05000000/0x03030000 at the server (the peer declined) when both ends are
# preloaded; 0x03010000 (the peer did not offer SMC) when the peer host has no
# daemon, or its program is not preloaded.  Two ends that can (clc_relay,
# tests/progs/clc_relay.c) negotiate: their CLC messages go through both
# daemons (section 2.2).  The control port answers only questions from the
# connection's peer address.  Each host sees an RDMA device rxe0 on its veth
# end (a sysfs tree of the test's, --sysfs); a host without one asks nobody
# and lists 0x03030000.

load helpers

setup() {
	[ "$(id -u)" -eq 0 ] || skip "needs root for ip netns"
	HA=smcha$$ HB=smchb$$
	ip netns add "$HA" 2>/dev/null || { HA=; skip "ip netns is not permitted here"; }
	ip netns add "$HB"
	ip link add "ha$$" netns "$HA" type veth peer name "hb$$" netns "$HB"
	ip -n "$HA" addr add 10.216.0.1/24 dev "ha$$"
	ip -n "$HA" addr add 10.216.0.3/24 dev "ha$$"
	ip -n "$HB" addr add 10.216.0.2/24 dev "hb$$"
	ip -n "$HA" addr add fd00:216::1/64 dev "ha$$" nodad
	ip -n "$HB" addr add fd00:216::2/64 dev "hb$$" nodad
	SRV=10.216.0.2 CLI=10.216.0.1
	for ns in "$HA" "$HB"; do
		ip -n "$ns" link set lo up
	done
	ip -n "$HA" link set "ha$$" up
	ip -n "$HB" link set "hb$$" up
	T=$(mktemp -d "${BATS_RUN_TMPDIR:-/tmp}/hosts.XXXXXX")
	PIDS=()
	make_sysfs "$T/sysA" "ha$$"
	make_sysfs "$T/sysB" "hb$$"
	mkdir "$T/nosys"
}

# rxe0 (or ${3:-rxe0}) on interface $2 (as rdma link add rxe0 type rxe netdev
# $2 makes it), below $1; with $4 (an IPv4 address) its RoCE v2 GID of it.
make_sysfs() {
	local name=${3:-rxe0}
	local rxe="$1/devices/virtual/infiniband/$name"
	mkdir -p "$rxe/ports/1/gid_attrs/ndevs" "$rxe/ports/1/gid_attrs/types" "$rxe/ports/1/gids" \
		"$1/class/infiniband"
	echo "1: CA" >"$rxe/node_type"
	echo "$2" >"$rxe/parent"
	echo "4: ACTIVE" >"$rxe/ports/1/state"
	echo "$2" >"$rxe/ports/1/gid_attrs/ndevs/0"
	if [ -n "${4:-}" ]; then
		echo "RoCE v2" >"$rxe/ports/1/gid_attrs/types/1"
		echo "$2" >"$rxe/ports/1/gid_attrs/ndevs/1"
		printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x\n' ${4//./ } >"$rxe/ports/1/gids/1"
	fi
	ln -s "../../devices/virtual/infiniband/$name" "$1/class/infiniband/$name"
}

teardown() {
	local pid
	[ -z "${T:-}" ] || touch "$T/stop"
	for pid in "${PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	[ -z "${HA:-}" ] || ip netns del "$HA" 2>/dev/null
	[ -z "${HB:-}" ] || ip netns del "$HB" 2>/dev/null
	[ -z "${T:-}" ] || rm -rf "$T"
}

# Start the daemon of host $1 (A or B), with its rxe0 unless another
# --sysfs comes among the extra arguments, which go to it.
host_daemon() {
	local h=$1 ns
	shift
	ns=$([ "$h" = A ] && echo "$HA" || echo "$HB")
	ip netns exec "$ns" "$SMC_BIN/smc_softd" -f -s "$T/$h.sock" --sysfs "$T/sys$h" "$@" \
		2>"$T/$h.log" 3>&- &
	PIDS+=($!)
	for _ in $(seq 200); do
		[ -S "$T/$h.sock" ] && return 0
		sleep 0.05
	done
	cat "$T/$h.log" >&2
	return 1
}

# Run a command on host $1 with its daemon as the soft backend (exec: a
# background one's pid is the command's).
on() {
	local h=$1 ns
	shift
	ns=$([ "$h" = A ] && echo "$HA" || echo "$HB")
	exec ip netns exec "$ns" env SMC_BACKEND=soft SMC_SOFT_SOCKET="$T/$h.sock" "$@"
}

# A server on B ($SRV:7500) that echoes what it gets and holds the
# connection until $T/stop exists; $1: "run" for smc_run, else plain.
# With $2 "fork" it forks at accept(), as rsync's daemon or PostgreSQL:
# the child echoes, the parent closes its copy at once.
server_b() {
	local pre=()
	[ "$1" = run ] && pre=("$SMC_BIN/smc_run")
	on B "${pre[@]}" python3 -c '
import os, socket, sys, time
a = sys.argv[2]; s = socket.socket(socket.AF_INET6 if ":" in a else socket.AF_INET)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((a, 7500)); s.listen(); print("listening", flush=True)
c, _ = s.accept(); n = 0
if sys.argv[3] == "fork":
    pid = os.fork()
    if pid:
        c.close(); os.waitpid(pid, 0); sys.exit(0)
while n < 100000:
    d = c.recv(65536)
    if not d: break
    c.sendall(d); n += len(d)
while os.path.isdir(os.path.dirname(sys.argv[1])) and not os.path.exists(sys.argv[1]):
    time.sleep(0.05)' "$T/stop" "$SRV" "${2:-}" >"$T/server.out" 2>&1 &
	PIDS+=($!)
	for _ in $(seq 200); do
		grep -q listening "$T/server.out" 2>/dev/null && return 0
		sleep 0.05
	done
	cat "$T/server.out" >&2
	return 1
}

# A client on A that sends 100000 bytes, checks the echo and holds the
# connection until $T/stop exists; $1 as for server_b.  With $2 "fork" it
# forks a child right after it connects, before its end is paired (the
# fork pairs it: ASKED, negotiating in the parent), which exits at once.
client_a() {
	local pre=()
	[ "$1" = run ] && pre=("$SMC_BIN/smc_run")
	on A "${pre[@]}" python3 -c '
import os, socket, sys, time
c = socket.create_connection((sys.argv[2], 7500))
if sys.argv[3] == "fork":
    pid = os.fork()
    if pid == 0:
        sys.exit(0)
    os.waitpid(pid, 0)
data = bytes(range(256)) * 390 + b"0123456789" * 16
c.sendall(data); got = b""
while len(got) < len(data):
    d = c.recv(65536)
    if not d: break
    got += d
print("echo ok" if got == data else "echo BAD %d" % len(got), flush=True)
while os.path.isdir(os.path.dirname(sys.argv[1])) and not os.path.exists(sys.argv[1]):
    time.sleep(0.05)' "$T/stop" "$SRV" "${2:-}" >"$T/client.out" 2>&1 &
	PIDS+=($!)
	for _ in $(seq 200); do
		grep -q echo "$T/client.out" 2>/dev/null && return 0
		sleep 0.05
	done
	cat "$T/client.out" >&2
	return 1
}

# The echo between the hosts, server on B and client on A, each under
# smc_run ("run") or not ("plain"); its bytes checked.
echo_between() {
	server_b "$1"
	client_a "$2"
	[ "$(cat "$T/client.out")" = "echo ok" ]
}

# The Mode column of host $1's row for the connection to or from port 7500,
# once it is no longer INIT (the daemons still asking).
mode_of() {
	local line
	for _ in $(seq 200); do
		line=$(on "$1" "$SMC_BIN/smcss" -a | grep -F "$SRV:7500 " |
		       grep -E "^ACTIVE .*(:7500 +\[?$CLI\]?:|\[?$CLI\]?:[0-9]+ )" | grep -v INIT)
		[ -n "$line" ] && { echo "${line##* }"; return 0; }
		sleep 0.05
	done
	on "$1" "$SMC_BIN/smcss" -a >&2
	return 1
}

@test "both hosts' ends preloaded: the client declines 0x03030000, the server lists the peer's decline" {
	host_daemon A
	host_daemon B
	echo_between run run
	[ "$(mode_of A)" = "0x03030000" ]
	[ "$(mode_of B)" = "0x05000000/0x03030000" ]
	run on A "$SMC_BIN/smcss" -a
	[[ "$output" == *" 10.216.0.1:"*" 10.216.0.2:7500 "*" 0000 TCP 0x03030000"* ]]
	grep -q "control port 7609/udp" "$T/A.log"
}

@test "a child forked while its end negotiates, gone at once, leaves the parent's end listed" {
	host_daemon A
	host_daemon B
	server_b run
	client_a run fork
	[ "$(cat "$T/client.out")" = "echo ok" ]
	# the child's copy was the parent's: its exit deleted nothing of the
	# parent's, whose row keeps its own decline (0x03010000 was a row
	# found without its registration)
	[ "$(mode_of A)" = "0x03030000" ]
	[ "$(mode_of B)" = "0x05000000/0x03030000" ]
	sleep 1
	[ "$(mode_of A)" = "0x03030000" ]
}

@test "a server forking at accept, its parent closing its copy: the child's end is paired, the rows as without the fork" {
	host_daemon A
	host_daemon B
	server_b run fork
	client_a run
	[ "$(cat "$T/client.out")" = "echo ok" ]
	# before, the parent's close deleted the end its fork had paired: the
	# client listed 0x03010000, the server nothing
	[ "$(mode_of A)" = "0x03030000" ]
	[ "$(mode_of B)" = "0x05000000/0x03030000" ]
}

@test "IPv6: both ends preloaded, the same codes" {
	SRV=fd00:216::2 CLI=fd00:216::1
	host_daemon A
	host_daemon B
	echo_between run run
	[ "$(mode_of A)" = "0x03030000" ]
	[ "$(mode_of B)" = "0x05000000/0x03030000" ]
}

@test "smc_chk -C to a host whose daemon answers: the fallback and its reason, not the handshake" {
	host_daemon A
	host_daemon B
	on B "$SMC_BIN/smc_chk" -S -p 7500 >"$T/chk-srv" 2>&1 &
	PIDS+=($!)
	for _ in $(seq 100); do
		grep -q '^Server started on port' "$T/chk-srv" && break
		sleep 0.1
	done
	run on A "$SMC_BIN/smc_chk" -C 10.216.0.2 -p 7500
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "Test with target IP 10.216.0.2 and port 7500
     Failed  (TCP fallback), reasons:
          Client: 0x03030000 no SMC device found (R or D) (NOSMCDEV)" ]
}

@test "no RDMA device on the client's host: it lists 0x03030000 at once, the server the peer's decline" {
	host_daemon A --sysfs "$T/nosys"
	host_daemon B
	echo_between run run
	[ "$(mode_of A)" = "0x03030000" ]
	[ "$(mode_of B)" = "0x05000000/0x03030000" ]
}

# A connection's interface and the RDMA device must share a PNET ID, or
# neither have one (the kernel's smc_pnet_find_roce_resource()): otherwise
# no SMC-R device for it, and the client declines before asking anyone.
@test "PNET mismatch: the client's interface in a PNET its RDMA device is not in lists 0x03030000, the server the peer's decline" {
	host_daemon A
	host_daemon B
	(on A "$SMC_BIN/smc_pnet" -a NET1 -I "ha$$")
	(on A "$SMC_BIN/smc_pnet" -a NET2 -D rxe0)
	relays_start
	relay_says A '^declined' && relay_says B '^declined'
	# the client's end declined at its PAIR, before any question
	run cat "$T/relay.A"
	[ "${lines[0]}" = "pair DECLINED" ]
	[ "${lines[1]}" = "declined 0x03030000 0x00000000" ]
	run cat "$T/relay.B"
	[ "${lines[2]}" = "declined 0x05000000 0x03030000" ]
	# counted by reason, as the kernel counts its fallbacks
	run on A "$SMC_BIN/smcr" -d stats
	[[ "$output" =~ "TCP fallback"\ +"1 (client 1, server 0)" ]]
	[[ "$output" =~ "NOSMCDEV"\ +1 ]]
	run on B "$SMC_BIN/smcr" -d stats
	[[ "$output" =~ "TCP fallback"\ +"1 (client 0, server 1)" ]]
	[[ "$output" =~ "PEERDECL"\ +1 ]]
}

@test "PNET mismatch: a device in a PNET, the connection's interface in none: 0x03030000; both in the same one: they negotiate" {
	host_daemon A
	host_daemon B
	(on A "$SMC_BIN/smc_pnet" -a NET2 -D rxe0)
	echo_between run run
	[ "$(mode_of A)" = "0x03030000" ]
	[ "$(mode_of B)" = "0x05000000/0x03030000" ]
	(on A "$SMC_BIN/smc_pnet" -a NET2 -I "ha$$")
	relays_start
	relay_says A '^done'
	run cat "$T/relay.A"
	[ "${lines[1]}" = "negotiate rxe0 1 role 0" ]
}

@test "the peer host has no daemon: the client lists 0x03010000" {
	host_daemon A
	echo_between plain run
	[ "$(mode_of A)" = "0x03010000" ]
}

@test "the peer host's daemon runs, its program is not preloaded: the client lists 0x03010000" {
	host_daemon A
	host_daemon B
	echo_between plain run
	[ "$(mode_of A)" = "0x03010000" ]
}

@test "the server alone preloaded: it lists 0x03010000, and nothing else changed" {
	host_daemon A
	host_daemon B
	echo_between run plain
	[ "$(mode_of B)" = "0x03010000" ]
	run on A "$SMC_BIN/smcss" -a
	[ "${#lines[@]}" -eq 1 ]
}

# Ask host B's daemon as host A would (doc/soft-roce.md section 2 has the
# layout), from source address $1 for the connection 10.216.0.1:$2 to
# 10.216.0.2:7500; prints the answer's have, role and verdict, or "none".
ask_b() {
	on A python3 -c '
import socket, struct, sys
src, sport = sys.argv[1], int(sys.argv[2])
fmt = ">4sBBBBIIBxHH2x16s16sQQB7x"
msg = struct.pack(fmt, b"SMCQ", 3, 1, 0, 0, 77, 0x03030000, 4, sport, 7500,
                  socket.inet_aton("10.216.0.1") + bytes(12), socket.inet_aton("10.216.0.2") + bytes(12),
                  0x5eed, 0, 0)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind((src, 0)); u.settimeout(5.0)
u.sendto(msg, ("10.216.0.2", 7609))
try:
    a = u.recv(100)
except socket.timeout:
    print("none"); sys.exit(0)
f = struct.unpack(fmt, a)
# an answer echoes the nonce of its question
print("have=%d role=%d seq=%d verdict=0x%08x%s" % (f[4] & 1, f[3], f[5], f[6],
      "" if f[13] == 0x5eed else " echo=0x%x" % f[13]))' "$@"
}

@test "the control port answers the connection's peer address only" {
	host_daemon B
	server_b run
	client_a plain
	local port
	port=$(on A ss -Htn "dport = :7500" | awk '{ split($4, a, ":"); print a[2] }')
	[ -n "$port" ]
	# another address of the same host, claiming the client's end declined:
	# no answer, and B's end, its question unanswered, lists 0x03010000
	run ask_b 10.216.0.3 "$port"
	[ "$output" = "none" ]
	[ "$(mode_of B)" = "0x03010000" ]
	# the real peer address: the server's end is there, as a server that can negotiate
	run ask_b 10.216.0.1 "$port"
	[ "$output" = "have=1 role=1 seq=77 verdict=0x00000000" ]
	# a connection B does not have: "not here"
	run ask_b 10.216.0.1 1
	[ "$output" = "have=0 role=1 seq=77 verdict=0x00000000" ]
}

@test "smc_softd --peer-port: 0 turns the control port off; a bad or taken port fails the start" {
	host_daemon A --peer-port 0
	! grep -q "control port" "$T/A.log"
	run ip netns exec "$HB" "$SMC_BIN/smc_softd" -f -s "$T/x.sock" --peer-port 70000
	[ "$status" -eq 1 ]
	[ "$output" = "smc_softd: --peer-port 70000: not a port number (0 to 65535, 0: off)" ]
	host_daemon B --peer-port 7610
	run ip netns exec "$HB" "$SMC_BIN/smc_softd" -f -s "$T/y.sock" --peer-port 7610
	[ "$status" -eq 1 ]
	[ "$output" = "smc_softd: --peer-port 7610: Address already in use" ]
	[ ! -e "$T/y.sock" ]
}

# clc_relay (tests/progs/clc_relay.c) on host $1 with its arguments, in the
# background, its output in $T/relay.$1.
relay() {
	local h=$1
	shift
	on "$h" "$SMC_BIN/tests/clc_relay" "$@" >"$T/relay.$h" 2>&1 &
	PIDS+=($!)
}

# Waits (bounded: $3 looks, 200 by default, 50 ms apart) until host $1's
# relay printed a line matching $2.
relay_says() {
	for _ in $(seq "${3:-200}"); do
		grep -q "$2" "$T/relay.$1" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "host $1:" >&2
	cat "$T/relay.$1" >&2
	return 1
}

# B's relay serves on 7501 and A's connects to it, each with its messages
# of a negotiation (a PROPOSAL, ACCEPT, CONFIRM).
relays_start() {
	relay B server 7501 ACCEPT
	relay_says B listening
	relay A client "$SRV" 7501 PROPOSAL CONFIRM
}

@test "two ends that can carry SMC-R negotiate: their CLC messages go through both daemons, under both nonces" {
	host_daemon A
	host_daemon B
	relays_start
	relay_says A '^done' && relay_says B '^done'
	run cat "$T/relay.A"
	[ "${lines[0]}" = "pair ASKING" ]
	[ "${lines[1]}" = "negotiate rxe0 1 role 0" ]
	[[ "$output" == *"got 1: ACCEPT"* ]]
	[[ "$output" == *"seen 2"* ]]
	run cat "$T/relay.B"
	[ "${lines[1]}" = "pair ASKING" ]
	[ "${lines[2]}" = "negotiate rxe0 1 role 1" ]
	[[ "$output" == *"got 1: PROPOSAL"*"got 2: CONFIRM"* ]]
	[[ "$output" == *"seen 1"* ]]
	# each end is listed as still in its handshake (INIT), not as a fallback
	for h in A B; do
		run on "$h" "$SMC_BIN/smcss" -a
		[ "${#lines[@]}" -eq 2 ]
		[[ "${lines[1]}" == INIT* ]]
	done
}

# Once both ends run over RDMA (PAIRED), a link group's rebuild message
# (doc/soft-roce.md section 5, "The only link") goes through both daemons
# to the library of the connection's other end, under both nonces, and is
# taken there once, named by that end's link group.
@test "ends over RDMA: each library's rebuild message reaches the other's through both daemons" {
	host_daemon A
	host_daemon B
	relay B server 7502 ACCEPT +from-B
	relay_says B listening
	relay A client "$SRV" 7502 PROPOSAL CONFIRM +from-A
	relay_says A '^rebuild got' && relay_says B '^rebuild got'
	run cat "$T/relay.A"
	[[ "$output" == *"rebuild given"* ]]
	[[ "$output" == *"rebuild got from-B for group 100"* ]]
	run cat "$T/relay.B"
	[[ "$output" == *"rebuild given"* ]]
	[[ "$output" == *"rebuild got from-A for group 101"* ]]
	# listed as SMC-R, not as fallbacks
	for h in A B; do
		run on "$h" "$SMC_BIN/smcss" -a
		[ "${#lines[@]}" -eq 2 ]
		[[ "${lines[1]}" == ACTIVE* ]]
	done
}

# A process that ends without closing its end over RDMA (killed: no CLOSED
# from its library) is told to the peer's library through both daemons
# (doc/soft-roce.md section 4), which then probes that link group's links.
@test "ends over RDMA: a process gone without a close is told to the peer's library" {
	host_daemon A
	host_daemon B
	relay B server 7504 ACCEPT ^gone
	relay_says B listening
	relay A client "$SRV" 7504 PROPOSAL CONFIRM "^exit:$T/exit.A"
	relay_says A '^paired$' && relay_says B '^paired$'
	run cat "$T/relay.B"
	[[ "$output" != *"peer gone"* ]]
	touch "$T/exit.A"
	# its exit, its daemon's hang-up, the datagram, B's next question: a busy host's time
	relay_says B '^peer gone' 700
	run cat "$T/relay.B"
	[[ "$output" == *"peer gone for group 101"* ]]
}

# A library whose buffers were downgraded (a user's RLIMIT_MEMLOCK) says
# their sizes with PAIRED: smcr -d stats counts them and the downgrades, as
# the kernel's; one that says none counts the full ones.
@test "ends over RDMA with smaller buffers: counted by size and as downgrades" {
	host_daemon A
	host_daemon B
	CLC_RELAY_BUFS=32768,65536 relay B server 7503 ACCEPT +from-B
	relay_says B listening
	relay A client "$SRV" 7503 PROPOSAL CONFIRM +from-A
	relay_says A '^rebuild got' && relay_says B '^rebuild got'
	run on B "$SMC_BIN/smcr" -d stats
	[ "$(grep -c "Buffer downgrades *1$" <<<"$output")" -eq 2 ]
	# RX, then TX: an RMB of 32 KiB, a send buffer of 64 KiB
	run grep -E "^ +Bufs" <<<"$output"
	[[ "${lines[0]}" =~ ^\ +Bufs\ +0\ +0\ +1\ +0\ +0\ +0\ +0\ +0$ ]]
	[[ "${lines[1]}" =~ ^\ +Bufs\ +0\ +0\ +0\ +1\ +0\ +0\ +0\ +0$ ]]
	# its link group holds them
	run on B "$SMC_BIN/smcr" -d linkgroup show
	echo "$output"
	[[ "$output" == *"Sndbuf   : 65536 B"* ]]
	[[ "$output" == *"RMB      : 32768 B"* ]]
	run on A "$SMC_BIN/smcr" -d stats
	[ "$(grep -c "Buffer downgrades *0$" <<<"$output")" -eq 2 ]
	run grep -E "^ +Bufs" <<<"$output"
	[[ "${lines[0]}" =~ ^\ +Bufs\ +0\ +0\ +0\ +0\ +1\ +0\ +0\ +0$ ]]
	[[ "${lines[1]}" =~ ^\ +Bufs\ +0\ +0\ +0\ +0\ +0\ +1\ +0\ +0$ ]]
}

# A rebuild message for a link group none of the process's ends between
# hosts is in is refused (ENOENT) and goes nowhere; the peer, asking, finds none.
@test "a rebuild message for a group without an end over RDMA is refused with ENOENT" {
	host_daemon A
	host_daemon B
	relay B server 7503 ACCEPT +from-B
	relay_says B listening
	relay A client "$SRV" 7503 PROPOSAL CONFIRM +!from-A
	relay_says A '^rebuild got' && relay_says B '^rebuild: none came'
	run cat "$T/relay.A"
	[[ "$output" == *"rebuild error -2"* ]]
	[[ "$output" == *"rebuild got from-B for group 100"* ]]
	run cat "$T/relay.B"
	[[ "$output" == *"rebuild given"* ]]
	[[ "$output" != *"rebuild got"* ]]
}

# The fields (-e ...) of the records of pcap file $1 that filter $2 selects, decoded by tshark.
clc_records() {
	local f=$1 y=$2
	shift 2
	tshark -X lua_script:"$SMC_TOP/contrib/wireshark/smc_dump.lua" -r "$f" -Y "$y" -T fields \
		-E separator=' ' "$@" 2>/dev/null
}

# smcdump-ex -m smcr on host A during a negotiation with real SMC-R CLC
# messages (clc_relay's =proposal, =accept, =confirm): A's daemon records
# A's messages as they go and B's as they come (RX), decoded (SMC-R's part
# of the CLC body, doc/smc-dump-header.md), and tshark with
# contrib/wireshark/smc_dump.lua shows them; -m smcd records none of them.
@test "capture: smcdump-ex -m smcr records the SMC-R CLC messages of a negotiation between hosts" {
	command -v tcpdump >/dev/null || skip "tcpdump is not installed"
	command -v tshark >/dev/null || skip "tshark is not installed"
	local m port=7520
	host_daemon A
	host_daemon B
	for m in smcr smcd; do
		(on A "$SMC_BIN/smcdump-ex" -m "$m" --param "-Z root -w $T/$m.pcap" 2>"$T/dump.$m" 3>&-) &
		local dpid=$!
		for _ in $(seq 200); do
			grep -q "listening on" "$T/dump.$m" && break
			sleep 0.05
		done
		grep -q "listening on" "$T/dump.$m" || { cat "$T/dump.$m"; return 1; }
		relay B server "$port" =accept
		relay_says B listening
		relay A client "$SRV" "$port" =proposal =confirm
		relay_says A '^done' && relay_says B '^done'
		grep -q "got 1: CLC type 2" "$T/relay.A"
		grep -q "got 2: CLC type 3" "$T/relay.B"
		sleep 0.3
		kill -INT "$dpid"
		wait "$dpid" || true
		port=$((port + 1))
	done
	run clc_records "$T/smcr.pcap" "smc_dump.type < 16" -e smc_dump.type -e smc_dump.flags \
		-e smc_dump.local_ip -e smc_dump.clc.role -e smc_dump.clc.smc_type \
		-e smc_dump.clc.status -e smc_dump.clc.r.gid -e smc_dump.clc.r.qpn \
		-e smc_dump.clc.r.rmb_rkey -e smc_dump.clc.rmbe_size -e smc_dump.clc.r.psn
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf '%s\n' \
		"1 0x00 $CLI 0 0 0 ::ffff:10.9.0.1 0x00000000 0x00000000 0 0x00000000" \
		"2 0x01 $CLI 1 0 1 ::ffff:10.9.0.2 0x00000124 0x1234abcd 65536 0x00000777" \
		"3 0x00 $CLI 0 0 2 ::ffff:10.9.0.1 0x00000123 0x1234abcd 65536 0x00000777")" ]
	run clc_records "$T/smcd.pcap" "smc_dump.type < 16 && smc_dump.clc.smc_type == 0" -e smc_dump.type
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "a preloaded server's library declines a PROPOSAL it cannot read: 0x03000000 at both ends" {
	host_daemon A
	host_daemon B
	server_b run
	# its second message never goes: the relay waits for what comes back
	relay A client "$SRV" 7500 PROPOSAL "@$T/never" CONFIRM
	relay_says A '^got 1'
	grep -qx "got 1: CLC type 4" "$T/relay.A"
	[ "$(mode_of B)" = "0x03000000" ]
}

@test "the peer host's daemon goes during the negotiation: the client's message is not kept, it lists 0x03010000" {
	host_daemon A
	host_daemon B
	relay B server 7501 ACCEPT
	relay_says B listening
	# the client's first message waits until B's daemon is gone
	relay A client "$SRV" 7501 "@$T/go" PROPOSAL CONFIRM
	relay_says A '^negotiate'
	relay_says B '^negotiate'
	kill -KILL "${PIDS[1]}"
	wait "${PIDS[1]}" 2>/dev/null || true
	touch "$T/go"
	relay_says A '^declined'
	grep -qx "declined 0x03010000 0x00000000" "$T/relay.A"
	! grep -q '^seen' "$T/relay.A"
}

# An end that declines for its own reason (here no CONFIRM LINK) after the
# peer's end was decided lists its own code, as the kernel's sender does,
# not 0x03010000, though its DECLINE is never kept.
@test "an end's own DECLINE the peer's daemon does not keep: it lists its own code, 0x02010000" {
	host_daemon A
	host_daemon B
	relay B server 7501 ACCEPT
	relay_says B listening
	relay A client "$SRV" 7501 PROPOSAL "@$T/go" =decline
	relay_says A '^got 1: ACCEPT'
	kill -KILL "${PIDS[1]}"
	wait "${PIDS[1]}" 2>/dev/null || true
	touch "$T/go"
	relay_says A '^declined'
	grep -qx "declined 0x02010000 0x00000000" "$T/relay.A"
}

# Host A's second device rxe1 on a second interface (hd$$, 10.217.0.1).
second_port_on_A() {
	ip -n "$HA" link add "hd$$" type veth peer name "he$$"
	ip -n "$HA" addr add 10.217.0.1/24 dev "hd$$"
	ip -n "$HA" link set "hd$$" up
	make_sysfs "$T/sysA" "hd$$" rxe1 10.217.0.1
}

# Both daemons, with both of A's interfaces and devices in PNET NET1.
daemons_with_NET1_on_A() {
	local a
	host_daemon A
	host_daemon B
	for a in "-a NET1 -I ha$$" "-a NET1 -I hd$$" "-a NET1 -D rxe0" "-a NET1 -D rxe1"; do
		(on A "$SMC_BIN/smc_pnet" $a) || return 1
	done
}

@test "a second device port in the connection's PNET: each daemon names it for the link group's second link" {
	# host A: rxe1 on a second interface, both interfaces and both devices in NET1
	second_port_on_A
	daemons_with_NET1_on_A
	relays_start
	relay_says A '^done' && relay_says B '^done'
	run cat "$T/relay.A"
	[ "${lines[1]}" = "negotiate rxe0 1 role 0 second rxe1 1 ::ffff:10.217.0.1" ]
	# B has no PNET IDs: its interface's device alone, no second port
	run cat "$T/relay.B"
	[ "${lines[2]}" = "negotiate rxe0 1 role 1" ]
}

@test "a second device port in the PNET that is not active is not named" {
	second_port_on_A
	echo "1: DOWN" >"$T/sysA/devices/virtual/infiniband/rxe1/ports/1/state"
	daemons_with_NET1_on_A
	relays_start
	relay_says A '^done'
	run cat "$T/relay.A"
	[ "${lines[1]}" = "negotiate rxe0 1 role 0" ]
}
