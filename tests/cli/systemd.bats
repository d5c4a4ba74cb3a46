#!/usr/bin/env bats
# The systemd unit of smc_softd (contrib/systemd/smc_softd.service.in):
# installed by make install, valid for systemd-analyze, and its capability
# bounding set is what the daemon needs, no more: each capability of it is
# dropped in turn and something the tools do stops working.

load helpers

UNIT_IN="$SMC_TOP/contrib/systemd/smc_softd.service.in"

setup() {
	cd "$SMC_TOP"
	PAIR_PIDS=
}

teardown() {
	local pid
	for pid in $PAIR_PIDS; do
		kill -TERM "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	softd_stop
	[ -z "${SHARED_DIR:-}" ] || rm -rf "$SHARED_DIR"
}

@test "make install puts the unit in SYSTEMDUNITDIR with BINDIR filled in" {
	root="$BATS_TEST_TMPDIR/root"
	run make -s install DESTDIR="$root"
	[ "$status" -eq 0 ]
	unit="$root/usr/lib/systemd/system/smc_softd.service"
	[ "$(stat -c %a "$unit")" = 644 ]
	grep -qx 'ExecStart=/usr/bin/smc_softd -s /run/smc_soft/control -p /run/smc_soft/smc_softd.pid' "$unit"
	! grep -q @BINDIR@ "$unit" || false
	run make -s install DESTDIR="$root" PREFIX=/opt/smc SYSTEMDUNITDIR=/lib/systemd/system
	[ "$status" -eq 0 ]
	grep -qx 'ExecStart=/opt/smc/bin/smc_softd .*' "$root/lib/systemd/system/smc_softd.service"
}

@test "systemd-analyze verify passes on the installed unit" {
	command -v systemd-analyze >/dev/null || skip "systemd-analyze is not installed"
	root="$BATS_TEST_TMPDIR/root"
	# installed with the scratch root as its PREFIX: verify checks that
	# ExecStart exists; MANPATH there: it checks that man:smc_softd(8) opens
	run make -s install PREFIX="$root/usr"
	[ "$status" -eq 0 ]
	unit="$root/usr/lib/systemd/system/smc_softd.service"
	grep -qx "ExecStart=$root/usr/bin/smc_softd .*" "$unit"
	run env MANPATH="$root/usr/share/man" systemd-analyze verify "$unit"
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	# and it fails when the daemon is missing: the check is real
	rm "$root/usr/bin/smc_softd"
	run env MANPATH="$root/usr/share/man" systemd-analyze verify "$unit"
	[ "$status" -ne 0 ]
	[[ "$output" == *"smc_softd is not executable"* ]]
}

@test "the unit is hardened: read-only system, no home, private /tmp, no new privileges" {
	for d in ProtectSystem=strict ProtectHome=yes PrivateTmp=yes NoNewPrivileges=yes \
		RuntimeDirectory=smc_soft Type=forking PIDFile=/run/smc_soft/smc_softd.pid; do
		grep -qx "$d" "$UNIT_IN"
	done
	command -v systemd-analyze >/dev/null || skip "systemd-analyze is not installed"
	systemd-analyze security --help 2>/dev/null | grep -q -- --offline ||
		skip "systemd-analyze security has no --offline"
	sed "s|@BINDIR@|$SMC_BIN|" "$UNIT_IN" >"$BATS_TEST_TMPDIR/smc_softd.service"
	run systemd-analyze security --offline=yes "$BATS_TEST_TMPDIR/smc_softd.service"
	echo "${lines[${#lines[@]}-1]}"
	[[ "${lines[${#lines[@]}-1]}" == *"Overall exposure level for smc_softd.service: "[0-3].*OK* ]]
}

# The unit's CapabilityBoundingSet as setpriv's --bounding-set (minus WITHOUT).
unit_bounding_set() {
	local caps c set=-all
	caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT_IN")
	for c in $caps; do
		c=${c#CAP_}
		c=${c,,}
		[ "$c" = "${1:-}" ] || set="$set,+$c"
	done
	echo "$set"
}

# Start the test build's smc_softd as the unit would run it: root, with the
# unit's bounding set (less $1), no inheritable caps, no new privileges; on
# a socket in a directory every user may reach.
softd_unit_start() {
	SHARED_DIR=$(mktemp -d /tmp/smc-unit.XXXXXX)
	chmod 755 "$SHARED_DIR"
	cat >"$SHARED_DIR/smc_softd" <<-EOF
	#!/bin/sh
	exec setpriv --bounding-set=$(unit_bounding_set "${1:-}") --inh-caps=-all --no-new-privs \
		"$SMC_BIN/smc_softd" "\$@"
	EOF
	chmod 755 "$SHARED_DIR/smc_softd"
	SOFTD_SOCKET="$SHARED_DIR/control" SMC_BIN="$SHARED_DIR" softd_start
	cat >"$SHARED_DIR/pair.py" <<-'PY'
	import signal, socket, sys
	if sys.argv[1] == "server":
	    lst = socket.socket()
	    lst.bind(("127.0.0.1", 0))
	    lst.listen()
	    print("listen", lst.getsockname()[1], flush=True)
	    c, _ = lst.accept()
	    c.sendall(c.recv(64))
	else:
	    c = socket.create_connection(("127.0.0.1", int(sys.argv[2])))
	    c.sendall(b"ping")
	    assert c.recv(64) == b"ping"
	print("done", flush=True)
	signal.pause()
	PY
	chmod 644 "$SHARED_DIR/pair.py"
}

# A preloaded server and client of user $1 (0 or 65534); returns when both
# have exchanged their bytes.
pair_as() {
	local as=() out="$SHARED_DIR/pair.$1"
	[ "$1" = 0 ] || as=(setpriv --reuid="$1" --regid="$1" --clear-groups)
	"${as[@]}" "$SMC_BIN/smc_run" /usr/bin/python3 "$SHARED_DIR/pair.py" server >"$out.s" 2>&1 3>&- &
	PAIR_PIDS="$PAIR_PIDS $!"
	for _ in $(seq 200); do grep -q '^listen ' "$out.s" && break; sleep 0.05; done
	"${as[@]}" "$SMC_BIN/smc_run" /usr/bin/python3 "$SHARED_DIR/pair.py" client \
		"$(sed -n 's/^listen //p' "$out.s")" >"$out.c" 2>&1 3>&- &
	PAIR_PIDS="$PAIR_PIDS $!"
	for _ in $(seq 200); do
		grep -q '^done' "$out.c" && grep -q '^done' "$out.s" && return 0
		sleep 0.05
	done
	cat "$out.s" "$out.c" >&2
	return 1
}

# smcss -a until it lists $1 lines that match the extended regex $2.
smcss_count() {
	local n
	for _ in $(seq 60); do
		n=$(smcss -a | grep -Ec "$2")
		[ "$n" -eq "$1" ] && return 0
		sleep 0.05
	done
	smcss -a >&2
	return 1
}

need_root_setpriv() {
	[ "$(id -u)" -eq 0 ] || skip "needs root: the unit runs smc_softd as root"
	command -v setpriv >/dev/null || skip "setpriv is not installed"
	[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 is not installed"
	kernel_has_smc && skip "this kernel has SMC (smc_run would use it)"
	true
}

@test "smc_softd with the unit's capabilities serves root and other users" {
	need_root_setpriv
	softd_unit_start
	[ "$(unit_bounding_set)" = "-all,+sys_ptrace,+dac_read_search" ]
	grep -q '^CapEff:.*00080004$' "/proc/$SOFTD_PID/status"
	run smcd info
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "Kernel Capabilities" ]
	run smc_pnet -a UNITNET -I lo
	[ "$status" -eq 0 ]
	run smc_pnet -s
	[ "$output" = "UNITNET lo n/a 255" ]
	pair_as 0
	pair_as 65534
	# both pairs on the soft SMC-D path, and the listeners found in /proc
	smcss_count 2 '^ACTIVE +00000 .* SMCD *$'
	smcss_count 2 '^ACTIVE +65534 .* SMCD *$'
	smcss_count 1 '^LISTEN +00000 '
	smcss_count 1 '^LISTEN +65534 '
}

@test "without CAP_SYS_PTRACE root's clients lose their CAP_NET_ADMIN" {
	# /proc/PID/ns/user of a client with more capabilities than the daemon
	need_root_setpriv
	softd_unit_start sys_ptrace
	run --separate-stderr smc_pnet -a UNITNET -I lo
	[ "$status" -eq 1 ]
	[ "$stderr" = "smc_pnet: Operation not permitted" ]
}

@test "without CAP_DAC_READ_SEARCH another user's listeners are missing from smcss" {
	# /proc/PID/fd of a process of another user
	need_root_setpriv
	softd_unit_start dac_read_search
	pair_as 65534
	smcss_count 2 '^ACTIVE +65534 .* SMCD *$'
	run smcss_count 1 '^LISTEN +65534 '
	[ "$status" -eq 1 ]
}
