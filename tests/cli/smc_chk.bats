#!/usr/bin/env bats
# smc_chk: command line, PNET ID lookup, static analysis and live tests
# against a private soft backend; the replay check against responders in a
# network namespace of their own.

load helpers

setup() {
	export TERM=dumb	# no bold in the "Checking active link" lines
}

teardown() {
	local pid
	[ -z "${SRV_PID:-}" ] || { kill "$SRV_PID" 2>/dev/null; wait "$SRV_PID" 2>/dev/null; }
	for pid in ${RSP_PIDS[@]+"${RSP_PIDS[@]}"}; do
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	[ -z "${RC:-}" ] || ip netns del "$RC" 2>/dev/null
	[ -z "${RR:-}" ] || ip netns del "$RR" 2>/dev/null
	softd_stop
}

@test "smc_chk -v, -h, no mode" {
	run "$SMC_BIN/smc_chk" -v
	[ "$status" -eq 0 ]
	[ "$output" = "smc_chk utility, smc-tools-$(sed -n 's/.*SMC_TOOLS_RELEASE "\(.*\)".*/\1/p' "$SMC_TOP/lib/version.h")" ]
	run "$SMC_BIN/smc_chk" -h
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "Usage: smc_chk [OPTIONS] -C <IP>" ]
	[ "${lines[1]}" = "       smc_chk [OPTIONS] -S" ]
	[ "${lines[2]}" = "       smc_chk [OPTIONS] -r <IP>" ]
	[ "${lines[3]}" = "       smc_chk -i <iface>" ]
	[ "${lines[4]}" = "Check SMC setup" ]
	usage="$output"
	run "$SMC_BIN/smc_chk"
	[ "$status" -eq 0 ]
	[ "$output" = "$usage" ]
}

@test "smc_chk: bad input" {
	run "$SMC_BIN/smc_chk" -x
	[ "$status" -eq 2 ]
	[ "$output" = "smc_chk: invalid option -- 'x'" ]
	run "$SMC_BIN/smc_chk" -s -i lo
	[ "$status" -eq 1 ]
	[ "$output" = "Error: Cannot combine options '-s/--static-analysis' and '-i/--pnetid'" ]
	run "$SMC_BIN/smc_chk" -C 127.0.0.1 -S
	[ "$status" -eq 1 ]
	[ "$output" = "Error: Cannot combine options '-C/--connect' and '-S/--server'" ]
	run "$SMC_BIN/smc_chk" -i no_such_if0
	[ "$status" -eq 1 ]
	[ "$output" = "Error: Interface no_such_if0 does not exist" ]
	run "$SMC_BIN/smc_chk" -i lo eth9
	[ "$status" -eq 1 ]
	[ "$output" = "Error: Option -P/--print-PNETID takes no extra targets" ]
	run "$SMC_BIN/smc_chk" -s no_such_if0
	[ "$status" -eq 1 ]
	[ "$output" = "Error: Interface no_such_if0 does not exist" ]
	run "$SMC_BIN/smc_chk" -C no-such-host.invalid
	[ "$status" -eq 1 ]
	[ "$output" = "Error: Unknown destination 'no-such-host.invalid'" ]
	run "$SMC_BIN/smc_chk" -S -p 99999
	[ "$status" -eq 1 ]
	[ "$output" = "Error: Invalid port '99999'" ]
	run "$SMC_BIN/smc_chk" -C 127.0.0.1 -r 127.0.0.1
	[ "$status" -eq 1 ]
	[ "$output" = "Error: Cannot combine options '-C/--connect' and '-r/--replay-check'" ]
	run "$SMC_BIN/smc_chk" --replay-check no-such-host.invalid
	[ "$status" -eq 1 ]
	[ "$output" = "Error: Unknown destination 'no-such-host.invalid'" ]
	run "$SMC_BIN/smc_chk" -6 -r 127.0.0.1
	[ "$status" -eq 1 ]
	[ "$output" = "Error: '127.0.0.1' is an IPv4 address, but -6/--ipv6 asks for IPv6" ]
	run "$SMC_BIN/smc_chk" -r
	[ "$status" -eq 2 ]
	[ "$output" = "smc_chk: option requires an argument -- 'r'" ]
}

@test "smc_chk: a down interface is not active" {
	down=$(ip -o link show | awk -F': ' '$3 !~ /[<,]UP[,>]/ { sub(/@.*/, "", $2); print $2; exit }')
	[ -n "$down" ] || skip "no down interface"
	run "$SMC_BIN/smc_chk" -s "$down"
	[ "$status" -eq 2 ]
	[ "$output" = "Error: $down is not an active interface" ]
}

@test "smc_chk -i: PNET ID from the software PNET table" {
	[ "$(id -u)" -eq 0 ] || skip "needs CAP_NET_ADMIN for smc_pnet -a"
	softd_start
	run "$SMC_BIN/smc_chk" -i lo
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
	"$SMC_BIN/smc_pnet" -a CHKNET -I lo
	run "$SMC_BIN/smc_chk" -i lo
	[ "$status" -eq 0 ]
	[ "$output" = "CHKNET*" ]
	run "$SMC_BIN/smc_chk" --pnetid lo
	[ "$output" = "CHKNET*" ]
}

@test "smc_chk -s: static analysis on the soft backend" {
	softd_start --roce sr_chk=lo
	run "$SMC_BIN/smc_chk" -s lo
	[ "$status" -eq 0 ]
	[ "$output" = "Checking active link:    lo
  Static Analysis
     Backend:            soft
     PNET ID:            n/a
     SMC-Dv2:            FID 0000 (ffff:00:00.0)
     SMC-R:              sr_chk/1
     Advertising SEID:   n/a
     Advertising UEIDs:  n/a
     Verdict:            SMC-D and SMC-R possible on lo" ]
}

@test "smc_chk -s: PNET ID, UEIDs and a device with another PNET ID" {
	[ "$(id -u)" -eq 0 ] || skip "needs CAP_NET_ADMIN"
	softd_start --roce sr_chk=lo
	"$SMC_BIN/smc_pnet" -a CHKNET -I lo
	"$SMC_BIN/smc_pnet" -a OTHER -D soft-ism
	"$SMC_BIN/smcd" ueid add CHK-UEID-1
	"$SMC_BIN/smcd" ueid add CHK-UEID-2
	run "$SMC_BIN/smc_chk" -s lo
	[ "$status" -eq 0 ]
	[ "${lines[3]}" = "     PNET ID:            CHKNET*" ]
	[ "${lines[4]}" = "     SMC-D:              no usable ISM device" ]
	[ "${lines[5]}" = "     SMC-R:              sr_chk/1" ]
	[ "${lines[7]}" = "     Advertising UEIDs:  CHK-UEID-1" ]
	[ "${lines[8]}" = "                         CHK-UEID-2" ]
	[ "${lines[9]}" = "     Verdict:            SMC-R possible on lo" ]
}

# fake_kernel RELEASE: uname -r says RELEASE (every other uname call is the real one)
fake_kernel() {
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	printf '#!/bin/sh\n[ "$1" = -r ] && { echo %s; exit 0; }\nexec %s "$@"\n' "$1" "$(command -v uname)" \
		> "$BATS_TEST_TMPDIR/bin/uname"
	chmod +x "$BATS_TEST_TMPDIR/bin/uname"
}

@test "smc_chk -s: names the 6.1 kernel's SMC-Rv2 hang over rxe, and only there" {
	fake_kernel 6.1.0-50-amd64
	run env PATH="$BATS_TEST_TMPDIR/bin:$PATH" SMC_BACKEND=kernel \
		SMC_SYSFS_ROOT="$SMC_TOP/tests/fixtures/sysfs/x86" "$SMC_BIN/smc_chk" -s lo
	[ "$status" -eq 0 ]
	[ "${lines[2]}" = "     Backend:            kernel" ]
	[ "${lines[$((${#lines[@]} - 2))]}" = "     Known problem:      SMC-Rv2 over rxe0 hangs in Linux 6.1 (smc_wr_drain_cq)" ]
	[ "${lines[$((${#lines[@]} - 1))]}" = "                         use Linux 6.12 or later, or SMC_BACKEND=soft (smc_softd)" ]
	# mlx5 (PCI functions) and siw (virtual, but an iWARP RNIC): no rxe
	mkdir -p "$BATS_TEST_TMPDIR/sys/class/infiniband"
	cp -a "$SMC_TOP/tests/fixtures/sysfs/x86/devices" "$BATS_TEST_TMPDIR/sys/"
	cp -a "$SMC_TOP/tests/fixtures/sysfs/x86/class/infiniband/mlx5_0" "$BATS_TEST_TMPDIR/sys/class/infiniband/"
	mkdir -p "$BATS_TEST_TMPDIR/sys/devices/virtual/infiniband/siw0"
	echo "4: RNIC" > "$BATS_TEST_TMPDIR/sys/devices/virtual/infiniband/siw0/node_type"
	ln -s ../../devices/virtual/infiniband/siw0 "$BATS_TEST_TMPDIR/sys/class/infiniband/siw0"
	run env PATH="$BATS_TEST_TMPDIR/bin:$PATH" SMC_BACKEND=kernel \
		SMC_SYSFS_ROOT="$BATS_TEST_TMPDIR/sys" "$SMC_BIN/smc_chk" -s lo
	[ "$status" -eq 0 ]
	[[ "$output" != *"Known problem"* ]]
	# 6.12: no hang
	fake_kernel 6.12.95+deb12-amd64
	run env PATH="$BATS_TEST_TMPDIR/bin:$PATH" SMC_BACKEND=kernel \
		SMC_SYSFS_ROOT="$SMC_TOP/tests/fixtures/sysfs/x86" "$SMC_BIN/smc_chk" -s lo
	[ "$status" -eq 0 ]
	[[ "$output" != *"Known problem"* ]]
	[[ "$output" = *"Verdict:"* ]]
}

@test "smc_chk -l: on the soft backend the connection is SMC-D" {
	softd_start
	mkdir "$BATS_TEST_TMPDIR/t"
	run env TMPDIR="$BATS_TEST_TMPDIR/t" "$SMC_BIN/smc_chk" -l -p 41373 lo
	[ "$status" -eq 0 ]
	[ "$output" = "Checking active link:    lo
  Live test (SMC-D and SMC-R)
     Success, using SMC-D" ]
	# nothing left behind in its TMPDIR (another run's files elsewhere in /tmp are not its)
	run ls -A "$BATS_TEST_TMPDIR/t"
	[ "$output" = "" ]
}

@test "smc_chk -S and -C: server and client" {
	softd_start
	"$SMC_BIN/smc_chk" -S -p 42373 > "$BATS_TEST_TMPDIR/srv" &
	SRV_PID=$!
	for _ in $(seq 100); do
		grep -q '^Server started on port' "$BATS_TEST_TMPDIR/srv" && break
		sleep 0.1
	done
	port=$(sed -n 's/^Server started on port //p' "$BATS_TEST_TMPDIR/srv" 2>/dev/null || true)
	[ -n "$port" ]
	run "$SMC_BIN/smc_chk" -C 127.0.0.1 -p "$port"
	[ "$status" -eq 0 ]
	[ "$output" = "Test with target IP 127.0.0.1 and port $port
     Success, using SMC-D" ]
	kill "$SRV_PID"
	wait "$SRV_PID" || true
	SRV_PID=
	run ss -tlnH "( sport = :$port )"
	[ "$output" = "" ]
}

@test "smc_chk -C: a fallback connection is reported with its reason" {
	# soft_client registers a listener and a connection to it with the soft
	# backend, which lists the connection as TCP 0x03010000; smc_chk's own
	# client reaches the same listener and reads the row of that peer
	softd_start
	"$SMC_BIN/tests/soft_client" -s connect 43555 > "$BATS_TEST_TMPDIR/client" 3>&- &
	SRV_PID=$!
	for _ in $(seq 100); do
		grep -qx ready "$BATS_TEST_TMPDIR/client" && break
		sleep 0.05
	done
	run "$SMC_BIN/smc_chk" -C 127.0.0.1 -p 43555
	[ "$status" -eq 0 ]
	[ "$output" = "Test with target IP 127.0.0.1 and port 43555
     Failed  (TCP fallback), reasons:
          Client: 0x03010000 peer did not indicate SMC (PEERNOSMC)" ]
}

@test "smc_chk -C: nobody listening" {
	softd_start
	run "$SMC_BIN/smc_chk" -C 127.0.0.1 -p 1
	[ "$status" -eq 0 ]
	[ "$output" = "Test with target IP 127.0.0.1 and port 1
     Failed, no connection" ]
}

@test "smc_chk -6 -C: the destination must be IPv6" {
	for a in 127.0.0.1 127.1; do
		run "$SMC_BIN/smc_chk" -6 -C "$a"
		[ "$status" -eq 1 ]
		[ "$output" = "Error: '$a' is an IPv4 address, but -6/--ipv6 asks for IPv6" ]
	done
	run "$SMC_BIN/smc_chk" --ipv6 --connect 127.0.0.1
	[ "$status" -eq 1 ]
	[ "$output" = "Error: '127.0.0.1' is an IPv4 address, but -6/--ipv6 asks for IPv6" ]
	# a name with IPv4 addresses only (a private hosts file through getent is
	# not possible: use one that resolves to IPv4 here, if any)
	if getent ahosts localhost | grep -q '^127\.' && ! getent ahostsv6 localhost | grep -vq '^::ffff:'; then
		run "$SMC_BIN/smc_chk" -6 -C localhost
		[ "$status" -eq 1 ]
		[ "$output" = "Error: 'localhost' has no IPv6 address (-6/--ipv6)" ]
	fi
	run "$SMC_BIN/smc_chk" -6 -C no-such-host.invalid
	[ "$status" -eq 1 ]
	[ "$output" = "Error: Unknown destination 'no-such-host.invalid'" ]
}

@test "smc_chk -6 -C: an IPv6 address is taken" {
	ip -6 route get ::1 >/dev/null 2>&1 || skip "no IPv6 loopback"
	port=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET6); s.bind(("::1", 0)); print(s.getsockname()[1])')
	run timeout 30 "$SMC_BIN/smc_chk" -6 -C ::1 -p "$port"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "Test with target IP ::1 and port $port" ]
	[ "${lines[1]}" = "     Failed, no connection" ]
}

# ---- the replay check: -r, and -C's finding ------------------------------

# Two network namespaces joined by veth: the client RC (10.217.0.1,
# fd00:217::1), where smc_chk runs, and the responder host RR (10.217.0.2,
# fd00:217::2).  The responders (tests/progs/syn_responder.py) answer on RR's
# end for addresses RR does not have, which RC reaches through permanent
# neighbour entries to RR's MAC, so RR's kernel resets none of their SYNs:
#   10.217.0.7, fd00:217::7  port 8080  replay the SYN's options
#   10.217.0.9, fd00:217::9  port 8090  a genuine SMC server
# 10.217.0.8 leads to a MAC nobody has (no answer); 10.217.0.10 to no
# neighbour at all, which RC gives up on at once (an ICMP error).
replay_hosts() {
	local mac
	[ "$(id -u)" -eq 0 ] || skip "needs root for ip netns"
	python3 -c 'import socket
socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP)
socket.socket(socket.AF_PACKET, socket.SOCK_RAW)' 2>/dev/null ||
		skip "no raw or packet sockets here (CAP_NET_RAW)"
	RC=smcchkc$$ RR=smcchkr$$
	ip netns add "$RC" 2>/dev/null || { RC=; skip "ip netns is not permitted here"; }
	ip netns add "$RR"
	ip link add "rc$$" netns "$RC" type veth peer name "rr$$" netns "$RR"
	ip -n "$RC" addr add 10.217.0.1/24 dev "rc$$"
	ip -n "$RR" addr add 10.217.0.2/24 dev "rr$$"
	ip -n "$RC" addr add fd00:217::1/64 dev "rc$$" nodad
	ip -n "$RR" addr add fd00:217::2/64 dev "rr$$" nodad
	for ns in "$RC" "$RR"; do
		ip -n "$ns" link set lo up
	done
	ip -n "$RC" link set "rc$$" up
	ip -n "$RR" link set "rr$$" up
	ip netns exec "$RR" sysctl -qw net.ipv4.ip_forward=0 net.ipv6.conf.all.forwarding=0
	ip netns exec "$RC" sysctl -qw net.ipv4.neigh."rc$$".mcast_solicit=1 \
		net.ipv4.neigh."rc$$".retrans_time_ms=100
	mac=$(ip -n "$RR" -o link show "rr$$" | sed -n 's/.* link\/ether \([^ ]*\) .*/\1/p')
	for a in 10.217.0.7 10.217.0.9 fd00:217::7 fd00:217::9; do
		ip -n "$RC" neigh add "$a" lladdr "$mac" dev "rc$$" nud permanent
	done
	ip -n "$RC" neigh add 10.217.0.8 lladdr 02:00:00:21:70:08 dev "rc$$" nud permanent
	ip -n "$RC" route add unreachable 198.51.100.0/24
	RSP_PIDS=()
	responder replay 8080 10.217.0.7 fd00:217::7
	responder smc 8090 10.217.0.9 fd00:217::9
}

# responder MODE PORT ADDR...: syn_responder.py on RR, once it listens.
responder() {
	local mode=$1 port=$2 ready="$BATS_TEST_TMPDIR/ready-$1"
	shift 2
	ip netns exec "$RR" python3 "$SMC_TOP/tests/progs/syn_responder.py" "rr$$" "$mode" "$port" \
		"$ready" "$@" >"$BATS_TEST_TMPDIR/responder-$mode" 2>&1 3>&- &
	RSP_PIDS+=($!)
	for _ in $(seq 100); do
		[ -s "$ready" ] && return 0
		sleep 0.05
	done
	cat "$BATS_TEST_TMPDIR/responder-$mode"
	return 1
}

on_client() {
	ip netns exec "$RC" "$@"
}

@test "smc_chk -r: a peer that replays the SYN's options, over IPv4 and IPv6" {
	replay_hosts
	run on_client "$SMC_BIN/smc_chk" -r 10.217.0.7 -p 8080
	[ "$status" -eq 3 ]
	[ "$output" = "Warning: 10.217.0.7 port 8080 echoes unknown TCP options in its SYN-ACK (a replaying peer or middlebox): SMC would send a CLC proposal into a plain TCP connection
Keep 10.217.0.7 on TCP: run the programs that connect to it without smc_run, or under smc_run with SMC_BACKEND=soft (the soft backend adds no TCP option); no per-destination rule yet, see smc_chk(8)" ]
	run on_client "$SMC_BIN/smc_chk" -6 --replay-check fd00:217::7 --port 8080
	[ "$status" -eq 3 ]
	[ "$output" = "Warning: fd00:217::7 port 8080 echoes unknown TCP options in its SYN-ACK (a replaying peer or middlebox): SMC would send a CLC proposal into a plain TCP connection
Keep fd00:217::7 on TCP: run the programs that connect to it without smc_run, or under smc_run with SMC_BACKEND=soft (the soft backend adds no TCP option); no per-destination rule yet, see smc_chk(8)" ]
	# -d: the option sent (a magic of its own each time, never SMC's) comes back
	run on_client "$SMC_BIN/smc_chk" -d -r 10.217.0.7 -p 8080
	[ "$status" -eq 3 ]
	magic=$(sed -n 's/^\[DEBUG\] replay check: SYN from 10\.217\.0\.1 port [0-9]*, option 254 magic \([0-9a-f]\{8\}\)$/\1/p' <<<"${lines[0]}")
	[ -n "$magic" ] && [ "$magic" != e2d4c3d9 ]
	[[ "${lines[1]}" == "[DEBUG] replay check: SYN-ACK options 2:05b4 4: 8:"*" 3:07 254:$magic" ]]
	[ "${lines[2]}" = "Warning: 10.217.0.7 port 8080 echoes unknown TCP options in its SYN-ACK (a replaying peer or middlebox): SMC would send a CLC proposal into a plain TCP connection" ]
}

@test "smc_chk -C: a replaying peer is named after the live test" {
	replay_hosts
	# the responder resets the client's first bytes: no connection to test
	run on_client "$SMC_BIN/smc_chk" -C 10.217.0.7 -p 8080
	[ "$status" -eq 0 ]
	[ "$output" = "Test with target IP 10.217.0.7 and port 8080
     Failed, no connection
     Warning: 10.217.0.7 port 8080 echoes unknown TCP options in its SYN-ACK (a replaying peer or middlebox): SMC would send a CLC proposal into a plain TCP connection
     Keep 10.217.0.7 on TCP: run the programs that connect to it without smc_run, or under smc_run with SMC_BACKEND=soft (the soft backend adds no TCP option); no per-destination rule yet, see smc_chk(8)" ]
	# a genuine SMC server: the output as before
	run on_client "$SMC_BIN/smc_chk" -C 10.217.0.9 -p 8090
	[ "$status" -eq 0 ]
	[ "$output" = "Test with target IP 10.217.0.9 and port 8090
     Failed, no connection" ]
}

@test "smc_chk -r: a genuine SMC server and a plain TCP server echo nothing, and the probe leaves nothing behind" {
	replay_hosts
	run on_client "$SMC_BIN/smc_chk" -r 10.217.0.9 -p 8090
	[ "$status" -eq 0 ]
	[ "$output" = "10.217.0.9 port 8090 answers without echoing unknown TCP options: no replaying peer or middlebox seen" ]
	run on_client "$SMC_BIN/smc_chk" -6 -r fd00:217::9 -p 8090
	[ "$status" -eq 0 ]
	[ "$output" = "fd00:217::9 port 8090 answers without echoing unknown TCP options: no replaying peer or middlebox seen" ]
	# a listener of RR's kernel, on both families
	ip netns exec "$RR" python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_INET6)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
s.bind(("::", 8070))
s.listen(8)
open(sys.argv[1], "w").write("ready\n")
time.sleep(60)' "$BATS_TEST_TMPDIR/ready-listener" 3>&- &
	RSP_PIDS+=($!)
	for _ in $(seq 100); do
		[ -s "$BATS_TEST_TMPDIR/ready-listener" ] && break
		sleep 0.05
	done
	[ -s "$BATS_TEST_TMPDIR/ready-listener" ]
	for a in 10.217.0.2 fd00:217::2; do
		run on_client "$SMC_BIN/smc_chk" -r "$a" -p 8070
		[ "$status" -eq 0 ]
		[ "$output" = "$a port 8070 answers without echoing unknown TCP options: no replaying peer or middlebox seen" ]
	done
	# the client's kernel reset both half-open connections: nothing waits in
	# the listener's SYN queue or accept queue
	for _ in $(seq 40); do
		[ -z "$(ip netns exec "$RR" ss -Htn state syn-recv)" ] && break
		sleep 0.05
	done
	run ip netns exec "$RR" ss -Htn state syn-recv
	[ "$output" = "" ]
	run ip netns exec "$RR" ss -Hltn "sport = :8070"
	[ "$(awk '{ print $2 }' <<<"$output")" = 0 ]
}

@test "smc_chk -r: nothing listens, no answer, unreachable, no route" {
	replay_hosts
	run on_client "$SMC_BIN/smc_chk" -r 10.217.0.2 -p 8071
	[ "$status" -eq 4 ]
	[ "$output" = "10.217.0.2 port 8071 resets the probe (nothing listens there): the replay check cannot tell" ]
	run on_client "$SMC_BIN/smc_chk" -6 -r fd00:217::2 -p 8071
	[ "$status" -eq 4 ]
	[ "$output" = "fd00:217::2 port 8071 resets the probe (nothing listens there): the replay check cannot tell" ]
	run on_client "$SMC_BIN/smc_chk" -r 10.217.0.8 -p 8080
	[ "$status" -eq 4 ]
	[ "$output" = "10.217.0.8 port 8080 does not answer within 3 seconds: the replay check cannot tell" ]
	run on_client "$SMC_BIN/smc_chk" -r 10.217.0.10 -p 8080
	[ "$status" -eq 4 ]
	[ "$output" = "10.217.0.10 port 8080 is unreachable (No route to host): the replay check cannot tell" ]
	run on_client "$SMC_BIN/smc_chk" -r 198.51.100.7 -p 8080
	[ "$status" -eq 1 ]
	[ "$output" = "Error: No route to host: 198.51.100.7" ]
}

@test "smc_chk -r and -C without CAP_NET_RAW: the check is skipped, and says so where asked" {
	command -v setpriv >/dev/null || skip "setpriv is not installed"
	replay_hosts
	noraw=(setpriv --bounding-set -net_raw --inh-caps -net_raw)
	run on_client "${noraw[@]}" "$SMC_BIN/smc_chk" -r 10.217.0.7 -p 8080
	[ "$status" -eq 4 ]
	[ "$output" = "The replay check needs CAP_NET_RAW (its SYN goes out through a raw socket): skipped" ]
	# -C: the output as before; -d tells
	run on_client "${noraw[@]}" "$SMC_BIN/smc_chk" -C 10.217.0.7 -p 8080
	[ "$status" -eq 0 ]
	[ "$output" = "Test with target IP 10.217.0.7 and port 8080
     Failed, no connection" ]
	run on_client "${noraw[@]}" "$SMC_BIN/smc_chk" -d -C 10.217.0.7 -p 8080
	[ "$status" -eq 0 ]
	[ "${lines[$((${#lines[@]} - 1))]}" = "[DEBUG] replay check: The replay check needs CAP_NET_RAW (its SYN goes out through a raw socket): skipped" ]
}
