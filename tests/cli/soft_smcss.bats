#!/usr/bin/env bats
# smcss against the soft backend: real sockets registered through the private
# family SMC_SOFT by tests/progs/soft_client, as the preload registers them,
# listed as the kernel lists SMC sockets (INIT, LISTEN, and ACTIVE as TCP
# 0x03010000 until the data path pairs them).  Inodes and ports change from
# run to run: the outputs name them after what soft_client printed.
#
# Then programs under smc_run, whose sockets the daemon finds itself
# (/proc): a listener is LISTEN, a connection between two preloaded ends
# INIT until it pairs, one to a plain TCP peer ACTIVE TCP 0x03010000.

load helpers

# A TCP program to run with and without smc_run, one message being a byte
# each way (two data calls per end):
#   server N       listen on 127.0.0.1 (any port), print "listen PORT INODE",
#                  accept one connection, answer N messages
#   client PORT N  connect, send N messages, reading each answer
# then print "conn INODE LOCALPORT" and wait for SIGTERM.
setup_file() {
	CONN_PY="$BATS_FILE_TMPDIR/conn.py"
	export CONN_PY
	cat >"$CONN_PY" <<'PY'
import os, signal, socket, sys

def ino(s):
    return os.fstat(s.fileno()).st_ino

if sys.argv[1] == "server":
    n = int(sys.argv[2])
    lst = socket.socket()
    lst.bind(("127.0.0.1", 0))
    lst.listen()
    print("listen", lst.getsockname()[1], ino(lst), flush=True)
    c, _ = lst.accept()
    for _ in range(n):
        c.recv(1)
        c.send(b"y")
else:
    n = int(sys.argv[3])
    c = socket.create_connection(("127.0.0.1", int(sys.argv[2])))
    for _ in range(n):
        c.send(b"x")
        c.recv(1)
print("conn", ino(c), c.getsockname()[1], flush=True)
signal.pause()
PY
}

setup() {
	softd_start
	CLIENT_PIDS=()
	CLIENT_OUTS=()
	NETNS=
}

teardown() {
	local pid
	for pid in "${CLIENT_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	[ -z "$NETNS" ] || ip netns del "$NETNS" 2>/dev/null
	softd_stop
}

# Run soft_client (waiting for signals) with these words in the background,
# optionally under a command prefix given as CLIENT_PREFIX; returns once the
# registrations are made.  CLIENT_PID and CLIENT_OUT name it.
client_start() {
	CLIENT_OUT="$BATS_TEST_TMPDIR/client.${#CLIENT_OUTS[@]}"
	${CLIENT_PREFIX:-} "$SMC_BIN/tests/soft_client" -s "$@" >"$CLIENT_OUT" 2>"$CLIENT_OUT.err" 3>&- &
	CLIENT_PID=$!
	CLIENT_PIDS+=("$CLIENT_PID")
	CLIENT_OUTS+=("$CLIENT_OUT")
	for _ in $(seq 200); do
		grep -qx ready "$CLIENT_OUT" && return 0
		kill -0 "$CLIENT_PID" 2>/dev/null || break
		sleep 0.05
	done
	echo "soft_client did not get ready:" >&2
	cat "$CLIENT_OUT" "$CLIENT_OUT.err" >&2
	return 1
}

# The inodes (INODE_1, ...) and ports (PORT1, ...) the clients printed, in
# their order, and the caller's uid as root's, in $output.
normalise() {
	local script="" i=0 p=0 tok state ino l r port uid
	local -A seen=()
	local f
	for f in "${CLIENT_OUTS[@]}"; do
		while read -r tok state ino l r; do
			[ -n "$ino" ] || continue
			i=$((i + 1))
			script+="s/\\b0*$ino\\b/INODE_$i/g;"
			for port in "${l##*:}" "${r##*:}"; do
				[ "$port" != 0 ] && [ -z "${seen[$port]:-}" ] || continue
				p=$((p + 1))
				seen[$port]=PORT$p
				script+="s/\\b$port\\b/PORT$p/g;"
			done
		done <"$f"
	done
	uid=$(id -u)
	script+="s/^\\([A-Z0-9]* *\\)$(printf %05d "$uid") /\\100000 /;s/\"uid\":$uid,/\"uid\":0,/g"
	output=$(printf '%s\n' "$output" | sed -e "$script")
}

# smcss with these options: exit 0, output normalised and compared with
# tests/cli/expected/NAME.
smcss_is() {
	local name=$1
	shift
	run --separate-stderr smcss "$@"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	normalise
	assert_output_file "$name"
}

HEADER="State          UID   Inode   Local Address           Peer Address            Intf Mode "

# Until the daemon has seen the client's connection close, rows may remain.
wait_header_only() {
	for _ in $(seq 100); do
		run smcss -a
		[ "$output" = "$HEADER" ] && return 0
		sleep 0.05
	done
	echo "rows left: $output" >&2
	return 1
}

@test "soft_client registers INIT, LISTEN and ACTIVE sockets with the daemon" {
	client_start init listen 0 connect 0
	run cat "$CLIENT_OUT"
	[ "${#lines[@]}" -eq 5 ]
	[[ "${lines[0]}" =~ ^[0-9]+\ INIT\ [0-9]+\ 0\.0\.0\.0:0\ 0\.0\.0\.0:0$ ]]
	[[ "${lines[1]}" =~ ^[0-9]+\ LISTEN\ [0-9]+\ 127\.0\.0\.1:[0-9]+\ 0\.0\.0\.0:0$ ]]
	[[ "${lines[2]}" =~ ^[0-9]+\ ACTIVE\ [0-9]+\ 127\.0\.0\.1:[0-9]+\ 127\.0\.0\.1:[0-9]+$ ]]
	[[ "${lines[3]}" =~ ^[0-9]+\ ACTIVE ]]
	[ "${lines[4]}" = ready ]
}

@test "smcss -a: every registered socket, IPv4 first, newest first" {
	client_start init listen 0 connect 0 connect6 0 listen6 0
	smcss_is soft_smcss_all -a
}

@test "smcss -l: the listening sockets" {
	client_start init listen 0 connect 0 connect6 0 listen6 0
	smcss_is soft_smcss_listening -l
}

@test "smcss: the connected sockets, as TCP fallbacks (peer has no SMC)" {
	client_start init listen 0 connect 0 connect6 0 listen6 0
	smcss_is soft_smcss_active
}

@test "smcss -a -d: fallback rows end at the reason, as upstream" {
	client_start init listen 0 connect 0 connect6 0 listen6 0
	smcss_is soft_smcss_all_debug -a -d
}

@test "smcss -j and -a -j: every field the daemon sent" {
	client_start init listen 0 connect 0 connect6 0 listen6 0
	smcss_is soft_smcss_json -j
	smcss_is soft_smcss_all_json -a -j
}

@test "smcss -a -R and -a -D: INIT and LISTEN report mode SMCR, fallbacks neither" {
	client_start init listen 0 connect 0
	smcss_is soft_smcss_all_smcr -a -R
	run smcss -a -D
	[ "$status" -eq 0 ]
	[ "$output" = "$HEADER""GID              Token            Peer-GID         Peer-Token       Linkid" ]
}

@test "smcss: the rows go when the client deregisters" {
	client_start init listen 0 connect 0
	run smcss -a
	[ "${#lines[@]}" -eq 5 ]
	kill -TERM "$CLIENT_PID"
	wait "$CLIENT_PID"
	grep -qx 'deleted 4' "$CLIENT_OUT"
	run smcss -a
	[ "$output" = "$HEADER" ]
}

@test "smcss: the rows go when the client dies without deregistering" {
	client_start init listen 0 connect 0
	kill -KILL "$CLIENT_PID"
	wait "$CLIENT_PID" || true
	wait_header_only
}

# A holder of another process's registration (fork) ends it with the socket
# as proof and exits; the daemon's reply to an earlier request of its may be
# unread in its socket then, which the kernel reports ahead of the SOCK_DELs.
@test "smcss: the rows go when another connection ends them and closes with a reply unread" {
	client_start init listen 0 connect 0 del-elsewhere
	grep -qx 'deleted elsewhere 4' "$CLIENT_OUT"
	# the client keeps its own connection: only the SOCK_DELs take the rows
	wait_header_only
	kill -TERM "$CLIENT_PID"
	wait "$CLIENT_PID"
	grep -qx 'deleted 0' "$CLIENT_OUT"
}

@test "smcss: one client's exit leaves the other's rows" {
	client_start listen 0
	first=$CLIENT_PID
	client_start init
	kill -KILL "$first"
	wait "$first" || true
	for _ in $(seq 100); do
		run smcss -a
		[ "${#lines[@]}" -eq 2 ] && break
		sleep 0.05
	done
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[1]}" == INIT* ]]
	# the survivor still owns its registration
	kill -TERM "$CLIENT_PID"
	wait "$CLIENT_PID"
	grep -qx 'deleted 1' "$CLIENT_OUT"
}

@test "smcss: a second network namespace has its own list" {
	NETNS="smcss_soft_$$_$RANDOM"
	ip netns add "$NETNS" 2>/dev/null || { NETNS=; skip "ip netns is not permitted here"; }
	ip netns exec "$NETNS" ip link set lo up
	client_start listen 0
	CLIENT_PREFIX="ip netns exec $NETNS" client_start connect 0
	# the namespace's caller sees its own sockets only
	run --separate-stderr ip netns exec "$NETNS" "$SMC_BIN/smcss" -a
	[ "$status" -eq 0 ]
	normalise
	assert_output_file soft_smcss_netns_other
	# and the initial namespace its own
	smcss_is soft_smcss_netns_init -a
}

# ---- programs under smc_run ----------------------------------------------

# Run conn.py with these words (preloaded when they start with smc_run, or
# a whole command line when they start with ip) in the background until it
# prints a line starting with WORD; CLIENT_OUT names its output.
conn_start() { # WORD [smc_run] server|client ... | WORD ip ...
	local word=$1 cmd=()
	shift
	case $1 in
	smc_run) shift; cmd=("$SMC_BIN/smc_run" python3 "$CONN_PY" "$@") ;;
	ip) cmd=("$@") ;;
	*) cmd=(python3 "$CONN_PY" "$@") ;;
	esac
	CLIENT_OUT="$BATS_TEST_TMPDIR/conn.${#CLIENT_PIDS[@]}"
	"${cmd[@]}" >"$CLIENT_OUT" 2>"$CLIENT_OUT.err" 3>&- &
	CLIENT_PID=$!
	CLIENT_PIDS+=("$CLIENT_PID")
	for _ in $(seq 200); do
		grep -q "^$word " "$CLIENT_OUT" && return 0
		kill -0 "$CLIENT_PID" 2>/dev/null || break
		sleep 0.05
	done
	echo "conn.py $* did not print '$word':" >&2
	cat "$CLIENT_OUT" "$CLIENT_OUT.err" >&2
	return 1
}

# The words of conn.py's line starting with WORD in file OUT.
conn_line() { # OUT WORD
	grep "^$2 " "$1"
}

UID5=$(printf %05d "$(id -u)")

# A preloaded server and client with N messages: SPORT SINO (listener), SCONN
# (accepted), CINO and CPORT (client).
preloaded_pair() { # N
	conn_start listen smc_run server "$1"
	server_out=$CLIENT_OUT
	read -r _ SPORT SINO < <(conn_line "$server_out" listen)
	conn_start conn smc_run client "$SPORT" "$1"
	read -r _ CINO CPORT < <(conn_line "$CLIENT_OUT" conn)
	for _ in $(seq 200); do
		conn_line "$server_out" conn >/dev/null && break
		sleep 0.05
	done
	read -r _ SCONN _ < <(conn_line "$server_out" conn)
	[ -n "$SCONN" ]
}

@test "smc_run: a preloaded listening server is in smcss -l" {
	conn_start listen smc_run server 1
	read -r _ port inode < <(conn_line "$CLIENT_OUT" listen)
	run --separate-stderr smcss -l
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 2 ]
	[ "${lines[0]}" = "$HEADER" ]
	[ "${lines[1]}" = "$(printf 'LISTEN         %s %07d %-23s ' "$UID5" "$inode" "127.0.0.1:$port")" ]
	# not without -l or -a, as the kernel's listening sockets
	run smcss
	[ "$output" = "$HEADER" ]
	run smcss -a
	[ "${#lines[@]}" -eq 2 ]
}

@test "smc_run: SMC_SOFT_PAIR_AFTER=4: two preloaded ends before pairing are INIT, shown with -a only" {
	export SMC_SOFT_PAIR_AFTER=4
	preloaded_pair 1
	run smcss
	[ "$output" = "$HEADER" ]
	run --separate-stderr smcss -a
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 4 ]
	printf '%s\n' "${lines[@]}" | grep -Fqx "$(printf 'INIT           %s %07d ' "$UID5" "$CINO")"
	printf '%s\n' "${lines[@]}" | grep -Fqx "$(printf 'INIT           %s %07d ' "$UID5" "$SCONN")"
	printf '%s\n' "${lines[@]}" | grep -Fqx \
		"$(printf 'LISTEN         %s %07d %-23s ' "$UID5" "$SINO" "127.0.0.1:$SPORT")"
}

# The kernel decides at connect time; the soft backend within
# SMC_SOFT_PAIR_DELAY_USEC of it, at once when the process waits in pause():
# one data call on each end (the default asked for four before pairing).
@test "smc_run: two connected preloaded ends are ACTIVE SMCD at once" {
	preloaded_pair 1
	assert_both_smcd
}

@test "smc_run: after enough traffic both ends are ACTIVE SMCD" {
	preloaded_pair 10
	assert_both_smcd
}

assert_both_smcd() {
	local want_c want_s
	want_c=$(printf 'ACTIVE         %s %07d %-23s %-23s 0000 SMCD ' "$UID5" "$CINO" \
		"127.0.0.1:$CPORT" "127.0.0.1:$SPORT")
	want_s=$(printf 'ACTIVE         %s %07d %-23s %-23s 0000 SMCD ' "$UID5" "$SCONN" \
		"127.0.0.1:$SPORT" "127.0.0.1:$CPORT")
	for _ in $(seq 100); do
		run smcss
		[ "${#lines[@]}" -eq 3 ] && [[ "$output" == *"$want_c"* ]] &&
			[[ "$output" == *"$want_s"* ]] && break
		sleep 0.05
	done
	[ "${#lines[@]}" -eq 3 ]
	[[ "$output" == *"$want_c"* ]]
	[[ "$output" == *"$want_s"* ]]
	run smcss -a
	[ "${#lines[@]}" -eq 4 ]
}

@test "smc_run: a preloaded client of a plain TCP server is ACTIVE TCP 0x03010000" {
	conn_start listen server 1
	read -r _ port _ < <(conn_line "$CLIENT_OUT" listen)
	conn_start conn smc_run client "$port" 1
	read -r _ cino cport < <(conn_line "$CLIENT_OUT" conn)
	local want
	want=$(printf 'ACTIVE         %s %07d %-23s %-23s 0000 TCP 0x03010000' \
		"$UID5" "$cino" "127.0.0.1:$cport" "127.0.0.1:$port")
	# the client offers its end at its next call after "conn": the row follows
	for _ in $(seq 100); do
		run --separate-stderr smcss
		[ "${lines[1]:-}" = "$want" ] && break
		sleep 0.05
	done
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 2 ]
	[ "${lines[1]}" = "$want" ]
	# the plain server's sockets are none of smcss's business
	run smcss -a
	[ "${#lines[@]}" -eq 2 ]
}

@test "smc_run: the sockets go when the processes exit" {
	preloaded_pair 1
	run smcss -a
	[ "${#lines[@]}" -eq 4 ]
	kill -TERM "${CLIENT_PIDS[@]}"
	wait "${CLIENT_PIDS[@]}" || true
	CLIENT_PIDS=()
	wait_header_only
}

@test "smc_run: a preloaded socket is listed in its own network namespace only" {
	NETNS="smcss_soft_$$_$RANDOM"
	ip netns add "$NETNS" 2>/dev/null || { NETNS=; skip "ip netns is not permitted here"; }
	ip netns exec "$NETNS" ip link set lo up
	conn_start listen ip netns exec "$NETNS" "$SMC_BIN/smc_run" python3 "$CONN_PY" server 1
	read -r _ port inode < <(conn_line "$CLIENT_OUT" listen)
	run ip netns exec "$NETNS" "$SMC_BIN/smcss" -l
	[ "${#lines[@]}" -eq 2 ]
	[ "${lines[1]}" = "$(printf 'LISTEN         %s %07d %-23s ' "$UID5" "$inode" "127.0.0.1:$port")" ]
	run smcss -a
	[ "$output" = "$HEADER" ]
}
