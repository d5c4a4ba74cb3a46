#!/usr/bin/env bats
# The soft SMC-D pairing (SMC_SOFT PAIR) as the tools show it: both ends of
# a connection offered by tests/progs/pair/soft_pair are SMCD on the soft
# ISM with live cursors and one link group; one end alone is INIT while its
# peer is a socket of a process known to the daemon (and counts as fallback
# 0x03010000 if it goes unpaired); a PNET mismatch declines both ends with
# 0x03030001; ends in two namespaces pair too; a process's doorbell (BELL)
# goes only to processes that could pair with it.  Ports, inodes and the ISM's
# GID change from run to run: the outputs name them PORT_L (the listener's),
# PORT_C (the client's), INODE_C, INODE_S and GID.

load helpers

setup_file() {
	export PAIR_PROG="$SMC_BIN/tests/soft_pair"
}

setup() {
	softd_start
	PAIR_PIDS=()
	NETNS_A= NETNS_B= BELL_DIR=
}

teardown() {
	local pid
	for pid in "${PAIR_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	[ -z "$NETNS_A" ] || ip netns del "$NETNS_A" 2>/dev/null
	[ -z "$NETNS_B" ] || ip netns del "$NETNS_B" 2>/dev/null
	softd_stop
	[ -z "${BELL_DIR:-}" ] || rm -rf "$BELL_DIR"
}

# Run soft_pair with these words in the background until it prints a line
# matching $2 (a grep pattern); PAIR_OUT names its output.
pair_start() {
	local pattern=$1
	shift
	PAIR_OUT="$BATS_TEST_TMPDIR/pair.${#PAIR_PIDS[@]}"
	"$@" >"$PAIR_OUT" 2>"$PAIR_OUT.err" 3>&- &
	PAIR_PIDS+=("$!")
	for _ in $(seq 200); do
		grep -q "$pattern" "$PAIR_OUT" && return 0
		kill -0 "$!" 2>/dev/null || break
		sleep 0.05
	done
	echo "soft_pair did not get to '$pattern':" >&2
	cat "$PAIR_OUT" "$PAIR_OUT.err" >&2
	return 1
}

hold() {
	pair_start '^ready ' "$PAIR_PROG" hold "$1"
	read -r _ PORT_L PORT_C INODE_C INODE_S < <(grep '^ready ' "$PAIR_OUT")
}

# Ports, inodes and the soft ISM's GID in $output by name.
normalise() {
	local gid
	gid=$(smcss -D | awk 'NR == 2 { print $8 }')
	output=$(printf '%s\n' "$output" | sed -e "s/\\b$PORT_L\\b/PORT_L/g;s/\\b$PORT_C\\b/PORT_C/g" \
		-e "s/\\b0*$INODE_C\\b/INODE_C/g;s/\\b0*$INODE_S\\b/INODE_S/g" \
		-e "s/^\\([A-Z]* *\\)$(printf %05d "$(id -u)") /\\100000 /" \
		${gid:+-e "s/\\b$gid\\b/GID/g"})
}

# A tool's output with these arguments: exit 0, no stderr, normalised and
# compared with tests/cli/expected/NAME.
tool_is() {
	local name=$1
	shift
	run --separate-stderr "$@"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	normalise
	assert_output_file "$name"
}

stats_line() {
	smcd stats | grep -E "^  $1 " | awk '{ print $NF }'
}

@test "soft_pair selftest: pairing, regions, bytes both ways, SOCK_DEL, STATS_ATTACH" {
	run "$PAIR_PROG" selftest
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
	[[ "$output" != *FAIL* ]]
	[ "${#lines[@]}" -eq 16 ]
}

@test "paired: both ends SMCD, the client first PENDING" {
	hold paired
	run cat "$PAIR_OUT"
	[ "${lines[0]}" = "client PENDING" ]
	[ "${lines[1]}" = "server PAIRED" ]
	tool_is soft_pair_all smcss -a
	tool_is soft_pair_all smcss
}

@test "paired: smcss -D shows the DMB tokens, GIDs and the link group" {
	hold paired
	tool_is soft_pair_smcd smcss -D
}

@test "paired: smcss -d shows the live cursors of the region" {
	hold paired
	tool_is soft_pair_debug smcss -d
}

@test "paired: smcd linkgroup and smcd device count the connection" {
	hold paired
	tool_is soft_pair_linkgroup smcd linkgroup
	tool_is soft_pair_device smcd device
}

@test "paired: closing both ends drops the link group and frees the buffers" {
	hold paired
	kill -TERM "${PAIR_PIDS[0]}"
	wait "${PAIR_PIDS[0]}" || true
	PAIR_PIDS=()
	for _ in $(seq 100); do
		[ "$(smcss -a | wc -l)" -eq 1 ] && break
		sleep 0.05
	done
	run smcss -a
	[ "${#lines[@]}" -eq 1 ]
	run smcd linkgroup
	[ -z "$output" ]
	[ "$(stats_line 'SMC connections')" = 2 ]
	[ "$(stats_line 'TCP fallback')" = 0 ]
	run smcd stats
	[[ "$output" == *"Buffer usage (Bytes)                  0 (0)"* ]]
}

@test "pending: one end alone, its peer in a preloaded process: both INIT" {
	hold pending
	run cat "$PAIR_OUT"
	[ "${lines[0]}" = "client PENDING" ]
	tool_is soft_pair_pending smcss -a
	run smcss -D
	[ "${#lines[@]}" -eq 1 ]
	run smcd linkgroup
	[ -z "$output" ]
}

@test "pending: dropped unpaired, it counts as a fallback 0x03010000" {
	hold pending
	kill -TERM "${PAIR_PIDS[0]}"
	wait "${PAIR_PIDS[0]}" || true
	PAIR_PIDS=()
	for _ in $(seq 100); do
		[ "$(stats_line 'TCP fallback')" = 1 ] && break
		sleep 0.05
	done
	[ "$(stats_line 'TCP fallback')" = 1 ]
	[ "$(stats_line 'SMC connections')" = 0 ]
	run smcd -d stats
	[[ "$output" == *"TCP fallback                          1 (client 1, server 0)"* ]]
}

@test "PNET: the soft ISM in a PNET that lo is not in declines both ends (0x03030001)" {
	run smc_pnet -a NET1 -D soft-ism
	[ "$status" -eq 0 ]
	hold paired
	run cat "$PAIR_OUT"
	[ "${lines[0]}" = "client DECLINED 0x03030001" ]
	[ "${lines[1]}" = "server DECLINED 0x03030001" ]
	tool_is soft_pair_declined smcss -a
	[ "$(stats_line 'TCP fallback')" = 2 ]
	run smcd -d stats
	[[ "$output" == *"TCP fallback                          2 (client 1, server 1)"* ]]
	run smcd linkgroup
	[ -z "$output" ]
}

@test "PNET: lo in the soft ISM's PNET pairs" {
	run smc_pnet -a NET1 -D soft-ism
	[ "$status" -eq 0 ]
	run smc_pnet -a NET1 -I lo
	[ "$status" -eq 0 ]
	hold paired
	run cat "$PAIR_OUT"
	[ "${lines[1]}" = "server PAIRED" ]
	tool_is soft_pair_all smcss -a
}

@test "IPv6: ::1 ends pair as well" {
	hold v6
	run smcss -a
	[ "${#lines[@]}" -eq 3 ]
	[[ "${lines[1]}" == *" ::1:$PORT_L "*" SMCD " ]]
	[[ "${lines[2]}" == *" ::1:$PORT_C "*" SMCD " ]]
}

@test "namespaces: ends in two namespaces (veth) of one user pair" {
	[ "$(id -u)" -eq 0 ] || skip "needs root for ip netns"
	NETNS_A=smcpa$$ NETNS_B=smcpb$$
	ip netns add "$NETNS_A" 2>/dev/null || { NETNS_A=; skip "ip netns is not permitted here"; }
	ip netns add "$NETNS_B"
	ip link add "pa$$" netns "$NETNS_A" type veth peer name "pb$$" netns "$NETNS_B"
	ip -n "$NETNS_A" addr add 10.214.0.1/24 dev "pa$$"
	ip -n "$NETNS_B" addr add 10.214.0.2/24 dev "pb$$"
	ip -n "$NETNS_A" link set "pa$$" up
	ip -n "$NETNS_B" link set "pb$$" up
	pair_start '^listening' ip netns exec "$NETNS_A" "$PAIR_PROG" server 10.214.0.1 7411
	server_out=$PAIR_OUT
	pair_start '^done' ip netns exec "$NETNS_B" "$PAIR_PROG" client 10.214.0.1 7411
	client_out=$PAIR_OUT
	for _ in $(seq 100); do
		grep -q '^done' "$server_out" && break
		sleep 0.05
	done
	# whichever end comes first waits for the other
	run cat "$server_out" "$client_out"
	[ "${lines[0]}" = listening ]
	[[ "${lines[1]} ${lines[4]}" =~ ^(PENDING\ PAIRED|PAIRED\ PENDING)$ ]]
	[ "${lines[2]}" = "got ping" ]
	run ip netns exec "$NETNS_A" smcss -a
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[1]}" =~ ^ACTIVE\ +[0-9]+\ +[0-9]+\ 10\.214\.0\.1:7411\ +10\.214\.0\.2:[0-9]+\ +0000\ SMCD\ $ ]]
	run ip netns exec "$NETNS_B" smcss -a
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[1]}" =~ ^ACTIVE\ +[0-9]+\ +[0-9]+\ 10\.214\.0\.2:[0-9]+\ +10\.214\.0\.1:7411\ +0000\ SMCD\ $ ]]
	run smcss -a
	[ "${#lines[@]}" -eq 1 ]
	run smcd linkgroup
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[1]}" =~ ^[0-9a-f]{8}\ +0\ +1\  ]]
	# each end counted in its own namespace
	[ "$(ip netns exec "$NETNS_A" smcd stats | awk '/^  SMC connections/ { print $NF }')" = 1 ]
	[ "$(ip netns exec "$NETNS_B" smcd stats | awk '/^  SMC connections/ { print $NF }')" = 1 ]
}

@test "STATS_ATTACH: live counters in smcd stats, kept after the process exits" {
	hold paired
	run smcd stats
	[[ "$output" == *"Data transmitted (Bytes)            678 (678)"* ]]
	[[ "$output" == *"Data transmitted (Bytes)          12345 (12.35K)"* ]]
	[[ "$output" == *"Total requests                        3"* ]]
	kill -TERM "${PAIR_PIDS[0]}"
	wait "${PAIR_PIDS[0]}" || true
	PAIR_PIDS=()
	for _ in $(seq 100); do
		[ "$(smcss -a | wc -l)" -eq 1 ] && break
		sleep 0.05
	done
	run smcd stats
	[[ "$output" == *"Data transmitted (Bytes)            678 (678)"* ]]
	[[ "$output" == *"Data transmitted (Bytes)          12345 (12.35K)"* ]]
}

# BELL: a process's eventfd doorbell (wire/reg.h).  One client sets its
# bell; another asks for it by id and gets an eventfd; an id nobody set, a
# pipe instead of an eventfd, and a process of another user in another
# namespace are refused; the bell goes with its control connection.
@test "BELL: set, fetched by id by another process, refused when unknown or not an eventfd" {
	local id
	pair_start '^ready' "$SMC_BIN/tests/soft_client" -s bell
	id=$(sed -n 's/^bell \([0-9]*\)$/\1/p' "$PAIR_OUT" 2>/dev/null || true)
	[ -n "$id" ] && [ "$id" -ge 2 ]
	run "$SMC_BIN/tests/soft_client" bell-get "$id" bell-get $((id + 1)) bell-pipe
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "bell-get $id: $id anon_inode:[eventfd]" ]
	[ "${lines[1]}" = "bell-get $((id + 1)): ENOENT" ]
	[ "${lines[2]}" = "bell: EINVAL" ]
	# its process gone, its bell is gone too
	kill -TERM "${PAIR_PIDS[0]}"
	wait "${PAIR_PIDS[0]}" || true
	PAIR_PIDS=()
	for _ in $(seq 50); do
		run "$SMC_BIN/tests/soft_client" bell-get "$id"
		[ "${lines[0]}" = "bell-get $id: ENOENT" ] && break
		sleep 0.05
	done
	[ "${lines[0]}" = "bell-get $id: ENOENT" ]
}

# One bell per thread that waits at once: a process sets up to 8 (slots
# 0-7), each with an id of its own; slot 0 again (a new image after
# execve) replaces them all; a slot out of range is refused.
@test "BELL: slots, one bell each; slot 0 again replaces them all" {
	local ids a b c
	pair_start '^ready' "$SMC_BIN/tests/soft_client" -s bell bell-slot 1 bell-slot 7 bell-slot 8
	mapfile -t ids < <(sed -n 's/^bell \([0-9]*\)$/\1/p' "$PAIR_OUT")
	[ "${#ids[@]}" -eq 3 ]
	a=${ids[0]} b=${ids[1]} c=${ids[2]}
	[ "$a" != "$b" ] && [ "$b" != "$c" ] && [ "$a" != "$c" ]
	grep -qx 'bell: EINVAL' "$PAIR_OUT"
	run "$SMC_BIN/tests/soft_client" bell-get "$a" bell-get "$b" bell-get "$c"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "bell-get $a: $a anon_inode:[eventfd]" ]
	[ "${lines[1]}" = "bell-get $b: $b anon_inode:[eventfd]" ]
	[ "${lines[2]}" = "bell-get $c: $c anon_inode:[eventfd]" ]
	# a second slot 1 replaces slot 1 only; slot 0 replaces all
	pair_start '^ready' "$SMC_BIN/tests/soft_client" -s bell-slot 1 bell-slot 1 bell
	mapfile -t ids < <(sed -n 's/^bell \([0-9]*\)$/\1/p' "$PAIR_OUT")
	[ "${#ids[@]}" -eq 3 ]
	run "$SMC_BIN/tests/soft_client" bell-get "${ids[0]}" bell-get "${ids[1]}" bell-get "${ids[2]}"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "bell-get ${ids[0]}: ENOENT" ]
	[ "${lines[1]}" = "bell-get ${ids[1]}: ENOENT" ]
	[ "${lines[2]}" = "bell-get ${ids[2]}: ${ids[2]} anon_inode:[eventfd]" ]
}

@test "BELL: not handed to a process of another user in another namespace" {
	local id
	[ "$(id -u)" -eq 0 ] || skip "needs root for ip netns and another user"
	NETNS_A=smcbell$$
	ip netns add "$NETNS_A" 2>/dev/null || { NETNS_A=; skip "ip netns is not permitted here"; }
	# a daemon whose socket another user can reach
	softd_stop
	BELL_DIR=$(mktemp -d /tmp/softd-bell.XXXXXX)
	chmod 755 "$BELL_DIR"
	SOFTD_SOCKET="$BELL_DIR/control" softd_start
	pair_start '^ready' "$SMC_BIN/tests/soft_client" -s bell
	id=$(sed -n 's/^bell \([0-9]*\)$/\1/p' "$PAIR_OUT" 2>/dev/null || true)
	[ -n "$id" ]
	run ip netns exec "$NETNS_A" setpriv --reuid 65534 --regid 65534 --clear-groups \
		"$SMC_BIN/tests/soft_client" bell-get "$id"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "bell-get $id: ENOENT" ]
	# the same user in that namespace may have it
	run ip netns exec "$NETNS_A" "$SMC_BIN/tests/soft_client" bell-get "$id"
	[ "${lines[0]}" = "bell-get $id: $id anon_inode:[eventfd]" ]
}
