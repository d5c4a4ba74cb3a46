#!/usr/bin/env bats
# smcdump-ex: its options and error paths (a fake tcpdump on PATH records
# how it was run where no real capture is needed), the capture device's
# cleanup, and real captures of soft SMC-D connections decoded by tshark
# with contrib/wireshark/smc_dump.lua: the CLC records of their pairing,
# the CDC and DATA records their processes write into their dump rings
# (soft_pair writes one as the preload does, and programs under smc_run),
# and the LOST records of what a ring missed.

load helpers

DUMP="$SMC_BIN/smcdump-ex"
LUA="$SMC_TOP/contrib/wireshark/smc_dump.lua"

setup() {
	[ "$(id -u)" -eq 0 ] || skip "smcdump-ex needs root"
	FAKE="$BATS_TEST_TMPDIR/bin"
	mkdir -p "$FAKE"
	DUMP_PID= DUMP_ERR="$BATS_TEST_TMPDIR/dump.err"
	PAIR_PIDS=()
}

teardown() {
	local pid
	for pid in "${PAIR_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	if [ -n "$DUMP_PID" ]; then
		kill -INT "$DUMP_PID" 2>/dev/null
		wait "$DUMP_PID" 2>/dev/null
	fi
	softd_stop
}

# A tcpdump that writes its arguments to $FAKE/args and its pid to
# $FAKE/pid, says it listens, then sleeps (or exits with FAKE_RC when that
# is set).
fake_tcpdump() {
	cat >"$FAKE/tcpdump" <<-'EOF'
	#!/bin/sh
	printf '%s\n' "$@" >"$(dirname "$0")/args"
	echo $$ >"$(dirname "$0")/pid"
	echo "tcpdump: listening on fake" >&2
	[ -n "$FAKE_RC" ] && exit "$FAKE_RC"
	exec sleep 30
	EOF
	chmod 755 "$FAKE/tcpdump"
	export PATH="$FAKE:$PATH"
}

need_capture() {
	command -v tcpdump >/dev/null || skip "tcpdump is not installed"
	command -v tshark >/dev/null || skip "tshark is not installed"
}

# Start smcdump-ex with these arguments in the background until its tcpdump
# listens; DUMP_DEV is its capture device.
dump_start() {
	"$DUMP" "$@" >"$BATS_TEST_TMPDIR/dump.out" 2>"$DUMP_ERR" 3>&- &
	DUMP_PID=$!
	for _ in $(seq 200); do
		grep -q "listening on" "$DUMP_ERR" && break
		kill -0 "$DUMP_PID" 2>/dev/null || break
		sleep 0.05
	done
	grep -q "listening on" "$DUMP_ERR" || { cat "$DUMP_ERR" >&2; return 1; }
	DUMP_DEV=$(sed -n 's/^smcdump-ex: capturing SMC records on \(.*\)$/\1/p' "$DUMP_ERR")
}

# Stop it with SIGINT: its exit status is 0 and its device is gone.
dump_stop() {
	local rc=0
	kill -INT "$DUMP_PID"
	wait "$DUMP_PID" || rc=$?
	DUMP_PID=
	[ "$rc" -eq 0 ] || { cat "$DUMP_ERR" >&2; return 1; }
	[ -z "$DUMP_DEV" ] || [ ! -e "/sys/class/net/$DUMP_DEV" ]
}

# soft_pair hold MODE (tests/progs/pair): a connection's ends offered to the
# daemon; PORT_L is the listener's port, PORT_C the client's.
hold() {
	local out="$BATS_TEST_TMPDIR/pair.${#PAIR_PIDS[@]}"
	"$SMC_BIN/tests/soft_pair" hold "$1" >"$out" 2>&1 3>&- &
	PAIR_PIDS+=("$!")
	for _ in $(seq 200); do
		grep -q '^ready ' "$out" && break
		sleep 0.05
	done
	read -r _ PORT_L PORT_C _ < <(grep '^ready ' "$out")
	[ -n "$PORT_L" ]
}

# The CLC records of a capture file, one line each: type, local address,
# local port, peer port, reason.
records() {
	tshark -X lua_script:"$LUA" -r "$1" -Y "smc_dump.type < 16" -T fields -E separator=' ' \
		-e smc_dump.version -e smc_dump.type -e smc_dump.local_ip -e smc_dump.local_ip6 \
		-e smc_dump.local_port -e smc_dump.peer_port -e smc_dump.clc.reason 2>/dev/null
}

@test "smcdump-ex -h: the usage" {
	run "$DUMP" -h
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "usage: smcdump-ex [-h] [-m {all,smc,smcd,smcr}] [-t {all,raw,cdc}] [--param PARAM] [--filter FILTER] [--legacy]" ]
	[[ "$output" == *"--legacy"*"older (v1) dump header"* ]]
}

@test "smcdump-ex: an invalid mode or type is a usage error" {
	run "$DUMP" -m smx
	[ "$status" -eq 2 ]
	[[ "$output" == *"argument -m: invalid choice: 'smx'"* ]]
	run "$DUMP" -t data
	[ "$status" -eq 2 ]
	[[ "$output" == *"argument -t: invalid choice: 'data'"* ]]
}

@test "smcdump-ex: not root, or without CAP_NET_ADMIN" {
	command -v setpriv >/dev/null || skip "setpriv is not installed"
	run --separate-stderr setpriv --reuid=65534 --regid=65534 --clear-groups "$DUMP"
	[ "$status" -eq 1 ]
	[ "$stderr" = "smcdump-ex: capture device: permission denied: root or CAP_NET_ADMIN needed" ]
	run --separate-stderr setpriv --inh-caps=-net_admin --bounding-set=-net_admin -- "$DUMP"
	[ "$status" -eq 1 ]
	[ "$stderr" = "smcdump-ex: capture device: permission denied: root or CAP_NET_ADMIN needed" ]
}

@test "smcdump-ex: --param that does not split" {
	fake_tcpdump
	softd_start
	run --separate-stderr "$DUMP" --param "-w 'smc.pcap"
	[ "$status" -eq 1 ]
	[ "$stderr" = "smcdump-ex: --param: No closing quotation" ]
	[ ! -e "$FAKE/args" ]
}

@test "smcdump-ex: no TUN device to fall back on" {
	unshare --mount true 2>/dev/null || skip "no mount namespaces here"
	fake_tcpdump
	softd_start
	run --separate-stderr env SMCDUMP_EX_DEVICE=tun unshare --mount sh -c \
		'mount -t tmpfs none /dev/net && exec "$0"' "$DUMP"
	[ "$status" -eq 1 ]
	[[ "$stderr" =~ ^"smcdump-ex: capture device: cannot create smc-dummy"[a-z0-9]{4}": /dev/net/tun: No such file or directory"$ ]]
	[ ! -e "$FAKE/args" ]
	[ -z "$(ls /sys/class/net | grep '^smc-dummy' || true)" ]
}

@test "smcdump-ex: tcpdump missing" {
	run --separate-stderr env PATH="$FAKE" "$(python3 -c 'import sys; print(sys.executable)')" "$DUMP"
	[ "$status" -eq 1 ]
	[ "$stderr" = "smcdump-ex: tcpdump: not found in PATH (install the tcpdump package)" ]
}

@test "smcdump-ex: no SMC backend" {
	fake_tcpdump
	run --separate-stderr env SMC_BACKEND=soft "$DUMP"
	[ "$status" -eq 1 ]
	[ "$stderr" = "smcdump-ex: SMC_BACKEND=soft: no soft backend answers on $SMC_SOFT_SOCKET: No such file or directory (start 'smc_softd')" ]
	run --separate-stderr env SMC_BACKEND=bogus "$DUMP"
	[ "$status" -eq 1 ]
	[ "$stderr" = "smcdump-ex: SMC_BACKEND: invalid value 'bogus' (use auto, kernel or soft)" ]
	kernel_has_smc && skip "the kernel has SMC: auto finds it"
	run --separate-stderr "$DUMP"
	[ "$status" -eq 1 ]
	[ "$stderr" = "$(no_backend_msg smcdump-ex)" ]
	[ ! -e "$FAKE/args" ]
}

@test "smcdump-ex: a kernel SMC without dump support" {
	fake_tcpdump
	if ! kernel_has_smc; then
		run --separate-stderr env SMC_BACKEND=kernel "$DUMP"
		[ "$status" -eq 1 ]
		[ "$stderr" = "smcdump-ex: SMC_BACKEND=kernel: the kernel has no SMC support (load it with 'modprobe smc')" ]
		skip "the kernel has no SMC"
	fi
	run --separate-stderr env SMC_BACKEND=kernel "$DUMP" -m smcd
	[ "$status" -eq 1 ]
	[ "$stderr" = "smcdump-ex: SMC dump: the kernel's SMC has no dump support (-m all still captures the TCP handshake)" ]
	FAKE_RC=0 run --separate-stderr env SMC_BACKEND=kernel "$DUMP" -m all
	[ "$status" -eq 0 ]
	[[ "$stderr" == "smcdump-ex: SMC dump: the kernel's SMC has no dump support: capturing the TCP handshake only"* ]]
	[ "$(head -2 "$FAKE/args" | tr '\n' ' ')" = "-i any " ]
}

# An smc_softd of before DUMP_SET: the family answers, the command does not.
old_softd() {
	SOFTD_DIR=$(mktemp -d "$BATS_TEST_TMPDIR/old.XXXXXX")
	export SMC_SOFT_SOCKET="$SOFTD_DIR/control" SMC_BACKEND=soft
	python3 - "$SMC_SOFT_SOCKET" <<-'EOF' 3>&- &
	import os, socket, struct, sys
	srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
	srv.bind(sys.argv[1]); srv.listen(1)
	c, _ = srv.accept()
	while True:
	    msg, _, _, _ = socket.recv_fds(c, 4096, 1)
	    if not msg:
	        break
	    n, t, fl, seq, pid = struct.unpack_from("=IHHII", msg)
	    if t == 0x10:
	        a = struct.pack("=HHH2x", 6, 1, 0x1c)
	        body = struct.pack("=BBH", 1, 1, 0) + a
	        c.send(struct.pack("=IHHII", 16 + len(body), 0x1c, 0, seq, 0) + body)
	    else:
	        e = struct.pack("=i", -95) + msg[:16]
	        c.send(struct.pack("=IHHII", 16 + len(e), 2, 0, seq, 0) + e)
	EOF
	OLD_PID=$!
	for _ in $(seq 100); do [ -S "$SMC_SOFT_SOCKET" ] && return; sleep 0.05; done
	return 1
}

@test "smcdump-ex: a soft backend without dump support" {
	fake_tcpdump
	old_softd
	run --separate-stderr "$DUMP"
	[ "$status" -eq 1 ]
	[ "$stderr" = "smcdump-ex: SMC dump: this smc_softd has no dump support (-m all still captures the TCP handshake)" ]
	wait "$OLD_PID"
	[ ! -e "$FAKE/args" ]
	rm -f "$SMC_SOFT_SOCKET"
	old_softd
	FAKE_RC=0 run --separate-stderr "$DUMP" -m all
	[ "$status" -eq 0 ]
	[[ "$stderr" == "smcdump-ex: SMC dump: this smc_softd has no dump support: capturing the TCP handshake only"* ]]
	[ "$(head -2 "$FAKE/args" | tr '\n' ' ')" = "-i any " ]
	kill "$OLD_PID" 2>/dev/null || true
	wait "$OLD_PID" || true
}

@test "smcdump-ex: the soft backend refuses a caller without CAP_NET_ADMIN in its namespace" {
	command -v unshare >/dev/null || skip "unshare is not installed"
	unshare --user --map-root-user true 2>/dev/null || skip "no user namespaces here"
	fake_tcpdump
	softd_start
	run --separate-stderr unshare --user --map-root-user "$DUMP"
	[ "$status" -eq 1 ]
	[ "$stderr" = "smcdump-ex: SMC dump: smc_softd refused: Operation not permitted (CAP_NET_ADMIN needed)" ]
	[ ! -e "$FAKE/args" ]
	[ -z "$(ls /sys/class/net | grep '^smc-dummy' || true)" ]
}

@test "smcdump-ex: --param and --filter reach tcpdump; -m all captures on every interface" {
	fake_tcpdump
	softd_start
	dump_start --param "-n -w $BATS_TEST_TMPDIR/x.pcap" --filter "host 10.0.0.2 and port 5201"
	[[ "$DUMP_DEV" =~ ^smc-dummy[a-z0-9]{4}$ ]]
	[ -e "/sys/class/net/$DUMP_DEV" ]
	grep -q "^smcdump-ex pid $DUMP_PID start " "/sys/class/net/$DUMP_DEV/ifalias"
	run cat "$FAKE/args"
	[ "$output" = "$(printf '%s\n' -i "$DUMP_DEV" -U -n -w "$BATS_TEST_TMPDIR/x.pcap" \
		"host 10.0.0.2 and port 5201")" ]
	dump_stop
	dump_start -m all -t cdc --legacy --param -n
	run cat "$FAKE/args"
	[ "$output" = "$(printf '%s\n' -i any -U -n)" ]
	dump_stop
}

@test "smcdump-ex: SIGTERM and tcpdump's exit remove the device" {
	fake_tcpdump
	softd_start
	dump_start
	kill -TERM "$DUMP_PID"
	wait "$DUMP_PID"
	DUMP_PID=
	[ ! -e "/sys/class/net/$DUMP_DEV" ]
	FAKE_RC=3 run --separate-stderr "$DUMP"
	[ "$status" -eq 3 ]
	dev=$(sed -n 's/^smcdump-ex: capturing SMC records on \(.*\)$/\1/p' <<<"$stderr")
	[ -n "$dev" ]
	[ ! -e "/sys/class/net/$dev" ]
}

@test "smcdump-ex: a device left by a killed smcdump-ex goes at the next start" {
	fake_tcpdump
	softd_start
	dump_start
	local stale=$DUMP_DEV
	kill -KILL "$DUMP_PID"
	wait "$DUMP_PID" || true
	DUMP_PID=
	kill -KILL "$(cat "$FAKE/pid")"
	[ -e "/sys/class/net/$stale" ]
	dump_start
	[ "$DUMP_DEV" != "$stale" ]
	[ ! -e "/sys/class/net/$stale" ]
	dump_stop
}

# tcpdump writes its file as root (-Z root): the test directory is private.
@test "capture: soft SMC-D pairings decode in tshark: PROPOSAL, ACCEPT, CONFIRM, DECLINE" {
	need_capture
	softd_start
	dump_start --param "-Z root -w $BATS_TEST_TMPDIR/a.pcap"
	hold paired
	local l1=$PORT_L c1=$PORT_C
	run smc_pnet -a NET1 -D soft-ism
	hold paired
	dump_stop
	run records "$BATS_TEST_TMPDIR/a.pcap"
	local want
	want=$(printf '%s\n' \
		"2 1 127.0.0.1  $c1 $l1 0x00000000" \
		"2 1 127.0.0.1  $l1 $c1 0x00000000" \
		"2 2 127.0.0.1  $l1 $c1 0x00000000" \
		"2 3 127.0.0.1  $c1 $l1 0x00000000" \
		"2 1 127.0.0.1  $PORT_C $PORT_L 0x00000000" \
		"2 4 127.0.0.1  $PORT_C $PORT_L 0x03030001" \
		"2 1 127.0.0.1  $PORT_L $PORT_C 0x00000000" \
		"2 4 127.0.0.1  $PORT_L $PORT_C 0x03030001")
	# a record short or out of place: what was captured, and what tcpdump said of it
	[ "$output" = "$want" ] || { printf 'got:\n%s\nwant:\n%s\n' "$output" "$want"; cat "$DUMP_ERR"; false; }
}

# The issue's capture: an echo session of two programs under smc_run, with
# -m all: the CLC records of its pairing and its TCP handshake in one file.
@test "capture: -m all, an echo session under smc_run: CLC records and the TCP handshake" {
	need_capture
	local progs="$SMC_TOP/tests/progs" f="$BATS_TEST_TMPDIR/all.pcap" port cport
	softd_start
	# only SYNs of the TCP traffic, so that tcpdump keeps up with the echo
	dump_start -m all --param "-Z root -w $f" --filter "udp or tcp[tcpflags] & tcp-syn != 0"
	"$SMC_BIN/smc_run" python3 "$progs/echo.py" server --host 127.0.0.1 \
		>"$BATS_TEST_TMPDIR/srv.out" 2>&1 3>&- &
	PAIR_PIDS+=("$!")
	for _ in $(seq 200); do
		port=$(awk '/^port / { print $2 }' "$BATS_TEST_TMPDIR/srv.out" 2>/dev/null || true)
		[ -n "$port" ] && break
		sleep 0.05
	done
	# pairing is asynchronous: of four connections, some pair
	run "$SMC_BIN/smc_run" python3 "$progs/echo.py" client --port "$port" --conns 4 \
		--bytes 400000 --chunk 10000 --linger 1
	[ "$output" = "ok conns=4 bytes=400000" ]
	dump_stop
	run records "$f"
	cport=$(awk '$2 == 3 && $6 == "0x00000000" { print $4; exit }' <<<"$output")
	[ -n "$cport" ]
	grep -qx "2 2 127.0.0.1  $port $cport 0x00000000" <<<"$output"
	grep -qx "2 3 127.0.0.1  $cport $port 0x00000000" <<<"$output"
	grep -qx "2 1 127.0.0.1  $port $cport 0x00000000" <<<"$output"
	grep -qx "2 1 127.0.0.1  $cport $port 0x00000000" <<<"$output"
	# a connection that ended before the daemons paired it (under load) is
	# recorded with the codes of a late pairing; no other code, and never the
	# paired one's
	echo "records: $output" >&2
	[ -z "$(awk -v c="$cport" '$6 != "0x00000000" && ($4 == c || $5 == c ||
		($6 != "0x03010000" && $6 != "0x05000000"))' <<<"$output")" ]
	run --separate-stderr tshark -r "$f" -T fields -E separator=' ' -e tcp.srcport -e tcp.dstport \
		-Y "tcp.flags.syn == 1 && tcp.port == $cport && tcp.port == $port"
	echo "SYNs between $cport and $port: $output" >&2
	# both ports: other programs on the loopback may use the client's port
	# with another peer in the same second; a SYN the kernel sent again counts once
	[ "$(sort -u <<<"$output")" = "$(printf '%s\n' "$cport $port" "$port $cport" | sort)" ]
}

@test "capture: --legacy writes v1 headers; IPv6 ends in v2; -m smcr gets no SMC-D records" {
	need_capture
	softd_start
	dump_start --legacy -t raw --param "-Z root -w $BATS_TEST_TMPDIR/v1.pcap"
	hold paired
	dump_stop
	run records "$BATS_TEST_TMPDIR/v1.pcap"
	[ "$output" = "$(printf '%s\n' \
		"1 1 127.0.0.1  $PORT_C $PORT_L 0x00000000" \
		"1 1 127.0.0.1  $PORT_L $PORT_C 0x00000000" \
		"1 2 127.0.0.1  $PORT_L $PORT_C 0x00000000" \
		"1 3 127.0.0.1  $PORT_C $PORT_L 0x00000000")" ]
	dump_start -t cdc --param "-Z root -w $BATS_TEST_TMPDIR/v6.pcap"
	hold v6
	dump_stop
	run records "$BATS_TEST_TMPDIR/v6.pcap"
	[ "${#lines[@]}" -eq 4 ]
	[ "${lines[2]}" = "2 2  ::1 $PORT_L $PORT_C 0x00000000" ]
	dump_start -m smcr --param "-Z root -w $BATS_TEST_TMPDIR/r.pcap"
	hold paired
	dump_stop
	run records "$BATS_TEST_TMPDIR/r.pcap"
	[ -z "$output" ]
}

@test "completion: smcdump-ex options, modes and types" {
	comp() {
		bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
			_smcdump_ex smcdump-ex "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
			printf "%s\n" "${COMPREPLY[@]}" | sort' _ "$SMC_TOP/completion/smc-tools" "$@"
	}
	[ "$(comp smcdump-ex --)" = "$(printf '%s\n' --filter --legacy --param)" ]
	[ "$(comp smcdump-ex -m sm)" = "$(printf '%s\n' smc smcd smcr)" ]
	[ "$(comp smcdump-ex -t "")" = "$(printf '%s\n' all cdc raw)" ]
	[ -z "$(comp smcdump-ex --filter "")" ]
}

# CDC and DATA records, which the soft data path does not produce yet, as
# doc/smc-dump-header.md specifies them: written here into a pcap file.
@test "smc_dump.lua: CDC and DATA records, v2 and v1, decode with cursors, flags and byte counts" {
	command -v tshark >/dev/null || skip "tshark is not installed"
	local f="$BATS_TEST_TMPDIR/synth.pcap"
	python3 - "$f" <<-'EOF2'
	import socket, struct, sys
	def hdr(version, rtype, flags, body):
	    common = b"SMDH" + bytes([version, rtype, flags, 16 if version == 2 else 8])
	    local, peer = socket.inet_aton("10.0.0.1"), socket.inet_aton("10.0.0.2")
	    if version == 2:
	        return (common + struct.pack(">QQ", 1700000000123456789, 77) + local + bytes(12)
	                + peer + bytes(12) + struct.pack(">HHI", 5201, 40000, len(body)) + body)
	    return common + struct.pack(">III", 1700000000, 123456, 77) + local + peer + \
	        struct.pack(">HH", 5201, 40000) + body
	def packet(payload):
	    udp = struct.pack(">HHHH", 5201, 40000, 8 + len(payload), 0) + payload
	    ip = struct.pack(">BBHIBBH4s4s", 0x45, 0, 20 + len(udp), 0x4000, 64, 17, 0,
	                     socket.inet_aton("10.0.0.1"), socket.inet_aton("10.0.0.2"))
	    return ip + udp
	cdc = struct.pack(">HIHIBBH", 1, 65536, 2, 4096, 0x80, 0x40, 0)
	data = struct.pack(">QII", 5000, 5, 5) + b"hello"
	recs = [hdr(2, 16, 0x02, cdc), hdr(2, 32, 0x03, data), hdr(1, 16, 0x02, cdc),
	        hdr(1, 32, 0x0a, struct.pack(">QII", 7, 3000, 2) + b"hi")]
	with open(sys.argv[1], "wb") as out:
	    out.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 101))
	    for i, r in enumerate(recs):
	        p = packet(r)
	        out.write(struct.pack("<IIII", 1700000000 + i, 0, len(p), len(p)) + p)
	EOF2
	run --separate-stderr tshark -X lua_script:"$LUA" -r "$f" -T fields -E separator=' ' \
		-e smc_dump.version -e smc_dump.type -e smc_dump.token -e smc_dump.local_ip \
		-e smc_dump.peer_port -e smc_dump.cdc.prod_wrap -e smc_dump.cdc.prod_count \
		-e smc_dump.cdc.cons_wrap -e smc_dump.cdc.cons_count -e smc_dump.cdc.write_blocked \
		-e smc_dump.cdc.peer_conn_closed -e smc_dump.flags.rx -e smc_dump.flags.trunc \
		-e smc_dump.data.offset -e smc_dump.data.len -e smc_dump.data.caplen -e smc_dump.data.bytes
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf '%s\n' \
		"2 16 77 10.0.0.1 40000 1 65536 2 4096 1 1 0 0    " \
		"2 32 77 10.0.0.1 40000       1 0 5000 5 5 68656c6c6f" \
		"1 16 77 10.0.0.1 40000 1 65536 2 4096 1 1 0 0    " \
		"1 32 77 10.0.0.1 40000       0 1 7 3000 2 6869")" ]
	run --separate-stderr tshark -X lua_script:"$LUA" -r "$f"
	[[ "${lines[0]}" == *"CDC 10.0.0.1:5201 -> 10.0.0.2:40000 prod 1:65536 cons 2:4096" ]]
	[[ "${lines[1]}" == *"DATA 10.0.0.1:5201 <- 10.0.0.2:40000 offset 5000 len 5" ]]
}

# soft_pair writes its dump ring as the preload does (wire/pstats.h): the
# daemon's side of CDC and DATA records on its own.
@test "capture: a process's dump ring: CDC, DATA cut to the packet, LOST for a foreign token" {
	need_capture
	local f="$BATS_TEST_TMPDIR/ring.pcap" x
	softd_start
	dump_start --param "-Z root -w $f"
	hold dump
	grep -qx "dump types 14 snaplen 1392" "$BATS_TEST_TMPDIR/pair.0"
	sleep 0.1
	dump_stop
	run --separate-stderr tshark -X lua_script:"$LUA" -r "$f" -Y "smc_dump.type >= 16" \
		-T fields -E separator=' ' -e smc_dump.type -e smc_dump.local_ip \
		-e smc_dump.local_port -e smc_dump.peer_port -e smc_dump.flags.rx \
		-e smc_dump.flags.trunc -e smc_dump.cdc.prod_count -e smc_dump.cdc.cons_count \
		-e smc_dump.data.offset -e smc_dump.data.len -e smc_dump.data.caplen \
		-e smc_dump.lost.rejected
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf '%s\n' \
		"32 127.0.0.1 $PORT_C $PORT_L 0 1   0 5000 1392 " \
		"16 127.0.0.1 $PORT_C $PORT_L 0 0 5000 0    " \
		"16 127.0.0.1 $PORT_L $PORT_C 1 0 0 5000    " \
		"64 0.0.0.0 0 0 0 0      1")" ]
	x=$(tshark -X lua_script:"$LUA" -r "$f" -Y "smc_dump.type == 32" -T fields \
		-e smc_dump.data.bytes 2>/dev/null)
	[ "$x" = "$(printf '78%.0s' $(seq 1392))" ]
	run --separate-stderr tshark -X lua_script:"$LUA" -r "$f" -Y "smc_dump.type == 64"
	[[ "$output" == *"LOST 0.0.0.0:0 -> 0.0.0.0:0 pid "*": 0 ring full, 0 unfinished, 1 refused" ]]
}

# A sysfs tree below $1 with one RDMA device, rxe0 on lo, whose port has
# the RoCE v2 GID ::ffff:10.1.0.1.
rxe_sysfs() {
	local d="$1/class/infiniband/rxe0" p="$1/class/infiniband/rxe0/ports/1"
	mkdir -p "$p/gid_attrs/types" "$p/gid_attrs/ndevs" "$p/gids"
	echo "1: CA" >"$d/node_type"
	echo lo >"$d/parent"
	echo "4: ACTIVE" >"$p/state"
	echo "RoCE v2" >"$p/gid_attrs/types/1"
	echo lo >"$p/gid_attrs/ndevs/0"
	echo lo >"$p/gid_attrs/ndevs/1"
	echo 0000:0000:0000:0000:0000:ffff:0a01:0001 >"$p/gids/1"
}

@test "capture: -m smcr, a process's soft SMC-R link group: LLC records, LOST for a GID not the host's" {
	need_capture
	local f="$BATS_TEST_TMPDIR/llc.pcap" out="$BATS_TEST_TMPDIR/llc.out"
	rxe_sysfs "$BATS_TEST_TMPDIR/sys"
	softd_start --sysfs "$BATS_TEST_TMPDIR/sys"
	dump_start -m smcr --param "-Z root -w $f"
	"$SMC_BIN/tests/soft_pair" hold llc >"$out" 2>&1 3>&- &
	PAIR_PIDS+=("$!")
	for _ in $(seq 200); do
		grep -qx ready "$out" && break
		sleep 0.05
	done
	cat "$out"
	grep -qx "llc types 14" "$out"
	run --separate-stderr "$SMC_BIN/smcr" linkgroup
	[[ "${lines[1]}" == "00000100 SERV "* ]]
	sleep 0.1
	dump_stop
	run --separate-stderr tshark -X lua_script:"$LUA" -r "$f" -Y "smc_dump" \
		-T fields -E separator=' ' -e ip.src -e ip.dst -e udp.srcport -e udp.dstport \
		-e smc_dump.type -e smc_dump.flags.rx -e smc_dump.flags.smcd -e smc_dump.token \
		-e smc_dump.llc.lgr_id -e smc_dump.llc.link_id -e smc_dump.llc.type \
		-e smc_dump.llc.response -e smc_dump.lost.rejected
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf '%s\n' \
		"10.1.0.1 10.1.0.2 0 0 8 0 0 0 0x00000100 1 1 0 " \
		"10.1.0.2 10.1.0.1 0 0 8 1 0 0 0x00000100 1 1 1 " \
		"0.0.0.0 0.0.0.0 0 0 64 0 1 0     1")" ]
	run --separate-stderr tshark -X lua_script:"$LUA" -r "$f" -Y "smc_dump.type == 8"
	[[ "${lines[0]}" == *"LLC 10.1.0.1:0 -> 10.1.0.2:0 link 1 CONFIRM LINK" ]]
	[[ "${lines[1]}" == *"LLC 10.1.0.1:0 <- 10.1.0.2:0 link 1 CONFIRM LINK response" ]]
}

# Two programs under smc_run, 100 KiB client to server in 25 writes: the
# first go over TCP until the pairing (SMC_SOFT_PAIR_AFTER), the rest
# through the ring.  SINK_PORT is the server's port.
sink_run() {
	local progs="$SMC_TOP/tests/progs" out="$BATS_TEST_TMPDIR/sink.out"
	"$SMC_BIN/smc_run" python3 "$progs/sink.py" server >"$out" 2>&1 3>&- &
	PAIR_PIDS+=("$!")
	for _ in $(seq 200); do
		SINK_PORT=$(awk '/^port / { print $2 }' "$out" 2>/dev/null || true)
		[ -n "$SINK_PORT" ] && break
		sleep 0.05
	done
	run "$SMC_BIN/smc_run" python3 "$progs/sink.py" client --port "$SINK_PORT" \
		--bytes 102400 --chunk 4096 --pause 0.02
	[ "$output" = "sent 102400" ]
	for _ in $(seq 200); do
		grep -q '^got ' "$out" && break
		sleep 0.05
	done
	grep -qx "got 102400" "$out"
	sleep 0.1
}

# The CDC and DATA records of a sink_run capture, checked against what was
# sent: MODE all, cdc (no DATA) or raw (no CDC).  The client's DATA records
# follow each other from the cut-over to the last byte, carry the pattern,
# and add up to its last producer cursor (wrap x send buffer + count).
sink_check() {
	tshark -X lua_script:"$LUA" -r "$1" -Y "smc_dump" -T fields -E separator=, \
		-e smc_dump.type -e smc_dump.local_ip -e smc_dump.peer_ip \
		-e smc_dump.local_port -e smc_dump.peer_port -e smc_dump.flags.rx \
		-e smc_dump.cdc.prod_wrap -e smc_dump.cdc.prod_count -e smc_dump.data.offset \
		-e smc_dump.data.len -e smc_dump.data.caplen -e smc_dump.data.bytes \
		-e smc_dump.clc.sndbuf_size 2>/dev/null >"$BATS_TEST_TMPDIR/fields"
	python3 - "$BATS_TEST_TMPDIR/fields" "$SINK_PORT" 102400 "$2" <<-'EOF'
	import sys
	path, sport, total, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
	recs = [l.rstrip("\n").split(",") for l in open(path) if l.strip()]
	mine = [r for r in recs if sport in (int(r[3]), int(r[4]))]
	cport = next(int(r[3]) for r in mine if int(r[0]) == 3)
	sndbuf = next(int(r[12]) for r in mine if int(r[0]) == 3)
	cdc = [r for r in mine if int(r[0]) == 16]
	data = [r for r in mine if int(r[0]) == 32]
	for r in cdc + data:
	    assert r[1] == r[2] == "127.0.0.1", r
	    assert {int(r[3]), int(r[4])} == {sport, cport}, r
	tx = [r for r in data if int(r[3]) == cport and r[5] in ("0", "False")]
	if mode == "cdc":
	    assert not data and cdc, (len(data), len(cdc))
	if mode == "raw":
	    assert not cdc and tx, (len(cdc), len(tx))
	if mode != "cdc":
	    tx.sort(key=lambda r: int(r[8]))
	    first = int(tx[0][8])
	    # 0 when the connection was paired before its first byte
	    assert 0 <= first < total, first
	    end = first
	    for r in tx:
	        off, n, cap = int(r[8]), int(r[9]), int(r[10])
	        assert off == end, (off, end)
	        got = bytes.fromhex(r[11]) if cap else b""
	        assert len(got) == cap and 0 < cap <= n, r[:11]
	        assert got == bytes((off + i) % 251 for i in range(cap)), off
	        end += n
	    assert end == total, end
	if mode != "raw":
	    ctx = [r for r in cdc if int(r[3]) == cport and r[5] in ("0", "False")]
	    assert ctx and any(int(r[3]) == sport for r in cdc), len(cdc)
	    last = ctx[-1]
	    moved = int(last[6]) * sndbuf + int(last[7])
	    if mode == "all":
	        assert moved == total - first, (moved, total - first)
	    assert 0 < moved <= total, moved
	print("ok %s cdc=%d data=%d" % (mode, len(cdc), len(data)))
	EOF
}

# The issue's capture, with the CDC and DATA records of the processes.
@test "capture: -m all, two programs under smc_run: CDC and DATA records add up to the bytes sent" {
	need_capture
	local f="$BATS_TEST_TMPDIR/sink.pcap"
	softd_start
	dump_start -m all --param "-Z root -w $f" --filter "udp or tcp[tcpflags] & tcp-syn != 0"
	sink_run
	dump_stop
	run sink_check "$f" all
	[[ "$output" == "ok all cdc="* ]] || { echo "$output"; return 1; }
}

@test "capture: -t cdc gets CDC records and no DATA, -t raw DATA and no CDC" {
	need_capture
	softd_start
	dump_start -t cdc --param "-Z root -w $BATS_TEST_TMPDIR/cdc.pcap"
	sink_run
	dump_stop
	run sink_check "$BATS_TEST_TMPDIR/cdc.pcap" cdc
	[[ "$output" == "ok cdc cdc="*" data=0" ]] || { echo "$output"; return 1; }
	dump_start -t raw --param "-Z root -w $BATS_TEST_TMPDIR/raw.pcap"
	sink_run
	dump_stop
	run sink_check "$BATS_TEST_TMPDIR/raw.pcap" raw
	[[ "$output" == "ok raw cdc=0 data="* ]] || { echo "$output"; return 1; }
}
