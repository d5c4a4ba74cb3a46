#!/usr/bin/env bats
# smc_chk: command line, PNET ID lookup, static analysis and live tests
# against a private soft backend.

load helpers

setup() {
	export TERM=dumb	# no bold in the "Checking active link" lines
}

teardown() {
	[ -z "${SRV_PID:-}" ] || { kill "$SRV_PID" 2>/dev/null; wait "$SRV_PID" 2>/dev/null; }
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
	[ "${lines[2]}" = "       smc_chk -i <iface>" ]
	[ "${lines[3]}" = "Check SMC setup" ]
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
	# mlx5 alone: PCI functions, no rxe
	mkdir -p "$BATS_TEST_TMPDIR/sys/class/infiniband"
	cp -a "$SMC_TOP/tests/fixtures/sysfs/x86/devices" "$BATS_TEST_TMPDIR/sys/"
	cp -a "$SMC_TOP/tests/fixtures/sysfs/x86/class/infiniband/mlx5_0" "$BATS_TEST_TMPDIR/sys/class/infiniband/"
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
	run "$SMC_BIN/smc_chk" -l -p 41373 lo
	[ "$status" -eq 0 ]
	[ "$output" = "Checking active link:    lo
  Live test (SMC-D and SMC-R)
     Success, using SMC-D" ]
	# nothing left behind
	run bash -c 'ls /tmp/echo-srv.* /tmp/echo-clt.* 2>/dev/null'
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
