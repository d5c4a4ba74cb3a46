#!/usr/bin/env bats
# OpenSSH's sshd under smc_run, as an administrator would try it: a private
# host key and configuration on a high port, key authentication of the
# current user.  sshd re-executes itself for every connection, hands the
# socket to privilege-separated children and puts the pre-authentication one
# in a seccomp sandbox; clients with and without the library.
load helpers

setup_file() {
	[ -x /usr/sbin/sshd ] || skip "openssh-server is not installed (scripts/install-deps.sh)"
	command -v ssh >/dev/null && command -v scp >/dev/null || skip "openssh-client is not installed"
}

setup() {
	T=$(mktemp -d "${BATS_RUN_TMPDIR:-/tmp}/sshd.XXXXXX")
	chmod 755 "$T"
	softd_start
	unset SMC_SOFT_PAIR_AFTER SMC_DEBUG
	RUN="$SMC_BIN/smc_run"
	ssh-keygen -q -t ed25519 -N '' -f "$T/host" && ssh-keygen -q -t ed25519 -N '' -f "$T/user"
	PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	cat >"$T/sshd_config" <<-EOF
	Port $PORT
	ListenAddress 127.0.0.1
	HostKey $T/host
	PidFile $T/sshd.pid
	AuthorizedKeysFile $T/user.pub
	PermitRootLogin prohibit-password
	Subsystem sftp internal-sftp
	PasswordAuthentication no
	KbdInteractiveAuthentication no
	UsePAM no
	StrictModes no
	EOF
	[ "$(id -u)" -ne 0 ] || mkdir -p /run/sshd
	"$RUN" /usr/sbin/sshd -D -e -f "$T/sshd_config" 2>"$T/sshd.log" 3>&- &
	SSHD=$!
	for _ in $(seq 200); do
		[ -n "$(ss -Hltn "sport = :$PORT")" ] && break
		sleep 0.05
	done
	SSH=(-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes
	     -o LogLevel=ERROR -i "$T/user")
	USER_AT="$(id -un)@127.0.0.1"
}

teardown() {
	[ -z "${SSHD:-}" ] || { kill "$SSHD" 2>/dev/null; wait "$SSHD" 2>/dev/null; }
	softd_stop
	[ -z "${BATS_TEST_COMPLETED:-}" ] && cat "$T/sshd.log" >&2
	rm -rf "$T"
}

# The connections to the server's port, as smcss -a shows them: "MODE" words.
conn_modes() {
	smcss -a | awk -v p=":$PORT" '$1 == "ACTIVE" && ($4 ~ p"$" || $5 ~ p"$") { print $7 }'
}

daemon_rings() {
	ls -l "/proc/$SOFTD_PID/fd" 2>/dev/null | grep -c 'memfd:smc-dmb' || true
}

@test "sshd under smc_run: a client without the library logs in (TCP 0x03010000)" {
	run --separate-stderr timeout 60 ssh "${SSH[@]}" -p "$PORT" "$USER_AT" echo hello
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	[ "$output" = hello ]
}

@test "sshd under smc_run: a preloaded client logs in over SMC-D, and nothing is left after it" {
	timeout 60 "$RUN" ssh "${SSH[@]}" -p "$PORT" "$USER_AT" 'sleep 2; echo hello' \
		>"$T/out" 2>"$T/err" &
	local pid=$! modes
	for _ in $(seq 200); do
		modes=$(conn_modes | sort | uniq -c | tr -s ' ')
		[ "$modes" = " 2 SMCD" ] && break
		sleep 0.05
	done
	[ "$modes" = " 2 SMCD" ] || { smcss -a; false; }
	wait "$pid" || { cat "$T/err"; false; }
	[ "$(cat "$T/out")" = hello ]
	for _ in $(seq 200); do
		[ -z "$(conn_modes)" ] && [ "$(daemon_rings)" -eq 0 ] && break
		sleep 0.05
	done
	[ -z "$(conn_modes)" ] || { smcss -a; false; }
	[ "$(daemon_rings)" -eq 0 ]
}

@test "sshd under smc_run: scp of 200 MiB both ways, preloaded client, sha256 equal" {
	head -c $((200 * 1024 * 1024)) /dev/urandom >"$T/big"
	timeout 300 "$RUN" scp -q "${SSH[@]}" -P "$PORT" "$T/big" "$USER_AT:$T/up"
	timeout 300 "$RUN" scp -q "${SSH[@]}" -P "$PORT" "$USER_AT:$T/up" "$T/down"
	local want
	want=$(sha256sum <"$T/big")
	[ "$(sha256sum <"$T/up")" = "$want" ]
	[ "$(sha256sum <"$T/down")" = "$want" ]
}

@test "sshd under smc_run: scp of 200 MiB both ways, client without the library" {
	head -c $((200 * 1024 * 1024)) /dev/urandom >"$T/big"
	timeout 300 scp -q "${SSH[@]}" -P "$PORT" "$T/big" "$USER_AT:$T/up"
	timeout 300 scp -q "${SSH[@]}" -P "$PORT" "$USER_AT:$T/up" "$T/down"
	local want
	want=$(sha256sum <"$T/big")
	[ "$(sha256sum <"$T/up")" = "$want" ]
	[ "$(sha256sum <"$T/down")" = "$want" ]
}
