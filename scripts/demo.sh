#!/usr/bin/env bash
# make demo: build the toolset and run it end to end on this machine, against
# a private soft backend (smc_softd) on its own socket, so it works the same
# whether or not the kernel has SMC.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
top=$PWD

section() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
show() { printf '$ %s\n' "$*"; "$@"; printf '[exit %d]\n' $?; }

section "Dependencies and build"
scripts/install-deps.sh demo || exit 1
make -s all || exit 1
make -s O=build/demo build/demo/tests/soft_client || exit 1
export PATH="$top:$PATH"

section "Versions"
for t in smc_pnet smcss smc_run smc_softd; do show $t -v; done
show smcd -v 2>&1

section "Backend detection"
if python3 -c 'import socket; socket.socket(43, socket.SOCK_STREAM, 0)' 2>/dev/null; then
	echo "kernel: AF_SMC sockets work: by default the tools use the kernel's SMC"
else
	echo "kernel: no AF_SMC (module smc not loaded or not built)"
fi
run_dir=$(mktemp -d /tmp/smc-demo.XXXXXX)
export SMC_SOFT_SOCKET="$run_dir/control"
export SMC_STATS_CACHE="$run_dir/stats"   # leave the user's stats baseline alone
show env SMC_BACKEND=soft smcss -a 2>&1

section "Start a private soft backend"
smc_softd -f -s "$SMC_SOFT_SOCKET" 2>"$run_dir/smc_softd.log" &
softd=$!
client=
server=
cleanup() {
	[ -z "$client" ] || kill "$client" 2>/dev/null
	[ -z "$server" ] || kill "$server" 2>/dev/null
	kill "$softd" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$run_dir"
}
trap cleanup EXIT
for _ in $(seq 100); do [ -S "$SMC_SOFT_SOCKET" ] && break; sleep 0.05; done
export SMC_BACKEND=soft
echo "smc_softd (pid $softd) listens on $SMC_SOFT_SOCKET"

section "Devices and capabilities"
show smcd info
show smcd device
show smcr -d device
show smc_rnics

# The first RDMA device and its interface, for the PNET example.
read -r roce iface < <(smcr -j device | python3 -c '
import json, sys
devs = json.load(sys.stdin)["devices"]
print(devs[0]["ib_dev"], devs[0]["net_dev"]) if devs else print("", "")')

section "PNET table"
if [ -n "$roce" ]; then
	show smc_pnet -a NET1 -I "$iface" -D "$roce"
else
	echo "(no RDMA device on this host, so no SMC-R device to name;"
	echo " 'rdma link add rxe0 type rxe netdev eth0' would make one)"
	echo "The loopback and the soft ISM device in one PNET, as SMC-D then needs:"
	show smc_pnet -a NET1 -I lo -D soft-ism
fi
show smc_pnet -s
show smcr device
show smcd device
echo "Unprivileged changes are refused:"
if command -v setpriv >/dev/null && [ "$(id -u)" -eq 0 ]; then
	show setpriv --inh-caps=-net_admin --bounding-set=-net_admin smc_pnet -a NET2 -I "${iface:-lo}"
fi

section "User EIDs"
show smcr ueid add SOME-EID
show smcr ueid show

section "Sockets: a test client registers INIT, LISTEN and connected sockets"
build/demo/tests/soft_client -s init listen 47001 connect 47002 >"$run_dir/client.out" &
client=$!
for _ in $(seq 100); do grep -qx ready "$run_dir/client.out" 2>/dev/null && break; sleep 0.05; done
show smcss -a
show smcss -l

section "Link groups and statistics"
show smcr linkgroup
show smcd stats
show smcd -j info

section "The soft data path: sockperf under smc_run"
# What failed of the data path: said where it happens, and make demo fails.
failed=()
demo_fail() { echo "demo: $*" >&2; failed+=("$*"); }
# The first port from 47100 on that nothing uses (another demo, a TIME_WAIT).
next_port() { # FROM
	local p=$1
	while [ -n "$(ss -Htan "sport = :$p" 2>/dev/null)" ]; do p=$((p + 1)); done
	port=$p
}
sp_server() { # [smc_run] sockperf server on $port, pid in $server; false if it does not listen
	"$@" sockperf sr --tcp -i 127.0.0.1 -p "$port" >"$run_dir/sr.out" 2>&1 &
	server=$!
	for _ in $(seq 200); do
		ss -ltn "sport = :$port" 2>/dev/null | grep -q LISTEN && return 0
		kill -0 "$server" 2>/dev/null || break
		sleep 0.05
	done
	demo_fail "${1:+$1 }sockperf sr does not listen on port $port: $(tail -n 1 "$run_dir/sr.out")"
	return 1
}
sp_stop() { kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; server=; next_port $((port + 1)); }
next_port 47100
sp_server smc_run
echo "\$ smc_run sockperf sr --tcp -i 127.0.0.1 -p $port &"
echo "\$ smc_run sockperf pp --tcp -i 127.0.0.1 -p $port -m 14 -t 3 --mps=2000000 &"
smc_run sockperf pp --tcp -i 127.0.0.1 -p "$port" -m 14 -t 3 --mps=2000000 >"$run_dir/pp.out" 2>&1 &
pp=$!
# until both ends show paired (a loaded machine starts sockperf slowly); the
# test runs for 3 s after its 2 s of warm-up
paired=0
for _ in $(seq 40); do
	[ "$(smcss -a 2>/dev/null | grep -c ":$port .* SMCD *$")" -ge 2 ] && { paired=1; break; }
	kill -0 "$pp" 2>/dev/null || break
	sleep 0.1
done
show smcss -a
show smcss -D
show smcd linkgroup
[ "$paired" -eq 1 ] ||
	demo_fail "the ping-pong's connection on port $port did not show as SMCD at both ends in smcss -a"
wait "$pp" || demo_fail "smc_run sockperf pp exited with $?: $(tail -n 1 "$run_dir/pp.out")"
grep -E 'percentile (50|99)\.000|dropped' "$run_dir/pp.out" ||
	demo_fail "smc_run sockperf pp printed no latency: $(tail -n 1 "$run_dir/pp.out")"
sp_stop
show smcd stats

section "Plain TCP against the soft SMC-D path (loopback, this machine)"
measure() { # label, then the prefix (empty or smc_run)
	local label=$1 lat tp
	shift
	sp_server "$@"
	lat=$("$@" sockperf pp --tcp -i 127.0.0.1 -p "$port" -m 14 -t 2 --mps=2000000 2>&1 |
		sed -n 's/.*percentile 50.000 = *\([0-9.]*\).*/\1/p')
	tp=$("$@" sockperf tp --tcp -i 127.0.0.1 -p "$port" -m 65000 -t 2 2>&1 |
		sed -n 's/.*BandWidth is [0-9.]* MBps (\([0-9.]*\) Mbps).*/\1/p')
	sp_stop
	printf '%-22s %14s %16s\n' "$label" "${lat:-?}" "${tp:-?}"
	[ -n "$lat" ] && [ -n "$tp" ] || demo_fail "sockperf ($label) gave no figure"
}
if command -v sockperf >/dev/null; then
	printf '%-22s %14s %16s\n' "" "pp 14B p50 (us)" "tp 64KB (Mbit/s)"
	measure "plain TCP"
	measure "smc_run (soft SMC-D)" smc_run
	echo "(sockperf reports half the round trip; bench/run.sh measures properly)"
fi

section "A support bundle (smc_dbg), first lines"
smc_dbg 2>&1 | head -n 25

section "Clean up"
show smc_pnet -f
show smcr ueid flush
kill "$client" 2>/dev/null
wait "$client" 2>/dev/null
client=
show smcss -a
if [ ${#failed[@]} -gt 0 ]; then
	section "The demo failed"
	printf 'demo: %s\n' "${failed[@]}"
	exit 1
fi
